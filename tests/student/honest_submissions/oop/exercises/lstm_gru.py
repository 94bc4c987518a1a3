"""LSTM / GRU with small gate-splitting helper classes."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class _Weights:
    W_ih: torch.Tensor
    W_hh: torch.Tensor
    b_ih: torch.Tensor
    b_hh: torch.Tensor

    def input_part(self, x):
        return x @ self.W_ih.T + self.b_ih

    def hidden_part(self, h):
        return h @ self.W_hh.T + self.b_hh


class _Recurrence:
    """Runs a cell over time; subclasses say what the carried state is."""

    def __init__(self, weights):
        self._w = weights

    def cell(self, x, state):
        raise NotImplementedError

    def output(self, state):
        return state

    def __call__(self, x, state):
        outs = []
        for t in range(x.shape[1]):
            state = self.cell(x[:, t], state)
            outs.append(self.output(state))
        return torch.stack(outs, dim=1), state


class _LSTM(_Recurrence):
    def cell(self, x, state):
        h, c = state
        i, f, g, o = (self._w.input_part(x) + self._w.hidden_part(h)).chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_new), c_new

    def output(self, state):
        return state[0]


class _GRU(_Recurrence):
    def cell(self, x, h):
        ir, iz, in_ = self._w.input_part(x).chunk(3, dim=-1)
        hr, hz, hn = self._w.hidden_part(h).chunk(3, dim=-1)
        r = torch.sigmoid(ir + hr)
        z = torch.sigmoid(iz + hz)
        n = torch.tanh(in_ + r * hn)
        return (1 - z) * n + z * h


def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    return _LSTM(_Weights(W_ih, W_hh, b_ih, b_hh)).cell(x, (h_prev, c_prev))


def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    hs, (h, c) = [], (h0, c0)
    for t in range(x.shape[1]):
        h, c = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, 1), (h, c)


def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    return _GRU(_Weights(W_ih, W_hh, b_ih, b_hh)).cell(x, h_prev)


def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h, hs = h0, []
    for t in range(x.shape[1]):
        h = gru_cell(x[:, t], h, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, 1), h
