"""Attention, typed. 注意力机制：加性注意力、缩放点积、因果掩码、多头注意力。"""

from __future__ import annotations

import math
from typing import Dict, Final, Optional, Tuple, Union

import torch
from torch import Tensor

Device = Union[torch.device, str, None]
NEG_INF: Final[float] = float("-inf")


def _softmax_allowed(scores: Tensor, mask: Optional[Tensor]) -> Tensor:
    """Softmax over allowed keys; rows with none allowed are zero. 全部被屏蔽的行输出全零。"""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    w: Tensor = torch.softmax(scores.masked_fill(~mask, NEG_INF), dim=-1)
    return w.masked_fill(~mask, 0.0)


def additive_attention(
    query: Tensor, keys: Tensor, W_q: Tensor, W_k: Tensor, v: Tensor, mask: Optional[Tensor] = None
) -> Tuple[Tensor, Tensor]:
    """Bahdanau attention. 对齐分数 e_j = v^T tanh(W_q q + W_k h_j)。"""
    e: Tensor = torch.tanh((query @ W_q.T).unsqueeze(-2) + keys @ W_k.T) @ v
    alpha: Tensor = _softmax_allowed(e, mask)
    context: Tensor = (alpha.unsqueeze(-1) * keys).sum(dim=-2)
    return context, alpha


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor] = None
) -> Tuple[Tensor, Tensor]:
    """softmax(QK^T/sqrt(d)) V. 除以 sqrt(d) 让分数方差接近 1。"""
    d: int = q.size(-1)
    scores: Tensor = q @ k.mT / math.sqrt(d)
    weights: Tensor = _softmax_allowed(scores, mask)
    return weights @ v, weights


def causal_mask(T: int, device: Device = None) -> Tensor:
    """Lower-triangular bool mask. 下三角（含对角线）为 True。"""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril_()


def multi_head_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    params: Dict[str, Tensor],
    num_heads: int,
    mask: Optional[Tensor] = None,
) -> Tuple[Tensor, Tensor]:
    """Multi-head attention. 每个头是 E // h 个连续特征。"""
    B, L, E = query.shape
    S: int = key.size(1)
    d_h: int = E // num_heads

    def split(t: Tensor, n: int) -> Tensor:
        return t.view(B, n, num_heads, d_h).transpose(1, 2)

    Q: Tensor = split(query @ params["W_q"].T + params["b_q"], L)
    K: Tensor = split(key @ params["W_k"].T + params["b_k"], S)
    V: Tensor = split(value @ params["W_v"].T + params["b_v"], S)
    m: Optional[Tensor] = mask.unsqueeze(-3) if mask is not None and mask.dim() == 3 else mask
    heads, weights = scaled_dot_product_attention(Q, K, V, m)
    concat: Tensor = heads.transpose(1, 2).reshape(B, L, E)
    return concat @ params["W_o"].T + params["b_o"], weights
