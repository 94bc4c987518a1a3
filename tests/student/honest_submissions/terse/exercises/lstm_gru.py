"""LSTM and GRU (terse)."""
from __future__ import annotations

import torch


def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = (x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    h, c, hs = h0, c0, []
    for t in range(x.shape[1]):
        h, c = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, 1), (h, c)


def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    ir, iz, in_ = (x @ W_ih.T + b_ih).chunk(3, -1)
    hr, hz, hn = (h_prev @ W_hh.T + b_hh).chunk(3, -1)
    r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
    n = torch.tanh(in_ + r * hn)
    return (1 - z) * n + z * h_prev


def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h, hs = h0, []
    for t in range(x.shape[1]):
        h = gru_cell(x[:, t], h, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, 1), h
