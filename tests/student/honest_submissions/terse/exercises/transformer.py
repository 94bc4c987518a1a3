"""Transformer blocks (terse)."""
from __future__ import annotations

import torch

from .attention import causal_mask, multi_head_attention


def layer_norm(x, weight, bias, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * weight + bias


def feed_forward(x, W1, b1, W2, b2):
    return torch.relu(x @ W1.T + b1) @ W2.T + b2


def _ln(x, p):
    return layer_norm(x, p["weight"], p["bias"])


def _ffn(x, p):
    return feed_forward(x, p["W1"], p["b1"], p["W2"], p["b2"])


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    sa = lambda h: multi_head_attention(h, h, h, params["self_attn"], num_heads, mask)[0]
    if norm_first:
        x = x + sa(_ln(x, params["norm1"]))
        return x + _ffn(_ln(x, params["norm2"]), params["ffn"])
    x = _ln(x + sa(x), params["norm1"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm2"])


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    m = self_mask
    if causal:
        cm = causal_mask(x.shape[1], device=x.device)
        m = cm if self_mask is None else cm & self_mask
    sa = lambda h: multi_head_attention(h, h, h, params["self_attn"], num_heads, m)[0]
    ca = lambda h: multi_head_attention(h, memory, memory, params["cross_attn"], num_heads, memory_mask)[0]
    if norm_first:
        x = x + sa(_ln(x, params["norm1"]))
        x = x + ca(_ln(x, params["norm2"]))
        return x + _ffn(_ln(x, params["norm3"]), params["ffn"])
    x = _ln(x + sa(x), params["norm1"])
    x = _ln(x + ca(x), params["norm2"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm3"])
