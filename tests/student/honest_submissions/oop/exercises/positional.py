"""Positional encoding with a small table class."""

from __future__ import annotations

import math

import torch


class _SinusoidTable:
    BASE = 10000.0

    def __init__(self, d_model):
        self._d = d_model

    @property
    def d_model(self):
        return self._d

    def inv_freq(self, device):
        two_i = torch.arange(0, self._d, 2, dtype=torch.float64, device=device)
        return 1.0 / (self.BASE ** (two_i / self._d))

    def __call__(self, num_positions, device=None):
        pos = torch.arange(num_positions, dtype=torch.float64, device=device)
        ang = torch.outer(pos, self.inv_freq(device))
        pe = torch.empty(num_positions, self._d, dtype=torch.float64, device=device)
        pe[:, 0::2] = ang.sin()
        pe[:, 1::2] = ang.cos()[:, : self._d // 2]
        return pe


def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    return _SinusoidTable(d_model)(num_positions, device=device).to(dtype)


def embed_tokens(tokens, embedding, pe):
    scale = math.sqrt(embedding.shape[1])
    return embedding[tokens] * scale + pe[: tokens.shape[1]]
