"""Mamba's selective scan with a parallel (Blelloch-style) linear scan (L5 §18)."""

from __future__ import annotations

import logging
import sys
import time

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


# --- the lab: selective copying ------------------------------------------------------------------

COPY_CONTEXT, COPY_COUNT = 16, 4  # context positions, data tokens among them (and outputs)
_LTI_UNUSED = ("W_delta", "W_B", "W_C")  # not used by the time-invariant model


def copy_batch(M, batch_size, generator=None):
    """Draw selective-copying sequences (given with the exercise, copied unchanged)."""
    B, T, n = batch_size, COPY_CONTEXT, COPY_COUNT
    positions = torch.rand(B, T, generator=generator).argsort(dim=1)[:, :n].sort(dim=1).values
    data = torch.randint(1, M + 1, (B, n), generator=generator)
    tokens = torch.zeros(B, T + n, dtype=torch.long).scatter(1, positions, data)
    tokens[:, T:] = M + 1 + torch.arange(n)
    return tokens, data - 1


def copy_logits(params, tokens, selective=True):
    """embed -> (delta, B, C from u, or constants) -> selective_scan -> read out at the markers."""
    assert tokens.dim() == 2, f"tokens should be (B, T), got {tuple(tokens.shape)}"
    u = params["embedding"][tokens]  # (B, T, D), lookup by indexing
    Bsz, T, D = u.shape
    N = params["A_log"].shape[1]
    A = -torch.exp(params["A_log"])  # (D, N), negative
    if selective:
        delta = u @ params["W_delta"].T + params["b_delta"]  # (B, T, D)
        B_t = u @ params["W_B"].T + params["b_B"]  # (B, T, N)
        C_t = u @ params["W_C"].T + params["b_C"]  # (B, T, N)
    else:
        # time-invariant: the same delta, B, C at every step, whatever the token
        delta = params["b_delta"].expand(Bsz, T, D)
        B_t = params["b_B"].expand(Bsz, T, N)
        C_t = params["b_C"].expand(Bsz, T, N)
    y = selective_scan(u, delta, A, B_t, C_t, params["D"], delta_softplus=True)
    assert y.shape == (Bsz, T, D), f"y {tuple(y.shape)}"
    logits = y[:, -COPY_COUNT:] @ params["W_out"].T + params["b_out"]  # (B, COPY_COUNT, M)
    return logits


def train_selective_copy(params, steps, batch_size, selective=True, lr=1e-3, generator=None):
    """Selective copying: autograd through my selective_scan (and so my linear_scan), my own adam."""
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    M = params["W_out"].shape[0]
    dtype, device = params["W_out"].dtype, params["W_out"].device
    current = {k: v.detach().clone() for k, v in params.items()}
    trained = [k for k in current if selective or k not in _LTI_UNUSED]
    adam_states = {k: {} for k in trained}
    _debug(f"train_selective_copy: selective={selective}, training {trained}")
    losses = []
    t0 = time.perf_counter()
    for s in range(steps):
        tokens, targets = copy_batch(M, batch_size, generator)
        tokens, targets = tokens.to(device), targets.to(device)
        leaves = dict(current)
        for k in trained:
            leaves[k] = current[k].detach().requires_grad_(True)
        with torch.enable_grad():
            logits = copy_logits(leaves, tokens, selective)
            assert logits.shape == (batch_size, COPY_COUNT, M), f"logits {tuple(logits.shape)}"
            loss = softmax_cross_entropy(logits.reshape(-1, M), targets.reshape(-1))
            grads = torch.autograd.grad(loss, [leaves[k] for k in trained], allow_unused=True)
        for key, g in zip(trained, grads):
            if g is None:
                g = torch.zeros_like(current[key])
            current[key], adam_states[key] = adam(current[key], g, adam_states[key], lr=lr)
        losses.append(loss.detach())
        if s % 50 == 0:
            _debug(f"train_selective_copy step {s}: loss {float(losses[-1]):.4f}")
    log.debug("train_selective_copy: %d steps in %.3fs", steps, time.perf_counter() - t0)
    losses_out = torch.stack(losses) if losses else torch.zeros(0, dtype=dtype, device=device)
    return current, losses_out
