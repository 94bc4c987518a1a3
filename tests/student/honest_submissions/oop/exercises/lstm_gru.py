"""LSTM / GRU with small gate-splitting helper classes."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


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


# --- the labs: why gates, delayed recall -------------------------------------------------------


class _RecallModel:
    """A cell of the given kind run over x, from h0 or zero states; its readout is from h_T."""

    _CELL_KEYS = {
        "rnn": ("W_xh", "W_hh", "b_h"),
        "lstm": ("W_ih", "W_hh", "b_ih", "b_hh"),
        "gru": ("W_ih", "W_hh", "b_ih", "b_hh"),
    }

    def __init__(self, kind):
        if kind not in self._CELL_KEYS:
            raise ValueError(f"kind must be 'rnn', 'lstm' or 'gru', not {kind!r}")
        self.kind = kind

    def __repr__(self):
        return f"_RecallModel({self.kind!r})"

    @property
    def cell_keys(self):
        return self._CELL_KEYS[self.kind]

    @property
    def trainable(self):
        return self.cell_keys + ("W_y", "b_y")

    def last_hidden(self, x, h0, params):
        from .rnn import rnn_forward

        weights = [params[k] for k in self.cell_keys]
        if self.kind == "rnn":
            return rnn_forward(x, h0, *weights)[:, -1]
        if self.kind == "lstm":
            _, (h_T, _) = lstm_forward(x, h0, torch.zeros_like(h0), *weights)
            return h_T
        _, h_T = gru_forward(x, h0, *weights)
        return h_T

    def logits(self, params, x):
        W_hh = params["W_hh"]
        h0 = torch.zeros(x.shape[0], W_hh.shape[1], dtype=W_hh.dtype, device=x.device)
        return self.last_hidden(x, h0, params) @ params["W_y"].T + params["b_y"]


def input_gradient_norms(kind, x, h0, params):
    model = _RecallModel(kind)
    xs = x.detach().requires_grad_()
    with torch.enable_grad():
        (dx,) = torch.autograd.grad(model.last_hidden(xs, h0, params).sum(), xs)
    return torch.linalg.vector_norm(dx, dim=(0, 2))


def recall_batch(K, batch_size, lag, generator=None):
    M = K // 2
    first = torch.randint(M, (batch_size, 1), generator=generator)
    rest = torch.randint(M, K, (batch_size, lag), generator=generator)
    return torch.cat([first, rest], dim=1)


def recall_logits(kind, params, x):
    return _RecallModel(kind).logits(params, x)


def train_recall(kind, params, steps, batch_size, lag, lr=1e-2, generator=None):
    from .optimizers import AutogradTrainer
    from .rnn import softmax_cross_entropy

    model = _RecallModel(kind)
    K = params["W_y"].shape[0]
    dtype, device = params["W_y"].dtype, params["W_y"].device
    trainer = AutogradTrainer(params, model.trainable, lr)
    for _ in range(steps):
        tokens = recall_batch(K, batch_size, lag, generator).to(device)
        x = F.one_hot(tokens, num_classes=K).to(dtype)
        trainer.step(lambda p: softmax_cross_entropy(model.logits(p, x), tokens[:, 0]))
    return trainer.params, trainer.losses(dtype, device)
