"""Attention: Bahdanau, scaled dot-product, causal mask, multi-head (W8 §8-§13, L5 §13-§16)."""

from __future__ import annotations

import logging
import math
import sys

import torch

DEBUG = False
log = logging.getLogger(__name__)


def _debug(*args):
    if DEBUG:
        print("[attention]", *args, file=sys.stderr)


def _masked_softmax_rows(scores, mask):
    """softmax over the last axis where mask is True; fully masked rows become all zeros."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    assert mask.dtype == torch.bool, f"mask must be bool, got {mask.dtype}"
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    # a row with no allowed key is NaN now (0/0); every entry of such a row is masked -> set to 0
    weights = weights.masked_fill(~mask, 0.0)
    return weights


def additive_attention(query, keys, W_q, W_k, v, mask=None):
    """e_j = v^T tanh(W_q q + W_k h_j); alpha = softmax(e); c = sum_j alpha_j h_j."""
    assert query.dim() == 2 and keys.dim() == 3, "query (B, Hq), keys (B, S, Hk)"
    proj_q = query @ W_q.T  # (B, A)
    proj_k = keys @ W_k.T  # (B, S, A)
    energy = torch.tanh(proj_q.unsqueeze(1) + proj_k) @ v  # (B, S)
    weights = _masked_softmax_rows(energy, mask)
    context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)  # (B, Hk)
    _debug("additive weights row sums:", weights.sum(-1).tolist())
    return context, weights


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(Q K^T / sqrt(d) + M) V, plus the weights."""
    d = q.shape[-1]
    assert k.shape[-1] == d, f"q and k feature sizes differ: {d} vs {k.shape[-1]}"
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d)
    weights = _masked_softmax_rows(scores, mask)
    out = torch.matmul(weights, v)
    return out, weights


def causal_mask(T, device=None):
    """True on and below the diagonal: position i sees j <= i."""
    rows = torch.arange(T, device=device).unsqueeze(1)
    cols = torch.arange(T, device=device).unsqueeze(0)
    return cols <= rows


def multi_head_attention(query, key, value, params, num_heads, mask=None):
    """Project, split into contiguous head blocks, attend per head, concat, project out."""
    B, L, E = query.shape
    S = key.shape[1]
    assert E % num_heads == 0, f"num_heads={num_heads} must divide E={E}"
    head_dim = E // num_heads

    Q = query @ params["W_q"].T + params["b_q"]
    K = key @ params["W_k"].T + params["b_k"]
    V = value @ params["W_v"].T + params["b_v"]

    # (B, L, E) -> (B, h, L, head_dim)
    Q = Q.view(B, L, num_heads, head_dim).permute(0, 2, 1, 3)
    K = K.view(B, S, num_heads, head_dim).permute(0, 2, 1, 3)
    V = V.view(B, S, num_heads, head_dim).permute(0, 2, 1, 3)

    head_mask = mask
    if mask is not None and mask.dim() == 3:
        head_mask = mask.unsqueeze(1)  # (B, 1, L or 1, S): same mask for every head
    heads, weights = scaled_dot_product_attention(Q, K, V, head_mask)
    concat = heads.permute(0, 2, 1, 3).reshape(B, L, E)
    out = concat @ params["W_o"].T + params["b_o"]
    _debug(f"mha: B={B} L={L} S={S} E={E} heads={num_heads}")
    return out, weights
