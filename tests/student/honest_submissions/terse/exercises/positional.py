"""Positional encoding (terse)."""
from __future__ import annotations

import math

import torch


def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    p = torch.arange(num_positions, dtype=torch.float64, device=device)[:, None]
    i2 = torch.arange(0, d_model, 2, dtype=torch.float64, device=device)
    ang = p / torch.pow(10000.0, i2 / d_model)
    pe = torch.zeros(num_positions, d_model, dtype=torch.float64, device=device)
    pe[:, 0::2] = torch.sin(ang)
    pe[:, 1::2] = torch.cos(ang[:, : d_model // 2])
    return pe.to(dtype)


def embed_tokens(tokens, embedding, pe):
    return embedding[tokens] * math.sqrt(embedding.shape[-1]) + pe[: tokens.shape[1]]
