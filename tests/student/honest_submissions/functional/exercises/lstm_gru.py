"""LSTM / GRU as pure functions folded over time."""

from __future__ import annotations

import itertools
from functools import reduce

import torch
import torch.nn.functional as F

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


# --- the lab: why gates ------------------------------------------------------------------------

_GATE_KEYS = ("W_ih", "W_hh", "b_ih", "b_hh")
_CELL_KEYS = {"rnn": ("W_xh", "W_hh", "b_h"), "lstm": _GATE_KEYS, "gru": _GATE_KEYS}


def _last_hidden(kind, x, h0, params):
    """h_T of the chosen cell run over x from h0 (the LSTM's cell state from zeros)."""
    from .rnn import rnn_forward

    weights = [params[k] for k in _CELL_KEYS[kind]]
    match kind:
        case "rnn":
            return rnn_forward(x, h0, *weights)[:, -1]
        case "lstm":
            return lstm_forward(x, h0, torch.zeros_like(h0), *weights)[1][0]
        case "gru":
            return gru_forward(x, h0, *weights)[1]
    raise ValueError(f"kind must be 'rnn', 'lstm' or 'gru', not {kind!r}")


def input_gradient_norms(kind, x, h0, params):
    xs = x.detach().requires_grad_()
    with torch.enable_grad():
        (dx,) = torch.autograd.grad(_last_hidden(kind, xs, h0, params).sum(), xs)
    return dx.pow(2).sum((0, 2)).sqrt()


# --- the lab: delayed recall -------------------------------------------------------------------


def recall_batch(K, batch_size, lag, generator=None):
    M = K // 2
    first = torch.randint(M, (batch_size, 1), generator=generator)
    rest = torch.randint(M, K, (batch_size, lag), generator=generator)
    return torch.cat([first, rest], dim=1)


def recall_logits(kind, params, x):
    W_hh = params["W_hh"]
    h0 = torch.zeros(x.shape[0], W_hh.shape[1], dtype=W_hh.dtype, device=x.device)
    return _last_hidden(kind, x, h0, params) @ params["W_y"].T + params["b_y"]


def train_recall(kind, params, steps, batch_size, lag, lr=1e-2, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    K = params["W_y"].shape[0]
    dtype, device = params["W_y"].dtype, params["W_y"].device
    keys = _CELL_KEYS[kind] + ("W_y", "b_y")

    def loss_at(theta):
        tokens = recall_batch(K, batch_size, lag, generator).to(device)
        logits = recall_logits(kind, theta, F.one_hot(tokens, K).to(dtype))
        return softmax_cross_entropy(logits, tokens[:, 0])

    def step(carry, _):
        theta, states, losses = carry
        leaves = {k: theta[k].detach().requires_grad_() for k in keys}
        with torch.enable_grad():
            loss = loss_at({**theta, **leaves})
            grads = dict(zip(keys, torch.autograd.grad(loss, [leaves[k] for k in keys])))
        stepped = {k: adam(theta[k], grads[k], states[k], lr=lr) for k in keys}
        theta = {**theta, **{k: w for k, (w, _) in stepped.items()}}
        return theta, {k: s for k, (_, s) in stepped.items()}, losses + (loss.detach(),)

    init = ({k: v.clone() for k, v in params.items()}, {k: {} for k in keys}, ())
    theta, _, losses = reduce(step, range(steps), init)
    losses = torch.stack(losses).to(dtype) if losses else torch.zeros(0, dtype=dtype, device=device)
    return theta, losses
