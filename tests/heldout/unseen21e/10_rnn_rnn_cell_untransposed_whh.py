# function: rnn.rnn_cell
# mistake: the recurrent weight is applied as h_prev @ W_hh instead of h_prev @ W_hh.T; the
#   shapes fit because W_hh is square, so only the values are wrong (right for symmetric W_hh)
# class: transpose
# confirmed: max |diff| 1.18 vs torch.nn.RNNCell(4, 6) (weights copied, b_h = bias_ih +
#   bias_hh) on x=randn(3,4), h=randn(3,6), float64
import torch
def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    return torch.tanh(x @ W_xh.T + h_prev @ W_hh + b_h)
