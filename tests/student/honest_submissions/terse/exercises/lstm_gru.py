"""LSTM and GRU (terse)."""
from __future__ import annotations

import torch
import torch.nn.functional as F


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


def _last_h(kind, x, h0, p):
    from .rnn import rnn_forward

    if kind == "rnn":
        return rnn_forward(x, h0, p["W_xh"], p["W_hh"], p["b_h"])[:, -1]
    if kind == "lstm":
        return lstm_forward(x, h0, torch.zeros_like(h0), p["W_ih"], p["W_hh"], p["b_ih"], p["b_hh"])[1][0]
    if kind == "gru":
        return gru_forward(x, h0, p["W_ih"], p["W_hh"], p["b_ih"], p["b_hh"])[1]
    raise ValueError(f"kind must be 'rnn', 'lstm' or 'gru', got {kind!r}")


def input_gradient_norms(kind, x, h0, params):
    xs = x.detach().clone().requires_grad_()
    with torch.enable_grad():
        (g,) = torch.autograd.grad(_last_h(kind, xs, h0, params).sum(), xs)
    return g.pow(2).sum(dim=(0, 2)).sqrt()


def recall_batch(K, batch_size, lag, generator=None):
    M = K // 2
    first = torch.randint(M, (batch_size, 1), generator=generator)
    rest = torch.randint(M, K, (batch_size, lag), generator=generator)
    return torch.cat([first, rest], dim=1)


def recall_logits(kind, params, x):
    h0 = x.new_zeros(x.shape[0], params["W_hh"].shape[1])
    return _last_h(kind, x, h0, params) @ params["W_y"].T + params["b_y"]


def train_recall(kind, params, steps, batch_size, lag, lr=1e-2, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    K, w = params["W_y"].shape[0], params["W_y"]
    p, st, losses = {k: v.detach().clone() for k, v in params.items()}, {k: {} for k in params}, []
    for _ in range(steps):
        tok = recall_batch(K, batch_size, lag, generator).to(w.device)
        leaves = {k: v.detach().requires_grad_() for k, v in p.items()}
        with torch.enable_grad():
            loss = softmax_cross_entropy(recall_logits(kind, leaves, F.one_hot(tok, K).to(w.dtype)), tok[:, 0])
            gs = torch.autograd.grad(loss, list(leaves.values()), allow_unused=True)
        for (k, v), g in zip(leaves.items(), gs):
            p[k], st[k] = adam(v.detach(), torch.zeros_like(v) if g is None else g, st[k], lr=lr)
        losses.append(loss.detach())
    return p, torch.stack(losses) if losses else w.new_zeros(0)
