"""Attention (terse)."""
from __future__ import annotations

import math

import torch


def additive_attention(query, keys, W_q, W_k, v, mask=None):
    e = torch.tanh((query @ W_q.T)[:, None] + keys @ W_k.T) @ v
    if mask is not None:
        e = e.masked_fill(~mask, float("-inf"))
    w = torch.softmax(e, -1)
    if mask is not None:
        w = w.masked_fill(~mask, 0.0)
    return (w[:, :, None] * keys).sum(1), w


def scaled_dot_product_attention(q, k, v, mask=None):
    s = q @ k.mT / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = torch.softmax(s, -1)
    if mask is not None:
        w = w.masked_fill(~mask, 0.0)
    return w @ v, w


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def multi_head_attention(query, key, value, params, num_heads, mask=None):
    B, L, E = query.shape
    S, dh = key.shape[1], E // num_heads
    split = lambda t, n: t.reshape(B, n, num_heads, dh).transpose(1, 2)
    q = split(query @ params["W_q"].T + params["b_q"], L)
    k = split(key @ params["W_k"].T + params["b_k"], S)
    v = split(value @ params["W_v"].T + params["b_v"], S)
    if mask is not None and mask.dim() == 3:
        mask = mask[:, None]
    o, w = scaled_dot_product_attention(q, k, v, mask)
    return o.transpose(1, 2).reshape(B, L, E) @ params["W_o"].T + params["b_o"], w
