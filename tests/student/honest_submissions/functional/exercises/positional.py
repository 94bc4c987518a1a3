"""Positional encoding, functional."""

from __future__ import annotations

import math

import torch

_inv_freq = lambda d, device: torch.exp(torch.arange(0, d, 2, dtype=torch.float64, device=device) * (-math.log(10000.0) / d))


def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    ang = torch.arange(num_positions, dtype=torch.float64, device=device)[:, None] * _inv_freq(d_model, device)
    pe = torch.stack([ang.sin(), ang.cos()], dim=-1).flatten(1)  # interleaved sin, cos, sin, cos...
    return pe[:, :d_model].to(dtype)


def embed_tokens(tokens, embedding, pe):
    return embedding[tokens].mul(math.sqrt(embedding.shape[-1])).add(pe[: tokens.shape[-1]])
