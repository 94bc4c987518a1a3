# function: lstm_gru.lstm_cell
# mistake: the stacked gate blocks are read in the order input, forget, output, cell (as in
#   some other libraries) instead of PyTorch's input, forget, cell, output, so the candidate
#   and the output gate swap places
# class: mixing up gates
# confirmed: vs torch.nn.LSTMCell(4, 6) on x=randn(3,4), h,c=randn(3,6), float64: h max
#   |diff| 0.522, c max |diff| 0.655
import torch
def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    gates = x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    H = h_prev.shape[1]
    i = torch.sigmoid(gates[:, 0:H])
    f = torch.sigmoid(gates[:, H:2 * H])
    o = torch.sigmoid(gates[:, 2 * H:3 * H])
    g = torch.tanh(gates[:, 3 * H:4 * H])
    c = f * c_prev + i * g
    h = o * torch.tanh(c)
    return h, c
