# function: lstm_gru.lstm_cell
# mistake: the stacked gates are unpacked in the order i, f, o, g (as many textbooks list them)
#   instead of PyTorch's i, f, g, o, so the candidate and the output gate trade blocks
# class: gate layout
# confirmed: max |diff| 0.72 in h and 1.15 in c vs torch.nn.LSTMCell on x=randn(3,4), H=5
import torch


def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    z = x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    i, f, o, g = z.chunk(4, dim=1)
    i = torch.sigmoid(i)
    f = torch.sigmoid(f)
    o = torch.sigmoid(o)
    g = torch.tanh(g)
    c = f * c_prev + i * g
    h = o * torch.tanh(c)
    return h, c
