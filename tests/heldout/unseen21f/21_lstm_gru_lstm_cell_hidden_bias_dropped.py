# function: lstm_gru.lstm_cell
# mistake: only the input-side bias b_ih is added; the hidden-side bias b_hh is left out of the
#   gate pre-activations
# class: missing term
# confirmed: max |diff| 0.167 vs torch.nn.LSTMCell (random bias_hh) on x=randn(3,4), H=5, float64
def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    gates = x @ W_ih.T + h_prev @ W_hh.T + b_ih
    i, f, g, o = torch.chunk(gates, 4, dim=1)
    i = torch.sigmoid(i)
    f = torch.sigmoid(f)
    g = torch.tanh(g)
    o = torch.sigmoid(o)
    c = f * c_prev + i * g
    h = o * torch.tanh(c)
    return h, c
