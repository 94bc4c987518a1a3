"""Positional encoding: the fixed sinusoids of Vaswani et al. and the Transformer's input embedding.

Notes: W8 §10.3 (self-attention is permutation equivariant, so order must be added), W8 §11
(positional encoding: learned vs sinusoidal, §11.3 the sinusoidal form), W8 §15.1 (encoder input);
L7-8 (Lecture 7) §三 (the embedding layer is a lookup) and (Lecture 8) §四.1.

Conventions that matter here: sine and cosine are *interleaved* (even columns sine, odd columns
cosine, as in the paper), not concatenated in two halves; for an odd ``d_model`` the last column is
a sine. The embedding is scaled by ``sqrt(d)`` before the encoding is added (Vaswani et al. §3.4).
"""
from __future__ import annotations

import math

import torch


def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    pos = torch.arange(num_positions, device=device, dtype=torch.float64)[:, None]
    angle = pos / 10000.0 ** (torch.arange(0, d_model, 2, device=device, dtype=torch.float64) / d_model)
    pe = torch.zeros(num_positions, d_model, device=device, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(angle)
    pe[:, 1::2] = torch.sin(angle[:, : d_model // 2])
    return pe.to(dtype)


def embed_tokens(tokens, embedding, pe):
    r"""Token embedding lookup, scaled, plus the positional encoding.

    .. math::
        x_{b,t} = \sqrt{d}\; E[\mathrm{tokens}_{b,t}] + PE_t

    Args:
        tokens (Tensor): (B, T) int64 token ids in ``[0, V)``.
        embedding (Tensor): (V, d) float32/float64, the embedding table (one row per token).
        pe (Tensor): (P, d) with ``P >= T``, e.g. from :func:`sinusoidal_encoding`; its first ``T``
            rows are used.

    Returns:
        x (Tensor): (B, T, d), a new tensor, in the promoted dtype of ``embedding`` and ``pe``.

    Notes: W8 §11.1, §15.1; L7-8 (Lecture 7) §三 (embedding as a lookup).

    The lookup agrees with ``torch.nn.functional.embedding(tokens, embedding)`` (which must not be
    used here); the scaling by ``sqrt(d)`` is Vaswani et al. (2017) §3.4.
    """
    T = tokens.shape[-1]
    d = embedding.shape[-1]
    # Indexing a table with an integer tensor is the lookup (one row per token), no one-hot needed.
    return embedding[tokens] * math.sqrt(d) + pe[:T]
