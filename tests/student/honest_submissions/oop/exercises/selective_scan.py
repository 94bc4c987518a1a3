"""Selective scan with an associative-operator class."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


def discretize(delta, A, B):
    d = delta.unsqueeze(-1)
    return torch.exp(d * A), d * B.unsqueeze(2)


@dataclass
class _Affine:
    """The affine map x -> a * x + b; composing two is associative."""

    a: torch.Tensor
    b: torch.Tensor

    def __len__(self):
        return self.a.shape[1]

    def __getitem__(self, idx):
        return _Affine(self.a[:, idx], self.b[:, idx])

    def then(self, other):
        """self first, then other: (a2 a1, a2 b1 + b2)."""
        return _Affine(other.a * self.a, other.a * self.b + other.b)


class _BlellochScan:
    def __call__(self, f: _Affine):
        T = len(f)
        if T == 1:
            return f.b.clone()
        n = T // 2
        evens, odds = f[0:2 * n:2], f[1::2]
        h_odd = self(evens.then(odds))
        h = torch.empty_like(f.b)
        h[:, 1::2] = h_odd
        h[:, :1] = f.b[:, :1]
        h[:, 2::2] = f.a[:, 2::2] * h_odd[:, : (T - 1) // 2] + f.b[:, 2::2]
        return h


def linear_scan(a, b, h0=None):
    dt = torch.result_type(a, b) if h0 is None else torch.promote_types(torch.result_type(a, b), h0.dtype)
    a, b = a.to(dt), b.to(dt)
    if h0 is not None:
        b = torch.cat([a[:, :1] * h0.to(dt).unsqueeze(1) + b[:, :1], b[:, 1:]], dim=1)
    return _BlellochScan()(_Affine(a, b))


class _Output:
    def __init__(self, C, D, z):
        self._C, self._D, self._z = C, D, z

    def __call__(self, h, u):
        y = (h * self._C.unsqueeze(2)).sum(-1)
        if self._D is not None:
            y = y + self._D * u
        if self._z is not None:
            y = y * F.silu(self._z)
        return y


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    if delta_bias is not None:
        delta = delta + delta_bias
    if delta_softplus:
        delta = F.softplus(delta)
    A_bar, B_bar = discretize(delta, A, B)
    h = linear_scan(A_bar, B_bar * u.unsqueeze(-1))
    y = _Output(C, D, z)(h, u)
    return (y, h[:, -1]) if return_last_state else y


# --- the lab: selective copying ------------------------------------------------------------------

COPY_CONTEXT, COPY_COUNT = 16, 4  # context positions, data tokens among them (and outputs)


def copy_batch(M, batch_size, generator=None):
    B, T, n = batch_size, COPY_CONTEXT, COPY_COUNT
    positions = torch.rand(B, T, generator=generator).argsort(dim=1)[:, :n].sort(dim=1).values
    data = torch.randint(1, M + 1, (B, n), generator=generator)
    tokens = torch.zeros(B, T + n, dtype=torch.long).scatter(1, positions, data)
    tokens[:, T:] = M + 1 + torch.arange(n)
    return tokens, data - 1


class _CopyModel:
    """Embed, one selective (or time-invariant) SSM, read out at the markers."""

    SELECTIVE_ONLY = ("W_delta", "W_B", "W_C")

    def __init__(self, selective=True):
        self.selective = selective

    def __repr__(self):
        return f"_CopyModel(selective={self.selective})"

    def trainable(self, params):
        return tuple(k for k in params if self.selective or k not in self.SELECTIVE_ONLY)

    def _ssm_inputs(self, params, u):
        if self.selective:
            return tuple(u @ params[f"W_{n}"].T + params[f"b_{n}"] for n in ("delta", "B", "C"))
        B, T, _ = u.shape
        return tuple(params[f"b_{n}"].expand(B, T, -1) for n in ("delta", "B", "C"))

    def __call__(self, params, tokens):
        u = params["embedding"][tokens]
        delta, B, C = self._ssm_inputs(params, u)
        y = selective_scan(u, delta, -torch.exp(params["A_log"]), B, C, params["D"], delta_softplus=True)
        return y[:, -COPY_COUNT:] @ params["W_out"].T + params["b_out"]


def copy_logits(params, tokens, selective=True):
    return _CopyModel(selective)(params, tokens)


def train_selective_copy(params, steps, batch_size, selective=True, lr=1e-3, generator=None):
    from .optimizers import AutogradTrainer
    from .rnn import softmax_cross_entropy

    model = _CopyModel(selective)
    M = params["W_out"].shape[0]
    dtype, device = params["W_out"].dtype, params["W_out"].device
    trainer = AutogradTrainer(params, model.trainable(params), lr)
    for _ in range(steps):
        tokens, targets = (t.to(device) for t in copy_batch(M, batch_size, generator))
        trainer.step(lambda p: softmax_cross_entropy(model(p, tokens).reshape(-1, M), targets.reshape(-1)))
    return trainer.params, trainer.losses(dtype, device)
