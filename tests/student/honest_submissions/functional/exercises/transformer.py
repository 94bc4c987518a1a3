"""Transformer blocks as composed residual sublayers."""

from __future__ import annotations

from functools import partial, reduce

import torch

from .attention import causal_mask, multi_head_attention


def layer_norm(x, weight, bias, eps=1e-5):
    centred = x - x.mean(-1, keepdim=True)
    return centred / (centred.pow(2).mean(-1, keepdim=True) + eps).sqrt() * weight + bias


def feed_forward(x, W1, b1, W2, b2):
    return (x @ W1.T + b1).relu() @ W2.T + b2


_norm = lambda p: partial(layer_norm, weight=p["weight"], bias=p["bias"])
_ffn = lambda p: lambda h: feed_forward(h, p["W1"], p["b1"], p["W2"], p["b2"])


def _attn(p, num_heads, mask, memory=None):
    return lambda h: multi_head_attention(h, h if memory is None else memory, h if memory is None else memory, p, num_heads, mask)[0]


def _residual(fn, norm, norm_first):
    return (lambda x: x + fn(norm(x))) if norm_first else (lambda x: norm(x + fn(x)))


def _compose(*fs):
    return lambda x: reduce(lambda acc, f: f(acc), fs, x)


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    return _compose(
        _residual(_attn(params["self_attn"], num_heads, mask), _norm(params["norm1"]), norm_first),
        _residual(_ffn(params["ffn"]), _norm(params["norm2"]), norm_first),
    )(x)


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    match (causal, self_mask):
        case (True, None):
            m = causal_mask(x.shape[1], device=x.device)
        case (True, _):
            m = causal_mask(x.shape[1], device=x.device) & self_mask
        case _:
            m = self_mask
    return _compose(
        _residual(_attn(params["self_attn"], num_heads, m), _norm(params["norm1"]), norm_first),
        _residual(_attn(params["cross_attn"], num_heads, memory_mask, memory), _norm(params["norm2"]), norm_first),
        _residual(_ffn(params["ffn"]), _norm(params["norm3"]), norm_first),
    )(x)
