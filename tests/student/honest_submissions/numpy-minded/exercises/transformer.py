"""Transformer blocks, numpy style."""

from __future__ import annotations

import torch

from .attention import causal_mask, multi_head_attention

try:
    from exercises.rnn import linear
except ImportError:  # e.g. when the folder is not on sys.path as "exercises"
    from .rnn import linear


def layer_norm(x, weight, bias, eps=1e-5):
    E = x.shape[-1]
    mean = x.sum(dim=-1, keepdim=True) / E
    var = ((x - mean) ** 2).sum(dim=-1, keepdim=True) / E  # biased, like np.var
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def feed_forward(x, W1, b1, W2, b2):
    hidden = linear(x, W1, b1)
    hidden = torch.maximum(hidden, torch.zeros_like(hidden))  # np.maximum(0, h)
    return linear(hidden, W2, b2)


def _ln(x, p):
    return layer_norm(x, p["weight"], p["bias"])


def _ffn(x, p):
    return feed_forward(x, p["W1"], p["b1"], p["W2"], p["b2"])


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    if norm_first:
        h = _ln(x, params["norm1"])
        x = x + multi_head_attention(h, h, h, params["self_attn"], num_heads, mask)[0]
        return x + _ffn(_ln(x, params["norm2"]), params["ffn"])
    x = _ln(x + multi_head_attention(x, x, x, params["self_attn"], num_heads, mask)[0], params["norm1"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm2"])


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    B, T, E = x.shape
    if causal:
        m = causal_mask(T, device=x.device)
        if self_mask is not None:
            m = torch.logical_and(m, self_mask)
    else:
        m = self_mask
    sa, ca = params["self_attn"], params["cross_attn"]
    if norm_first:
        h = _ln(x, params["norm1"])
        x = x + multi_head_attention(h, h, h, sa, num_heads, m)[0]
        h = _ln(x, params["norm2"])
        x = x + multi_head_attention(h, memory, memory, ca, num_heads, memory_mask)[0]
        return x + _ffn(_ln(x, params["norm3"]), params["ffn"])
    x = _ln(x + multi_head_attention(x, x, x, sa, num_heads, m)[0], params["norm1"])
    x = _ln(x + multi_head_attention(x, memory, memory, ca, num_heads, memory_mask)[0], params["norm2"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm3"])


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    w, b = torch.ones(8, dtype=torch.float64), torch.zeros(8, dtype=torch.float64)
    y = layer_norm(x, w, b)
    print("layer_norm mean/std:", y.mean().item(), y.std(unbiased=False).item())
