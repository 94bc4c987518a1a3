# function: lstm_gru.lstm_cell
# mistake: only the input-side bias b_ih is added to the gate pre-activations; the hidden-side
#   bias b_hh is left out (PyTorch adds both)
# class: missing term
# confirmed: vs torch.nn.LSTMCell(4, 6) on x=randn(3,4), h,c=randn(3,6), float64: h max
#   |diff| 0.104, c max |diff| 0.226
import torch
def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    gates = x @ W_ih.T + h_prev @ W_hh.T + b_ih
    i, f, g, o = gates.chunk(4, dim=1)
    i = torch.sigmoid(i)
    f = torch.sigmoid(f)
    g = torch.tanh(g)
    o = torch.sigmoid(o)
    c = f * c_prev + i * g
    h = o * torch.tanh(c)
    return h, c
