# Exercises: positional. Fill in every `raise NotImplementedError()` below; keep the signatures.
# Public tests: test_positional.py (run `pytest -k positional`).
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

Tensor = torch.Tensor

TIMESCALE = 10_000.0  # the longest wavelength is 2 pi * TIMESCALE


def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    r"""The sinusoidal positional encoding table.

    .. math::
        \begin{aligned}
        PE_{p,\,2i}   &= \sin\big(p / 10000^{2i/d_{\text{model}}}\big) \\
        PE_{p,\,2i+1} &= \cos\big(p / 10000^{2i/d_{\text{model}}}\big)
        \end{aligned}

    Column pair ``(2i, 2i+1)`` is one frequency; frequencies fall geometrically from 1 to about
    1/10000 across the columns, so low columns change fast with ``p`` (local position) and high
    columns slowly (long range). Every value is bounded and deterministic, and the table extends
    to any length (W8 §11.1).

    The angles are computed in float64 and the result is rounded once to ``dtype``, whatever
    ``dtype`` is, the float32 default included: a float32 table is the float64 one rounded (each
    entry within one float32 rounding of the exact value). Angles formed in float32, ``p * freq``
    in the output dtype, would already be off by about ``p * 6e-8`` radians (3e-5 at ``p = 2000``).

    Args:
        num_positions (int): number of positions ``P`` (rows), ``p = 0 ... P-1``.
        d_model (int): model width (columns), odd allowed (the last column is then a sine).
        device (torch.device or str, optional): where to create the table.
        dtype (torch.dtype): floating-point dtype of the table (default float32).

    Returns:
        pe (Tensor): (num_positions, d_model) of ``dtype`` on ``device``.

    Notes: W8 §11.3.

    PyTorch has no built-in for this; it is the table of Vaswani et al. (2017) §3.5, the same as
    the ``PositionalEncoding`` of PyTorch's nn.Transformer language-modeling tutorial, which
    however only works for an even ``d_model``.
    """
    pairs = (d_model + 1) // 2  # one frequency per (sin, cos) column pair; odd d_model: a last sine
    positions = torch.arange(num_positions, dtype=torch.float64, device=device).unsqueeze(1)
    even_columns = torch.arange(0, 2 * pairs, 2, dtype=torch.float64, device=device)
    angles = positions / TIMESCALE ** (even_columns / d_model)  # (P, pairs), all in float64
    interleaved = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(1)  # sin, cos, sin, ...
    return interleaved[:, :d_model].to(dtype)


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
    length, width = tokens.shape[-1], embedding.shape[-1]
    return embedding[tokens] * math.sqrt(width) + pe[:length]
