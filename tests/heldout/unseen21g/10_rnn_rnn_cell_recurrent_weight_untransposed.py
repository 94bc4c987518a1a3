# function: rnn.rnn_cell
# mistake: the recurrent weight is applied as h_prev @ W_hh instead of h_prev @ W_hh.T; W_hh is
#   square, so the shapes fit and nothing fails
# class: transpose slip (square weight)
# confirmed: max |diff| 1.55 vs torch.nn.RNNCell on x=randn(3,4), h_prev=randn(3,5)
import torch


def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    return torch.tanh(x @ W_xh.T + h_prev @ W_hh + b_h)
