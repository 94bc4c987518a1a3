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


# --- the lab: selective copying ------------------------------------------------------------------

COPY_CONTEXT, COPY_COUNT = 16, 4  # context positions, data tokens among them (and outputs)
_SELECTIVE_ONLY = ("W_delta", "W_B", "W_C")  # unused by the time-invariant model


def copy_batch(M, batch_size, generator=None):
    B, T, n = batch_size, COPY_CONTEXT, COPY_COUNT
    positions = torch.rand(B, T, generator=generator).argsort(dim=1)[:, :n].sort(dim=1).values
    data = torch.randint(1, M + 1, (B, n), generator=generator)
    tokens = torch.zeros(B, T + n, dtype=torch.long).scatter(1, positions, data)
    tokens[:, T:] = M + 1 + torch.arange(n)
    return tokens, data - 1


def _ssm_inputs(params, u, selective):
    """delta, B, C: functions of u (selective) or the learned constants at every step."""
    linear = lambda n: u @ params[f"W_{n}"].T + params[f"b_{n}"]
    constant = lambda n: params[f"b_{n}"].expand(u.shape[0], u.shape[1], -1)
    return tuple(map(linear if selective else constant, ("delta", "B", "C")))


def copy_logits(params, tokens, selective=True):
    u = params["embedding"][tokens]
    delta, B, C = _ssm_inputs(params, u, selective)
    y = selective_scan(u, delta, -params["A_log"].exp(), B, C, params["D"], delta_softplus=True)
    return y[:, -COPY_COUNT:] @ params["W_out"].T + params["b_out"]


def train_selective_copy(params, steps, batch_size, selective=True, lr=1e-3, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    M = params["W_out"].shape[0]
    dtype, device = params["W_out"].dtype, params["W_out"].device
    keys = tuple(k for k in params if selective or k not in _SELECTIVE_ONLY)

    def step(carry, _):
        theta, states, losses = carry
        tokens, targets = (t.to(device) for t in copy_batch(M, batch_size, generator))
        leaves = {k: theta[k].detach().requires_grad_() for k in keys}
        with torch.enable_grad():
            logits = copy_logits({**theta, **leaves}, tokens, selective)
            loss = softmax_cross_entropy(logits.reshape(-1, M), targets.reshape(-1))
            grads = dict(zip(keys, torch.autograd.grad(loss, [leaves[k] for k in keys])))
        stepped = {k: adam(theta[k], grads[k], states[k], lr=lr) for k in keys}
        theta = {**theta, **{k: w for k, (w, _) in stepped.items()}}
        return theta, {k: s for k, (_, s) in stepped.items()}, losses + (loss.detach(),)

    init = ({k: v.clone() for k, v in params.items()}, {k: {} for k in keys}, ())
    theta, _, losses = reduce(step, range(steps), init)
    losses = torch.stack(losses).to(dtype) if losses else torch.zeros(0, dtype=dtype, device=device)
    return theta, losses
