"""Positional encoding, numpy style (computed like the numpy version, then moved to torch)."""

from __future__ import annotations

import math

import numpy as np
import torch

_PE_CACHE = {}  # (P, d) -> float64 numpy table


def _pe_numpy(P, d):
    if (P, d) not in _PE_CACHE:
        pos = np.arange(P, dtype=np.float64)[:, None]  # (P, 1)
        two_i = np.arange(0, d, 2, dtype=np.float64)[None, :]  # (1, ceil(d/2))
        angle = pos / np.power(10000.0, two_i / d)
        pe = np.zeros((P, d), dtype=np.float64)
        pe[:, 0::2] = np.sin(angle)
        pe[:, 1::2] = np.cos(angle[:, : d // 2])
        _PE_CACHE[(P, d)] = pe
    return _PE_CACHE[(P, d)]


def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    table = torch.from_numpy(_pe_numpy(int(num_positions), int(d_model)).copy())
    return table.to(device=device, dtype=dtype)


def embed_tokens(tokens, embedding, pe):
    B, T = tokens.shape
    V, d = embedding.shape
    x = embedding[tokens.reshape(-1)].reshape(B, T, d)  # fancy indexing = lookup
    return x * math.sqrt(d) + pe[:T, :][None, :, :]


if __name__ == "__main__":
    np.set_printoptions(precision=3, suppress=True)
    print(sinusoidal_encoding(4, 5).numpy())
