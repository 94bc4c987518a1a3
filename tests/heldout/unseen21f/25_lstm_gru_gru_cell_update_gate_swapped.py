# function: lstm_gru.gru_cell
# mistake: the interpolation is the wrong way round, h' = z * n + (1 - z) * h, so z near 1 takes
#   the candidate instead of keeping the old state
# class: wrong formula
# confirmed: max |diff| 0.957 vs torch.nn.GRUCell on x=randn(3,4), H=5, float64
def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    x_r, x_z, x_n = (x @ W_ih.T + b_ih).chunk(3, dim=-1)
    h_r, h_z, h_n = (h_prev @ W_hh.T + b_hh).chunk(3, dim=-1)
    r = torch.sigmoid(x_r + h_r)
    z = torch.sigmoid(x_z + h_z)
    n = torch.tanh(x_n + r * h_n)
    h = z * n + (1 - z) * h_prev
    return h
