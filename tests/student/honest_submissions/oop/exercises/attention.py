"""Attention with a couple of helper classes."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


class _MaskedSoftmax:
    """Softmax that respects a boolean mask and gives zeros (not NaN) for empty rows."""

    def __init__(self, mask=None):
        self._mask = mask

    def __call__(self, scores):
        if self._mask is None:
            return torch.softmax(scores, dim=-1)
        w = torch.softmax(scores.masked_fill(~self._mask, float("-inf")), dim=-1)
        return torch.where(self._mask, w, torch.zeros((), dtype=w.dtype, device=w.device))

    def __repr__(self):
        return f"_MaskedSoftmax(mask={None if self._mask is None else tuple(self._mask.shape)})"


def additive_attention(query, keys, W_q, W_k, v, mask=None):
    scores = torch.tanh((query @ W_q.T).unsqueeze(1) + keys @ W_k.T) @ v
    weights = _MaskedSoftmax(mask)(scores)
    return torch.einsum("bs,bsh->bh", weights, keys), weights


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = _MaskedSoftmax(mask)(scores)
    return weights @ v, weights


def causal_mask(T, device=None):
    return torch.tril(torch.ones((T, T), dtype=torch.bool, device=device))


@dataclass
class _Heads:
    num_heads: int
    embed_dim: int

    def __post_init__(self):
        assert self.embed_dim % self.num_heads == 0, "num_heads must divide E"

    @property
    def head_dim(self):
        return self.embed_dim // self.num_heads

    def split(self, t):
        B, n, _ = t.shape
        return t.reshape(B, n, self.num_heads, self.head_dim).transpose(1, 2)

    def merge(self, t):
        B, _, n, _ = t.shape
        return t.transpose(1, 2).reshape(B, n, self.embed_dim)


class _Projection:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return x @ self.W.T + self.b


def multi_head_attention(query, key, value, params, num_heads, mask=None):
    heads = _Heads(num_heads, query.shape[-1])
    proj = {n: _Projection(params[f"W_{n}"], params[f"b_{n}"]) for n in "qkvo"}
    q = heads.split(proj["q"](query))
    k = heads.split(proj["k"](key))
    v = heads.split(proj["v"](value))
    if mask is not None and mask.ndim == 3:
        mask = mask.unsqueeze(1)
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    return proj["o"](heads.merge(out)), weights
