"""LSTM / GRU as pure functions folded over time."""

from __future__ import annotations

import itertools

import torch

_affine = lambda x, W, b: x @ W.T + b


def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = (_affine(x, W_ih, b_ih) + _affine(h_prev, W_hh, b_hh)).chunk(4, -1)
    i, f, o = map(torch.sigmoid, (i, f, o))
    c = f * c_prev + i * torch.tanh(g)
    return o * torch.tanh(c), c


def _fold(step, init, xs):
    return list(itertools.accumulate(xs, step, initial=init))[1:]


def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    states = _fold(lambda hc, x_t: lstm_cell(x_t, *hc, W_ih, W_hh, b_ih, b_hh), (h0, c0), x.unbind(1))
    return torch.stack([h for h, _ in states], 1), states[-1]


def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    (ir, iz, i_n), (hr, hz, hn) = (_affine(a, W, b).chunk(3, -1) for a, W, b in ((x, W_ih, b_ih), (h_prev, W_hh, b_hh)))
    r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
    n = torch.tanh(i_n + r * hn)
    return torch.lerp(n, h_prev, z)  # (1 - z) n + z h


def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    hs = _fold(lambda h, x_t: gru_cell(x_t, h, W_ih, W_hh, b_ih, b_hh), h0, x.unbind(1))
    return torch.stack(hs, 1), hs[-1]
