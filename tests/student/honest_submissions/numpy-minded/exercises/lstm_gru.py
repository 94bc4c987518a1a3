"""LSTM and GRU, numpy style, reusing the helpers of rnn.py."""

from __future__ import annotations

import torch

try:
    from .rnn import linear, sigmoid
except ImportError:  # running this file directly: python exercises/lstm_gru.py
    from rnn import linear, sigmoid


def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    a = linear(x, W_ih, b_ih) + linear(h_prev, W_hh, b_hh)  # (B, 4H)
    i = sigmoid(a[:, 0:H])
    f = sigmoid(a[:, H:2 * H])
    g = torch.tanh(a[:, 2 * H:3 * H])
    o = sigmoid(a[:, 3 * H:4 * H])
    c = f * c_prev + i * g
    h = o * torch.tanh(c)
    return h, c


def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    B, T, D = x.shape
    H = h0.shape[1]
    hs = torch.zeros((B, T, H), dtype=torch.result_type(x, h0), device=x.device)
    h, c = h0, c0
    for t in range(T):
        h, c = lstm_cell(x[:, t, :], h, c, W_ih, W_hh, b_ih, b_hh)
        hs[:, t, :] = h
    return hs, (h, c)


def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    gx = linear(x, W_ih, b_ih)  # (B, 3H)
    gh = linear(h_prev, W_hh, b_hh)  # (B, 3H)
    r = sigmoid(gx[:, :H] + gh[:, :H])
    z = sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
    n = torch.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
    return (1 - z) * n + z * h_prev


def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    B, T, D = x.shape
    hs = torch.zeros((B, T, h0.shape[1]), dtype=torch.result_type(x, h0), device=x.device)
    h = h0
    for t in range(T):
        h = gru_cell(x[:, t, :], h, W_ih, W_hh, b_ih, b_hh)
        hs[:, t, :] = h
    return hs, h


if __name__ == "__main__":
    torch.manual_seed(1)
    D, H = 3, 4
    ref = torch.nn.GRUCell(D, H)
    x, h = torch.randn(2, D), torch.randn(2, H)
    with torch.no_grad():
        mine = gru_cell(x, h, ref.weight_ih, ref.weight_hh, ref.bias_ih, ref.bias_hh)
        print("gru_cell max err vs nn.GRUCell:", (mine - ref(x, h)).abs().max().item())
