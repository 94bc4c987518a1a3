"""Selective scan, numpy style: the parallel scan as a loop over levels (not over time)."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

try:
    from .rnn import linear
except ImportError:  # running this file directly
    from rnn import linear


def discretize(delta, A, B):
    Bsz, T, D = delta.shape
    N = A.shape[1]
    dA = delta.reshape(Bsz, T, D, 1) * A.reshape(1, 1, D, N)
    A_bar = torch.exp(dA)  # (B, T, D, N)
    B_bar = delta.reshape(Bsz, T, D, 1) * B.reshape(Bsz, T, 1, N)  # (B, T, D, N)
    return A_bar, B_bar


def linear_scan(a, b, h0=None):
    dtype = torch.result_type(a, b) if h0 is None else torch.promote_types(torch.result_type(a, b), h0.dtype)
    h = b.to(dtype).clone()  # the output, updated in place level by level
    aa = a.to(dtype)
    T = h.shape[1]
    if h0 is not None:
        h[:, 0] = h[:, 0] + aa[:, 0] * h0.to(dtype)
    # up-sweep: position-index arrays like a numpy stride trick
    n_levels = int(math.floor(math.log2(T))) if T > 1 else 0
    coefs = []  # coefficient of each level, shape (B, n_l, ...)
    idx_levels = []
    idx = torch.arange(T, device=h.device)
    coef = aa
    for _ in range(n_levels):
        n = idx.shape[0] // 2
        left, right = idx[0:2 * n:2], idx[1:2 * n:2]
        h[:, right] = h[:, right] + coef[:, 1:2 * n:2] * h[:, left]
        coefs.append(coef)
        idx_levels.append(idx)
        coef = coef[:, 1:2 * n:2] * coef[:, 0:2 * n:2]
        idx = right
    # down-sweep: every even position finishes from the (now final) one before it
    for coef, idx in zip(reversed(coefs), reversed(idx_levels)):
        n_even = idx[2::2].shape[0]
        if n_even:
            h[:, idx[2::2]] = h[:, idx[2::2]] + coef[:, 2::2] * h[:, idx[1:2 * n_even:2]]
    return h


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    if delta_bias is not None:
        delta = delta + delta_bias.reshape(1, 1, -1)
    if delta_softplus:
        delta = F.softplus(delta)
    A_bar, B_bar = discretize(delta, A, B)
    x = B_bar * u[:, :, :, None]  # (B, T, D, N)
    h = linear_scan(A_bar, x)  # (B, T, D, N)
    y = (h * C[:, :, None, :]).sum(axis=-1)  # (B, T, D)
    if D is not None:
        y = y + u * D[None, None, :]
    if z is not None:
        y = y * F.silu(z)
    if return_last_state:
        return y, h[:, -1].clone()
    return y


# --- the lab: selective copying ------------------------------------------------------------------

COPY_CONTEXT, COPY_COUNT = 16, 4  # context positions, data tokens among them (and outputs)
SELECTIVE_ONLY = ["W_delta", "W_B", "W_C"]  # what the time-invariant model does not use


def copy_batch(M, batch_size, generator=None):
    B, T, n = batch_size, COPY_CONTEXT, COPY_COUNT
    positions = torch.rand(B, T, generator=generator).argsort(dim=1)[:, :n].sort(dim=1).values
    data = torch.randint(1, M + 1, (B, n), generator=generator)
    tokens = torch.zeros(B, T + n, dtype=torch.long).scatter(1, positions, data)
    tokens[:, T:] = M + 1 + torch.arange(n)
    return tokens, data - 1


def copy_logits(params, tokens, selective=True):
    Bsz, T = tokens.shape
    D = params["embedding"].shape[1]
    N = params["A_log"].shape[1]
    u = params["embedding"][tokens.reshape(-1)].reshape(Bsz, T, D)  # lookup
    if selective:
        delta = linear(u, params["W_delta"], params["b_delta"])  # (B, T, D)
        Bm = linear(u, params["W_B"], params["b_B"])  # (B, T, N)
        Cm = linear(u, params["W_C"], params["b_C"])  # (B, T, N)
    else:  # the same constants at every step, like np.broadcast_to
        delta = torch.broadcast_to(params["b_delta"], (Bsz, T, D))
        Bm = torch.broadcast_to(params["b_B"], (Bsz, T, N))
        Cm = torch.broadcast_to(params["b_C"], (Bsz, T, N))
    A = -torch.exp(params["A_log"])  # (D, N), negative
    y = selective_scan(u, delta, A, Bm, Cm, params["D"], delta_softplus=True)  # (B, T, D)
    return linear(y[:, T - COPY_COUNT:, :], params["W_out"], params["b_out"])  # (B, COPY_COUNT, M)


def train_selective_copy(params, steps, batch_size, selective=True, lr=1e-3, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    M = params["W_out"].shape[0]
    dtype, device = params["W_out"].dtype, params["W_out"].device
    names = [k for k in params if selective or k not in SELECTIVE_ONLY]
    theta = {k: v.clone() for k, v in params.items()}
    mem = {k: {} for k in names}
    losses = torch.zeros(steps, dtype=dtype, device=device)
    for s in range(steps):
        tokens, targets = copy_batch(M, batch_size, generator)
        tokens, targets = tokens.to(device), targets.to(device)
        leaves = {k: theta[k].detach().requires_grad_(True) for k in names}
        with torch.enable_grad():
            logits = copy_logits({**theta, **leaves}, tokens, selective)  # (B, COPY_COUNT, M)
            loss = softmax_cross_entropy(logits.reshape(-1, M), targets.reshape(-1))
            grads = torch.autograd.grad(loss, [leaves[k] for k in names])
        for k, dk in zip(names, grads):
            theta[k], mem[k] = adam(theta[k], dk, mem[k], lr=lr)
        losses[s] = loss.detach()
    return theta, losses


if __name__ == "__main__":
    torch.manual_seed(0)
    np.random.seed(0)
    a = torch.from_numpy(np.random.uniform(-1.5, 1.5, size=(1, 37, 2)))
    b = torch.randn(1, 37, 2, dtype=torch.float64)
    ref, hh = [], torch.zeros(1, 2, dtype=torch.float64)
    for t in range(37):
        hh = a[:, t] * hh + b[:, t]
        ref.append(hh)
    print("scan max err:", (linear_scan(a, b) - torch.stack(ref, 1)).abs().max().item())
