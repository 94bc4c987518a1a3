"""Vanilla RNN (terse)."""
from __future__ import annotations

import torch
import torch.nn.functional as F


def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    return torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h)


def rnn_forward(x, h0, W_xh, W_hh, b_h):
    h, hs = h0, []
    for t in range(x.shape[1]):
        h = rnn_cell(x[:, t], h, W_xh, W_hh, b_h)
        hs.append(h)
    return torch.stack(hs, dim=1)


def softmax_cross_entropy(logits, targets):
    m = logits.amax(dim=-1, keepdim=True)
    lse = (logits - m).exp().sum(-1).log() + m.squeeze(-1)
    return (lse - logits.gather(1, targets[:, None]).squeeze(1)).mean()


def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h, W_hy, b_y = (params[k] for k in ("W_xh", "W_hh", "b_h", "W_hy", "b_y"))
    B, T, _ = x.shape
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    o = hs @ W_hy.T + b_y
    C = o.shape[-1]
    loss = softmax_cross_entropy(o.reshape(-1, C), targets.reshape(-1)) * T
    dO = (torch.softmax(o, -1) - F.one_hot(targets, C).to(o.dtype)) / B
    dW_hy = torch.einsum("btc,bth->ch", dO, hs)
    db_y = dO.sum((0, 1))
    h_prev = torch.cat([h0[:, None], hs[:, :-1]], 1)
    dW_xh, dW_hh, db_h = torch.zeros_like(W_xh), torch.zeros_like(W_hh), torch.zeros_like(b_h)
    da_next = torch.zeros_like(hs[:, 0])
    for t in reversed(range(T)):
        da = (dO[:, t] @ W_hy + da_next @ W_hh) * (1 - hs[:, t] ** 2)
        dW_xh = dW_xh + da.T @ x[:, t]
        dW_hh = dW_hh + da.T @ h_prev[:, t]
        db_h = db_h + da.sum(0)
        da_next = da
    grads = {"W_xh": dW_xh, "W_hh": dW_hh, "b_h": db_h, "W_hy": dW_hy, "b_y": db_y, "h0": da_next @ W_hh}
    return loss, grads


def truncated_bptt(x, targets, h0, params, chunk):
    T = x.shape[1]
    h, loss, grads = h0, None, None
    for s in range(0, T, chunk):
        e = min(s + chunk, T)
        l, g = rnn_bptt(x[:, s:e], targets[:, s:e], h, params)
        if grads is None:
            loss, grads = l, dict(g)
        else:
            loss = loss + l
            grads = {k: (v if k == "h0" else v + g[k]) for k, v in grads.items()}
        h = rnn_forward(x[:, s:e], h, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
    return loss, grads, h


def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    f = rnn_forward(x, h0_fwd, params_fwd["W_xh"], params_fwd["W_hh"], params_fwd["b_h"])
    b = rnn_forward(x.flip(1), h0_bwd, params_bwd["W_xh"], params_bwd["W_hh"], params_bwd["b_h"]).flip(1)
    return torch.cat([f, b], dim=-1)


def greedy_decode(params, embedding, h0, start_token, steps):
    h, tok, out = h0, start_token, []
    for _ in range(steps):
        h = rnn_cell(embedding[tok], h, params["W_xh"], params["W_hh"], params["b_h"])
        tok = torch.argmax(h @ params["W_hy"].T + params["b_y"], dim=-1)
        out.append(tok)
    if not out:
        return torch.zeros(h0.shape[0], 0, dtype=torch.long, device=h0.device)
    return torch.stack(out, dim=1)


PARAM_KEYS = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")


def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import adam, clip_grad_norm

    p, st, V = {k: params[k] for k in PARAM_KEYS}, {k: {} for k in PARAM_KEYS}, params["W_xh"].shape[1]
    L = tokens.shape[0] // batch_size
    rows, W = tokens[: batch_size * L].reshape(batch_size, L).to(p["W_xh"].device), (L - 1) // seq_len
    h, losses = None, []
    for s in range(steps):
        w = s % W
        if w == 0:
            h = p["W_hh"].new_zeros(batch_size, p["W_hh"].shape[0])
        win = rows[:, w * seq_len:(w + 1) * seq_len + 1]
        loss, g, h = truncated_bptt(F.one_hot(win[:, :-1], V).to(p["W_xh"].dtype), win[:, 1:], h, p, seq_len)
        g, _ = clip_grad_norm([g[k] for k in PARAM_KEYS], clip)
        for k, gk in zip(PARAM_KEYS, g):
            p[k], st[k] = adam(p[k], gk, st[k], lr=lr)
        losses.append(loss / seq_len)
    out = torch.stack(losses) if losses else p["W_xh"].new_zeros(0)
    return {k: v.clone() for k, v in p.items()}, out


def sample_chars(params, start_token, steps, temperature=1.0, generator=None):
    W_xh, W_hh = params["W_xh"], params["W_hh"]
    h, tok, out = W_hh.new_zeros(start_token.shape[0], W_hh.shape[0]), start_token, []
    for _ in range(steps):
        h = rnn_cell(F.one_hot(tok, W_xh.shape[1]).to(W_xh.dtype), h, W_xh, W_hh, params["b_h"])
        tok = torch.multinomial(torch.softmax((h @ params["W_hy"].T + params["b_y"]) / temperature, -1), 1, generator=generator)[:, 0]
        out.append(tok)
    return torch.stack(out, 1) if out else torch.zeros(start_token.shape[0], 0, dtype=torch.long, device=start_token.device)
