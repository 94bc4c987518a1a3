"""Mamba's selective scan with a parallel (Blelloch-style) linear scan (L5 §18)."""

from __future__ import annotations

import logging
import sys

import torch
import torch.nn.functional as F

DEBUG = False
log = logging.getLogger(__name__)


def _debug(*args):
    if DEBUG:
        print("[selective_scan]", *args, file=sys.stderr)


def discretize(delta, A, B):
    """A_bar = exp(delta * A) (ZOH), B_bar = delta * B (Euler)."""
    assert delta.dim() == 3 and A.dim() == 2 and B.dim() == 3, "delta (B,T,D), A (D,N), B (B,T,N)"
    delta_ = delta.unsqueeze(-1)  # (B, T, D, 1)
    A_bar = torch.exp(delta_ * A)  # (B, T, D, N)
    B_bar = delta_ * B.unsqueeze(2)  # (B, T, 1, N) -> (B, T, D, N)
    return A_bar, B_bar


def _scan_levels(a, b):
    """Iterative up-sweep / down-sweep: about 2*log2(T) levels of vectorised ops."""
    levels = []  # saved (a, b, T) of every level for the down-sweep
    while b.shape[1] > 1:
        T = b.shape[1]
        n = T // 2
        levels.append((a, b, T))
        a_even, a_odd = a[:, 0:2 * n:2], a[:, 1:2 * n:2]
        b_even, b_odd = b[:, 0:2 * n:2], b[:, 1:2 * n:2]
        # odd position absorbs its left neighbour -> half-length recurrence
        a, b = a_odd * a_even, a_odd * b_even + b_odd
    h = b  # length 1: already final
    for a_l, b_l, T in reversed(levels):
        full = torch.empty_like(b_l)
        full[:, 1::2] = h  # odd positions are final
        full[:, 0:1] = b_l[:, 0:1]
        # even positions finish from the odd one before them
        full[:, 2::2] = a_l[:, 2::2] * h[:, : (T - 1) // 2] + b_l[:, 2::2]
        h = full
    _debug(f"scan: {len(levels)} levels")
    return h


def linear_scan(a, b, h0=None):
    """h_t = a_t * h_{t-1} + b_t along axis 1, in O(log T) steps."""
    assert a.shape == b.shape, f"a {tuple(a.shape)} and b {tuple(b.shape)} must match"
    dtype = torch.promote_types(a.dtype, b.dtype)
    if h0 is not None:
        dtype = torch.promote_types(dtype, h0.dtype)
    a = a.to(dtype)
    b = b.to(dtype)
    if h0 is not None:
        first = a[:, :1] * h0.to(dtype).unsqueeze(1) + b[:, :1]  # fold h0 into the first input
        b = torch.cat([first, b[:, 1:]], dim=1)
    else:
        b = b.clone()  # never hand back (a view of) an argument
    return _scan_levels(a, b)


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    """S6: discretize, scan, read out with C, skip with D, gate with silu(z)."""
    assert u.shape == delta.shape, "u and delta must both be (B, T, D)"
    if delta_bias is not None:
        delta = delta + delta_bias  # (D,) broadcasts over (B, T, D)
    if delta_softplus:
        delta = F.softplus(delta)
    A_bar, B_bar = discretize(delta, A, B)
    inputs = B_bar * u.unsqueeze(-1)  # (B, T, D, N)
    states = linear_scan(A_bar, inputs)  # (B, T, D, N)
    y = (states * C.unsqueeze(2)).sum(dim=-1)  # contract over N
    if D is not None:
        y = y + D * u
    if z is not None:
        y = y * F.silu(z)
    log.debug("selective_scan y %s", tuple(y.shape))
    if return_last_state:
        return y, states[:, -1]
    return y
