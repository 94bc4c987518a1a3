# function: lstm_gru.lstm_cell
# mistake: one sigmoid is applied to all 4H pre-activations before splitting, so the cell
#   candidate g is sigmoid(.) in (0, 1) instead of tanh(.) in (-1, 1)
# class: wrong nonlinearity
# confirmed: max |diff| 0.51 in h and 0.81 in c vs torch.nn.LSTMCell on x=randn(3,4), H=5
import torch


def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    gates = torch.sigmoid(x @ W_ih.T + h_prev @ W_hh.T + b_ih + b_hh)
    i = gates[:, 0:H]
    f = gates[:, H:2 * H]
    g = gates[:, 2 * H:3 * H]
    o = gates[:, 3 * H:4 * H]
    c = f * c_prev + i * g
    h = o * torch.tanh(c)
    return h, c
