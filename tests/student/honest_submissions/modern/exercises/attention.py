# Exercises: attention. Fill in every `raise NotImplementedError()` below; keep the signatures.
# Public tests: test_attention.py (run `pytest -k attention`).
"""Attention: additive (Bahdanau), scaled dot-product, causal masks and multi-head attention.

Notes: L5 §13 (Bahdanau attention in an encoder-decoder), L5 §15 (scaled dot-product), L5 §16
(multi-head); W8 §8-§10 (general attention layer, why divide by sqrt(D), Q/K/V, self-attention),
W8 §12 (masked self-attention), W8 §13 (multi-head); L7-8 (Lecture 8) §一.1 (Bahdanau step by
step), §二.2 (scaled dot-product), §三 (self/cross/masked/multi-head).

Conventions that matter here:

- Boolean masks mean ``True`` = may attend (the convention of
  ``F.scaled_dot_product_attention``; ``nn.MultiheadAttention``'s ``attn_mask`` is the opposite).
  A mask broadcasts against the scores; it is never required to have their full shape.
- A query row in which no key is allowed gets all-zero weights and an all-zero output, never NaN
  (a plain softmax over all ``-inf`` gives 0/0). In ``multi_head_attention`` this holds per head,
  so such a row of the final output equals ``b_o``.
- Weights are applied as ``x @ W.T`` (PyTorch's layout).
"""

from __future__ import annotations

import math

import torch

Tensor = torch.Tensor

PROJECTIONS = ("q", "k", "v")  # W_q/b_q, W_k/b_k, W_v/b_v: the three input projections


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """Softmax over the last axis where ``mask`` allows; 0 elsewhere, all 0 in a row with no key."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    # the dtype's most negative finite value, not -inf: a row with no allowed key then gives a
    # finite (uniform) softmax, no NaN, and the torch.where below zeroes it
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.where(mask, torch.softmax(filled, dim=-1), 0.0)


def additive_attention(query, keys, W_q, W_k, v, mask=None):
    r"""Additive (Bahdanau) attention of one decoder state over the encoder states.

    .. math::
        \begin{aligned}
        e_j &= v^\top \tanh(W_q q + W_k h_j) \\
        \alpha_j &= \frac{\exp(e_j)}{\sum_{k \text{ allowed}} \exp(e_k)} \quad (0 \text{ where masked}) \\
        c &= \sum_j \alpha_j h_j
        \end{aligned}

    The encoder states ``h_j`` serve as both keys and values.

    Args:
        query (Tensor): (B, Hq) float32/float64, the decoder state (``s_{t-1}`` in the notes).
        keys (Tensor): (B, S, Hk), the encoder states ``h_1 ... h_S`` (the annotations).
        W_q (Tensor): (A, Hq), projects the query into the alignment space.
        W_k (Tensor): (A, Hk), projects the keys into the alignment space.
        v (Tensor): (A,), reduces the alignment vector to a score.
        mask (Tensor, optional): (B, S) bool, ``True`` = may attend. ``None`` allows every key.

    Returns:
        (context, weights): ``context`` (B, Hk), the weighted sum of the keys; ``weights`` (B, S),
        softmax over the allowed positions, all zeros for a batch row with no allowed key (whose
        context is then zero).

    Notes: L5 §13.2-§13.3; L7-8 (Lecture 8) §一.1; W8 §6-§7.

    PyTorch has no built-in for this; it is the alignment model of Bahdanau et al. (2015).
    """
    alignment = torch.tanh((query @ W_q.T).unsqueeze(1) + keys @ W_k.T)  # (B, S, A)
    weights = _masked_softmax(alignment @ v, mask)  # scores e_j: (B, S)
    context = torch.einsum("bs,bsh->bh", weights, keys)
    return context, weights


def scaled_dot_product_attention(q, k, v, mask=None):
    r"""Scaled dot-product attention.

    .. math::
        A = \mathrm{softmax}\Big(\frac{Q K^\top}{\sqrt{d}} + M\Big), \qquad \mathrm{out} = A V

    where :math:`M` is 0 where the mask allows a key and :math:`-\infty` where it does not. Dividing
    by :math:`\sqrt{d}` keeps the variance of the scores near 1 when the entries of q and k have
    variance 1, so the softmax does not saturate (W8 §8.2).

    Args:
        q (Tensor): (..., L, d) float32/float64, the queries.
        k (Tensor): (..., S, d), the keys.
        v (Tensor): (..., S, dv), the values.
        mask (Tensor, optional): bool, broadcastable to (..., L, S), ``True`` = may attend; e.g.
            (L, S) for a causal mask or (B, 1, S) for padding. ``None`` allows every key.

    Returns:
        (out, weights): ``out`` (..., L, dv) and ``weights`` (..., L, S). A row with no allowed key
        has all-zero weights and an all-zero output (never NaN).

    Notes: L5 §15; W8 §8.2, §9, §12; L7-8 (Lecture 8) §二.2, §三.

    Agrees with ``torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)``
    wherever a row has an allowed key (that function returns NaN for a fully masked row), but
    also returns the weights. Must not call that function or any fused attention kernel.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def causal_mask(T, device=None):
    r"""The causal (look-ahead) mask of masked self-attention.

    .. math::
        M_{ij} = [\, j \le i \,]

    Position ``i`` may attend to itself and to earlier positions, never to later ones, so an
    autoregressive decoder cannot look at the tokens it is about to predict.

    Args:
        T (int): the sequence length.
        device (torch.device or str, optional): where to create the mask (default: PyTorch's
            default device).

    Returns:
        mask (Tensor): (T, T) bool, ``True`` on and below the diagonal.

    Notes: W8 §12; L7-8 (Lecture 8) §三 (masked attention).

    The complement of ``torch.nn.Transformer.generate_square_subsequent_mask(T)`` (which is a float
    mask with ``-inf`` above the diagonal), and the mask ``F.scaled_dot_product_attention`` uses for
    ``is_causal=True``.
    """
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def multi_head_attention(query, key, value, params, num_heads, mask=None):
    r"""Multi-head attention.

    .. math::
        \begin{aligned}
        Q &= X_q W_q^\top + b_q, \quad K = X_k W_k^\top + b_k, \quad V = X_v W_v^\top + b_v \\
        \mathrm{head}_i &= \mathrm{Attention}(Q_i, K_i, V_i) \\
        \mathrm{out} &= \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W_o^\top + b_o
        \end{aligned}

    where :math:`Q_i, K_i, V_i` are the ``i``-th contiguous blocks of ``E // num_heads`` features
    and Attention is :func:`scaled_dot_product_attention` (scaled by ``sqrt(E // num_heads)``).

    Args:
        query (Tensor): (B, L, E) float32/float64.
        key (Tensor): (B, S, E).
        value (Tensor): (B, S, E).
        params (dict): ``W_q, W_k, W_v, W_o`` (E, E) and ``b_q, b_k, b_v, b_o`` (E,); not modified.
        num_heads (int): number of heads ``h``; must divide ``E``.
        mask (Tensor, optional): bool, broadcastable to (B, L, S), ``True`` = may attend, applied
            to every head; e.g. (L, S) causal or (B, 1, S) padding. ``None`` allows every key.
            The per-head scores are (B, num_heads, L, S), and broadcasting aligns axes from
            the right: an (L, S) mask fits them as it is, but a 3-dim (B, 1, S) or (B, L, S)
            mask would meet the head axis with its batch axis. Give it a head axis of size 1
            first, (B, 1, 1, S) or (B, 1, L, S).

    Returns:
        (out, weights): ``out`` (B, L, E); ``weights`` (B, num_heads, L, S), the attention weights
        of each head (not averaged). A row with no allowed key has zero weights in every head, so
        that row of ``out`` equals ``b_o``.

    Notes: W8 §9-§10, §13; L5 §16; L7-8 (Lecture 8) §三.

    Agrees with ``torch.nn.MultiheadAttention(E, num_heads, batch_first=True)`` called with
    ``need_weights=True, average_attn_weights=False`` and ``attn_mask=~mask`` (its boolean masks
    mean True = blocked), when ``in_proj_weight`` is split into ``W_q, W_k, W_v`` (in that order),
    ``in_proj_bias`` into ``b_q, b_k, b_v`` and ``out_proj`` gives ``W_o, b_o``.
    """
    embed = query.shape[-1]
    if embed % num_heads:
        raise ValueError(f"num_heads={num_heads} does not divide the embedding size {embed}")
    head_dim = embed // num_heads

    def split_heads(x: Tensor, name: str) -> Tensor:
        """Project, then (B, n, E) -> (B, num_heads, n, head_dim)."""
        projected = x @ params[f"W_{name}"].T + params[f"b_{name}"]
        return projected.unflatten(-1, (num_heads, head_dim)).transpose(1, 2)

    q, k, v = (split_heads(x, name) for x, name in zip((query, key, value), PROJECTIONS, strict=True))
    match mask:
        case torch.Tensor() if mask.dim() == 3:  # (B, 1, S) or (B, L, S): one head axis for all
            mask = mask.unsqueeze(1)
    heads, weights = scaled_dot_product_attention(q, k, v, mask)
    out = heads.transpose(1, 2).flatten(2) @ params["W_o"].T + params["b_o"]
    return out, weights
