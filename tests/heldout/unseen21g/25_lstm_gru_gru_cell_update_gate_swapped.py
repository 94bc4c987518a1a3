# function: lstm_gru.gru_cell
# mistake: the interpolation is written h' = z * n + (1 - z) * h (the other common convention)
#   instead of PyTorch's (1 - z) * n + z * h
# class: swapped coefficients
# confirmed: max |diff| 1.73 vs torch.nn.GRUCell on x=randn(3,4), H=5
import torch


def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    gi = x @ W_ih.T + b_ih
    gh = h_prev @ W_hh.T + b_hh
    H = h_prev.shape[-1]
    r = torch.sigmoid(gi[:, :H] + gh[:, :H])
    z = torch.sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
    n = torch.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    return z * n + (1 - z) * h_prev
