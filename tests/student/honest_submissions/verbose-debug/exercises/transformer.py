"""Transformer encoder and decoder blocks (W8 §15-§16, L8 §四.1)."""

from __future__ import annotations

import logging
import sys
import time

import torch

from .attention import causal_mask, multi_head_attention

DEBUG = False
log = logging.getLogger(__name__)


def _debug(*args):
    if DEBUG:
        print("[transformer]", *args, file=sys.stderr)


def layer_norm(x, weight, bias, eps=1e-5):
    """Normalize each token over its own features (biased variance)."""
    assert x.shape[-1] == weight.shape[0], f"last axis {x.shape[-1]} != weight {weight.shape[0]}"
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)  # divide by E, not E-1
    x_hat = (x - mean) / torch.sqrt(var + eps)
    return x_hat * weight + bias


def feed_forward(x, W1, b1, W2, b2):
    """relu(x W1^T + b1) W2^T + b2, applied per position."""
    hidden = torch.relu(x @ W1.T + b1)
    return hidden @ W2.T + b2


def _sublayers(params, name):
    p = params[name]
    return p["weight"], p["bias"]


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    """Post-LN by default, pre-LN when norm_first."""
    t0 = time.perf_counter()
    sa_p, ffn_p = params["self_attn"], params["ffn"]
    w1, b1 = _sublayers(params, "norm1")
    w2, b2 = _sublayers(params, "norm2")
    if norm_first:
        h = layer_norm(x, w1, b1)
        x = x + multi_head_attention(h, h, h, sa_p, num_heads, mask)[0]
        h = layer_norm(x, w2, b2)
        y = x + feed_forward(h, ffn_p["W1"], ffn_p["b1"], ffn_p["W2"], ffn_p["b2"])
    else:
        attn_out, _ = multi_head_attention(x, x, x, sa_p, num_heads, mask)
        x = layer_norm(x + attn_out, w1, b1)
        y = layer_norm(x + feed_forward(x, ffn_p["W1"], ffn_p["b1"], ffn_p["W2"], ffn_p["b2"]), w2, b2)
    _debug(f"encoder_block norm_first={norm_first} took {time.perf_counter() - t0:.4f}s")
    return y


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    """Masked self-attention, cross-attention, FFN; each with residual + LayerNorm."""
    T = x.shape[1]
    if causal:
        sa_mask = causal_mask(T, device=x.device)
        if self_mask is not None:
            sa_mask = sa_mask & self_mask  # broadcasts (T, T) with (B, 1, T)
    else:
        sa_mask = self_mask
    ffn_p = params["ffn"]
    ffn = lambda h: feed_forward(h, ffn_p["W1"], ffn_p["b1"], ffn_p["W2"], ffn_p["b2"])
    n1, n2, n3 = (_sublayers(params, n) for n in ("norm1", "norm2", "norm3"))
    if norm_first:
        h = layer_norm(x, *n1)
        x = x + multi_head_attention(h, h, h, params["self_attn"], num_heads, sa_mask)[0]
        h = layer_norm(x, *n2)
        x = x + multi_head_attention(h, memory, memory, params["cross_attn"], num_heads, memory_mask)[0]
        return x + ffn(layer_norm(x, *n3))
    x = layer_norm(x + multi_head_attention(x, x, x, params["self_attn"], num_heads, sa_mask)[0], *n1)
    x = layer_norm(x + multi_head_attention(x, memory, memory, params["cross_attn"], num_heads, memory_mask)[0], *n2)
    y = layer_norm(x + ffn(x), *n3)
    log.debug("decoder_block out %s", tuple(y.shape))
    return y
