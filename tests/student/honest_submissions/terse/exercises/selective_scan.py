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
