# function: lstm_gru.lstm_cell
# mistake: the stacked gate blocks are read in the order i, f, o, g (as in some blog posts)
#   instead of PyTorch's i, f, g, o, so the cell candidate and the output gate are swapped
# class: wrong formula
# confirmed: max |diff| 0.715 vs torch.nn.LSTMCell on x=randn(3,4), H=5, float64 (h and c)
def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    z = x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    i = torch.sigmoid(z[:, 0:H])
    f = torch.sigmoid(z[:, H:2 * H])
    o = torch.sigmoid(z[:, 2 * H:3 * H])
    g = torch.tanh(z[:, 3 * H:4 * H])
    c = f * c_prev + i * g
    h = o * torch.tanh(c)
    return h, c
