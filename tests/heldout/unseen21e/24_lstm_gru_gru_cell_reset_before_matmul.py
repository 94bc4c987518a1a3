# function: lstm_gru.gru_cell
# mistake: the reset gate is applied to h before the matrix product, as in the notes
#   (W_hn (r * h) + b_hn), instead of PyTorch's r * (W_hn h + b_hn) that the exercise asks for
# class: wrong formula
# confirmed: vs torch.nn.GRUCell(4, 6) on x=randn(3,4), h=randn(3,6), float64: max |diff|
#   0.331
import torch
def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    gi = x @ W_ih.T + b_ih
    gh_rz = h_prev @ W_hh[:2 * H].T + b_hh[:2 * H]
    r = torch.sigmoid(gi[:, :H] + gh_rz[:, :H])
    z = torch.sigmoid(gi[:, H:2 * H] + gh_rz[:, H:2 * H])
    n = torch.tanh(gi[:, 2 * H:] + (r * h_prev) @ W_hh[2 * H:].T + b_hh[2 * H:])
    return (1 - z) * n + z * h_prev
