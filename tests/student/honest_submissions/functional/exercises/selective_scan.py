"""Selective scan, functional: the scan is a recursion on an associative combine."""

from __future__ import annotations

from functools import reduce

import torch
import torch.nn.functional as F


def discretize(delta, A, B):
    d = delta[..., None]
    return (d * A).exp(), d * B[:, :, None]


_combine = lambda left, right: (right[0] * left[0], right[0] * left[1] + right[1])


def _interleave(even, odd):
    """[e0, o0, e1, o1, ...] along axis 1 (even may have one more element)."""
    out = torch.empty((even.shape[0], even.shape[1] + odd.shape[1]) + even.shape[2:], dtype=even.dtype, device=even.device)
    out[:, 0::2], out[:, 1::2] = even, odd
    return out


def _scan(a, b):
    T = a.shape[1]
    if T == 1:
        return b.clone()
    n = T // 2
    pa, pb = _combine((a[:, 0:2 * n:2], b[:, 0:2 * n:2]), (a[:, 1::2], b[:, 1::2]))
    odd = _scan(pa, pb)
    even = torch.cat([b[:, :1], a[:, 2::2] * odd[:, : (T - 1) // 2] + b[:, 2::2]], 1)
    return _interleave(even, odd)


def linear_scan(a, b, h0=None):
    dt = reduce(torch.promote_types, [t.dtype for t in (a, b, h0) if t is not None])
    a, b = a.to(dt), b.to(dt)
    if h0 is not None:
        b = torch.cat([a[:, :1] * h0.to(dt)[:, None] + b[:, :1], b[:, 1:]], 1)
    return _scan(a, b)


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    delta = delta if delta_bias is None else delta + delta_bias
    delta = F.softplus(delta) if delta_softplus else delta
    A_bar, B_bar = discretize(delta, A, B)
    h = linear_scan(A_bar, B_bar * u[..., None])
    y = (h * C[:, :, None]).sum(-1)
    y = y if D is None else y + D * u
    y = y if z is None else y * F.silu(z)
    return (y, h[:, -1]) if return_last_state else y
