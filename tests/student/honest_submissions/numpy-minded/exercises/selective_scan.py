"""Selective scan, numpy style: the parallel scan as a loop over levels (not over time)."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F


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
