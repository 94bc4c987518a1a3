"""Transformer blocks, typed. Transformer 编码器块与解码器块。"""

from __future__ import annotations

from typing import Dict, Final, Optional

import torch
from torch import Tensor

from .attention import causal_mask, multi_head_attention

Params = Dict[str, Dict[str, Tensor]]
LN_EPS: Final[float] = 1e-5


def layer_norm(x: Tensor, weight: Tensor, bias: Tensor, eps: float = LN_EPS) -> Tensor:
    """LayerNorm over the last axis (biased variance). 对每个 token 自己的特征做归一化。"""
    mu: Tensor = x.mean(dim=-1, keepdim=True)
    var: Tensor = x.var(dim=-1, keepdim=True, correction=0)
    return (x - mu) / torch.sqrt(var + eps) * weight + bias


def feed_forward(x: Tensor, W1: Tensor, b1: Tensor, W2: Tensor, b2: Tensor) -> Tensor:
    """Position-wise MLP. 逐位置的前馈网络。"""
    return torch.relu(x @ W1.T + b1) @ W2.T + b2


def _ln(x: Tensor, p: Dict[str, Tensor]) -> Tensor:
    return layer_norm(x, p["weight"], p["bias"], LN_EPS)


def _ffn(x: Tensor, p: Dict[str, Tensor]) -> Tensor:
    return feed_forward(x, p["W1"], p["b1"], p["W2"], p["b2"])


def _attn(q: Tensor, kv: Tensor, p: Dict[str, Tensor], h: int, m: Optional[Tensor]) -> Tensor:
    out, _ = multi_head_attention(q, kv, kv, p, h, m)
    return out


def encoder_block(x: Tensor, params: Params, num_heads: int, mask: Optional[Tensor] = None, norm_first: bool = False) -> Tensor:
    """Encoder block. 编码器块：自注意力 + 前馈，各带残差与 LayerNorm。"""
    if norm_first:
        h: Tensor = _ln(x, params["norm1"])
        x = x + _attn(h, h, params["self_attn"], num_heads, mask)
        return x + _ffn(_ln(x, params["norm2"]), params["ffn"])
    x = _ln(x + _attn(x, x, params["self_attn"], num_heads, mask), params["norm1"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm2"])


def decoder_block(
    x: Tensor,
    memory: Tensor,
    params: Params,
    num_heads: int,
    self_mask: Optional[Tensor] = None,
    memory_mask: Optional[Tensor] = None,
    causal: bool = True,
    norm_first: bool = False,
) -> Tensor:
    """Decoder block. 解码器块：掩码自注意力、交叉注意力、前馈。"""
    sa_mask: Optional[Tensor] = self_mask
    if causal:
        cm: Tensor = causal_mask(x.size(1), device=x.device)
        sa_mask = cm if self_mask is None else cm & self_mask
    if norm_first:
        h: Tensor = _ln(x, params["norm1"])
        x = x + _attn(h, h, params["self_attn"], num_heads, sa_mask)
        x = x + _attn(_ln(x, params["norm2"]), memory, params["cross_attn"], num_heads, memory_mask)
        return x + _ffn(_ln(x, params["norm3"]), params["ffn"])
    x = _ln(x + _attn(x, x, params["self_attn"], num_heads, sa_mask), params["norm1"])
    x = _ln(x + _attn(x, memory, params["cross_attn"], num_heads, memory_mask), params["norm2"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm3"])
