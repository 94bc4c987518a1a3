"""Selective scan (terse)."""
from __future__ import annotations

import torch
import torch.nn.functional as F


def discretize(delta, A, B):
    d = delta[..., None]
    return torch.exp(d * A), d * B[:, :, None, :]


def _scan(a, b):
    T = a.shape[1]
    if T == 1:
        return b
    n = T // 2
    ae, ao, be, bo = a[:, 0:2 * n:2], a[:, 1::2], b[:, 0:2 * n:2], b[:, 1::2]
    h_odd = _scan(ao * ae, ao * be + bo)
    h = torch.empty_like(b)
    h[:, 1::2] = h_odd
    h[:, 0:1] = b[:, 0:1]
    h[:, 2::2] = a[:, 2::2] * h_odd[:, : (T - 1) // 2] + b[:, 2::2]
    return h


def linear_scan(a, b, h0=None):
    dt = torch.promote_types(a.dtype, b.dtype) if h0 is None else torch.promote_types(torch.promote_types(a.dtype, b.dtype), h0.dtype)
    a, b = a.to(dt), b.to(dt)
    if h0 is not None:
        b = torch.cat([a[:, :1] * h0.to(dt)[:, None] + b[:, :1], b[:, 1:]], dim=1)
    return _scan(a, b).clone() if a.shape[1] == 1 else _scan(a, b)


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    if delta_bias is not None:
        delta = delta + delta_bias
    if delta_softplus:
        delta = F.softplus(delta)
    A_bar, B_bar = discretize(delta, A, B)
    h = linear_scan(A_bar, B_bar * u[..., None])
    y = (h * C[:, :, None, :]).sum(-1)
    if D is not None:
        y = y + D * u
    if z is not None:
        y = y * F.silu(z)
    return (y, h[:, -1]) if return_last_state else y


COPY_CONTEXT, COPY_COUNT = 16, 4


def copy_batch(M, batch_size, generator=None):
    B, T, n = batch_size, COPY_CONTEXT, COPY_COUNT
    positions = torch.rand(B, T, generator=generator).argsort(dim=1)[:, :n].sort(dim=1).values
    data = torch.randint(1, M + 1, (B, n), generator=generator)
    tokens = torch.zeros(B, T + n, dtype=torch.long).scatter(1, positions, data)
    tokens[:, T:] = M + 1 + torch.arange(n)
    return tokens, data - 1


def copy_logits(params, tokens, selective=True):
    u = params["embedding"][tokens]
    Bsz, T, _ = u.shape
    lin = lambda w, b: u @ params[w].T + params[b] if selective else params[b].expand(Bsz, T, -1)
    y = selective_scan(u, lin("W_delta", "b_delta"), -torch.exp(params["A_log"]), lin("W_B", "b_B"), lin("W_C", "b_C"), params["D"], delta_softplus=True)
    return y[:, -COPY_COUNT:] @ params["W_out"].T + params["b_out"]


def train_selective_copy(params, steps, batch_size, selective=True, lr=1e-3, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    M, dev = params["W_out"].shape[0], params["W_out"].device
    p = {k: v.detach().clone() for k, v in params.items()}
    used = [k for k in p if selective or k not in ("W_delta", "W_B", "W_C")]
    st, losses = {k: {} for k in used}, []
    for _ in range(steps):
        tokens, targets = (t.to(dev) for t in copy_batch(M, batch_size, generator))
        leaves = {k: p[k].detach().requires_grad_() if k in used else p[k] for k in p}
        with torch.enable_grad():
            loss = softmax_cross_entropy(copy_logits(leaves, tokens, selective).reshape(-1, M), targets.reshape(-1))
            gs = torch.autograd.grad(loss, [leaves[k] for k in used], allow_unused=True)
        for k, g in zip(used, gs):
            p[k], st[k] = adam(p[k], torch.zeros_like(p[k]) if g is None else g, st[k], lr=lr)
        losses.append(loss.detach())
    return p, torch.stack(losses) if losses else params["W_out"].new_zeros(0)
