"""Attention as small pure functions."""

from __future__ import annotations

import math
from functools import partial

import torch


def _masked_weights(scores, mask):
    match mask:
        case None:
            return scores.softmax(-1)
        case _:
            w = scores.masked_fill(~mask, -math.inf).softmax(-1)
            return torch.where(mask, w, 0.0)


def additive_attention(query, keys, W_q, W_k, v, mask=None):
    energies = torch.tanh((query @ W_q.T)[:, None, :] + keys @ W_k.T) @ v
    w = _masked_weights(energies, mask)
    return torch.einsum("bs,bsd->bd", w, keys), w


def scaled_dot_product_attention(q, k, v, mask=None):
    w = _masked_weights(q @ k.mT * (1.0 / math.sqrt(q.shape[-1])), mask)
    return w @ v, w


def causal_mask(T, device=None):
    idx = partial(torch.arange, T, device=device)
    return idx()[None, :] <= idx()[:, None]


def multi_head_attention(query, key, value, params, num_heads, mask=None):
    B, L, E = query.shape
    proj = lambda x, n: x @ params[f"W_{n}"].T + params[f"b_{n}"]
    heads = lambda t: t.unflatten(-1, (num_heads, E // num_heads)).transpose(1, 2)
    q, k, v = (heads(proj(x, n)) for x, n in ((query, "q"), (key, "k"), (value, "v")))
    m = mask[:, None] if (mask is not None and mask.dim() == 3) else mask
    out, w = scaled_dot_product_attention(q, k, v, m)
    return proj(out.transpose(1, 2).flatten(-2), "o"), w
