"""Sinusoidal positional encoding and the Transformer's input embedding (W8 §11)."""

from __future__ import annotations

import math
import sys

import torch

DEBUG = False


def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    """Interleaved sin/cos table, angles in float64, rounded once to dtype."""
    assert num_positions >= 0 and d_model >= 1, "bad sizes"
    pe = torch.zeros(num_positions, d_model, dtype=torch.float64, device=device)
    positions = torch.arange(num_positions, dtype=torch.float64, device=device).unsqueeze(1)
    even_cols = torch.arange(0, d_model, 2, dtype=torch.float64, device=device)  # 2i
    inv_freq = torch.exp(-math.log(10000.0) * even_cols / d_model)  # 1 / 10000^(2i/d)
    angles = positions * inv_freq  # (P, ceil(d/2))
    pe[:, 0::2] = torch.sin(angles)
    n_cos = d_model // 2  # odd d_model: one fewer cosine column
    pe[:, 1::2] = torch.cos(angles[:, :n_cos])
    if DEBUG:
        print(f"[positional] pe {tuple(pe.shape)} -> {dtype}", file=sys.stderr)
    return pe.to(dtype)


def embed_tokens(tokens, embedding, pe):
    """sqrt(d) * E[tokens] + PE[:T]."""
    B, T = tokens.shape
    assert pe.shape[0] >= T, f"pe has {pe.shape[0]} rows but T={T}"
    d = embedding.shape[1]
    looked_up = embedding[tokens]  # (B, T, d), indexing = lookup
    return looked_up * math.sqrt(d) + pe[:T].unsqueeze(0)
