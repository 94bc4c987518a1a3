"""Attention, numpy style: explicit loops over heads, no einsum."""

from __future__ import annotations

import math

import numpy as np
import torch

try:
    from .rnn import softmax_rows
except ImportError:
    from rnn import softmax_rows

_MASK_CACHE = {}  # (T, device) -> causal mask, built once


def _masked_softmax_np(scores, mask):
    """Softmax where mask is True; empty rows give zeros instead of nan."""
    if mask is None:
        return softmax_rows(scores)
    neg = torch.finfo(scores.dtype).min
    s = torch.where(mask, scores, torch.full_like(scores, neg))
    w = softmax_rows(s)
    return w * mask.to(w.dtype)


def additive_attention(query, keys, W_q, W_k, v, mask=None):
    B, S, Hk = keys.shape
    wq = query @ W_q.T  # (B, A)
    wk = keys @ W_k.T  # (B, S, A)
    e = torch.tanh(wq[:, None, :] + wk) @ v  # (B, S)
    if mask is not None:
        e = torch.where(mask, e, torch.full_like(e, torch.finfo(e.dtype).min))
    w = softmax_rows(e)
    if mask is not None:
        w = w * mask.to(w.dtype)
    ctx = (w[:, :, None] * keys).sum(axis=1)  # (B, Hk)
    return ctx, w


def scaled_dot_product_attention(q, k, v, mask=None):
    d = q.shape[-1]
    scores = torch.matmul(q, torch.transpose(k, -1, -2)) / np.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    if mask is not None:
        w = torch.nan_to_num(w, nan=0.0) * mask
    return torch.matmul(w, v), w


def causal_mask(T, device=None):
    key = (int(T), str(device))
    if key not in _MASK_CACHE:
        i = torch.arange(T, device=device)
        _MASK_CACHE[key] = i[:, None] >= i[None, :]
    return _MASK_CACHE[key].clone()  # never hand out the cached tensor itself


def multi_head_attention(query, key, value, params, num_heads, mask=None):
    B, L, E = query.shape
    S = key.shape[1]
    dh = E // num_heads
    Q = query @ params["W_q"].T + params["b_q"]  # (B, L, E)
    K = key @ params["W_k"].T + params["b_k"]  # (B, S, E)
    V = value @ params["W_v"].T + params["b_v"]  # (B, S, E)
    outs, ws = [], []
    for h in range(num_heads):
        sl = slice(h * dh, (h + 1) * dh)
        o_h, w_h = scaled_dot_product_attention(Q[:, :, sl], K[:, :, sl], V[:, :, sl], mask)
        outs.append(o_h)  # (B, L, dh)
        ws.append(w_h.expand(B, L, S))  # (B, L, S)
    concat = torch.cat(outs, dim=-1)  # (B, L, E)
    out = concat @ params["W_o"].T + params["b_o"]
    return out, torch.stack(ws, dim=1)


if __name__ == "__main__":
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    m = torch.ones(3, 5, dtype=torch.bool)
    m[1] = False
    out, w = scaled_dot_product_attention(q, k, v, m)
    print("fully masked row ->", out[0, 1].tolist(), "nan?", bool(torch.isnan(out).any()))
