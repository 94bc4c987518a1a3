# function: lstm_gru.gru_cell
# mistake: the interpolation weights are swapped, h' = z * n + (1 - z) * h, so an update gate
#   near 1 takes the candidate instead of keeping the old state
# class: mixing up gates
# confirmed: vs torch.nn.GRUCell(4, 6) on x=randn(3,4), h=randn(3,6), float64: max |diff|
#   1.83
import torch
def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    gi = x @ W_ih.T + b_ih
    gh = h_prev @ W_hh.T + b_hh
    i_r, i_z, i_n = gi.chunk(3, dim=1)
    h_r, h_z, h_n = gh.chunk(3, dim=1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return z * n + (1 - z) * h_prev
