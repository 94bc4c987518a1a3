# Exercises: transformer. Fill in every `raise NotImplementedError()` below; keep the signatures.
# Public tests: test_transformer.py (run `pytest -k transformer`).
"""Transformer blocks: LayerNorm, the position-wise feed-forward network, encoder and decoder blocks.

Notes: W8 §15 (encoder: input, block structure, role of each component, LayerNorm vs BatchNorm),
W8 §16 (decoder: masked self-attention, cross-attention, FFN), W8 §12 (masking); L5 §17;
L7-8 (Lecture 8) §四.1 (data flow: attention -> Add & LayerNorm -> MLP -> Add & LayerNorm).

Conventions that matter here:

- Block parameters are nested dicts: ``"self_attn"`` (and in the decoder ``"cross_attn"``) hold a
  ``multi_head_attention`` params dict (``W_q, W_k, W_v, W_o (E, E)``, ``b_q, b_k, b_v, b_o (E,)``);
  ``"ffn"`` holds ``W1 (F, E)``, ``b1 (F,)``, ``W2 (E, F)``, ``b2 (E,)``; ``"norm1"``, ``"norm2"``
  (and ``"norm3"``) hold ``weight (E,)`` and ``bias (E,)``.
- Post-LN (``norm_first=False``, the notes' block and the original paper) normalizes after each
  residual sum; pre-LN (``norm_first=True``) normalizes the input of each sublayer.
- No dropout; LayerNorm eps is 1e-5. Masks are bool, ``True`` = may attend, broadcastable to
  ``(B, L, S)``.
- The blocks call ``multi_head_attention``, ``causal_mask``, ``layer_norm`` and ``feed_forward`` by
  name, so each is written (and graded) once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch

from .attention import causal_mask, multi_head_attention

Tensor = torch.Tensor
Path = tuple[str, ...]  # where a tensor sits in a nested params dict, e.g. ("encoder", "ffn", "W1")


def _norm(x: Tensor, params: Mapping[str, Tensor]) -> Tensor:
    match params:
        case {"weight": weight, "bias": bias}:
            return layer_norm(x, weight, bias)
        case _:
            raise KeyError(f"a norm needs weight and bias, got {sorted(params)}")


def _ffn(x: Tensor, params: Mapping[str, Tensor]) -> Tensor:
    match params:
        case {"W1": W1, "b1": b1, "W2": W2, "b2": b2}:
            return feed_forward(x, W1, b1, W2, b2)
        case _:
            raise KeyError(f"an ffn needs W1, b1, W2, b2, got {sorted(params)}")


def _residual(x: Tensor, sublayer: Callable[[Tensor], Tensor], norm: Mapping[str, Tensor], norm_first: bool) -> Tensor:
    """One sublayer with its residual connection and LayerNorm: pre-LN or post-LN."""
    if norm_first:
        return x + sublayer(_norm(x, norm))
    return _norm(x + sublayer(x), norm)


def _leaves(tree: Mapping[str, Any], path: Path = ()) -> Iterator[tuple[Path, Tensor]]:
    """Every tensor of a nested params dict with its path, depth first."""
    for key, value in tree.items():
        match value:
            case torch.Tensor():
                yield (*path, key), value
            case Mapping():
                yield from _leaves(value, (*path, key))


def _rebuild(tree: Mapping[str, Any], values: Mapping[Path, Tensor], path: Path = ()) -> dict[str, Any]:
    """A new nested dict shaped like ``tree`` holding ``values[path]`` at every tensor."""
    rebuilt = {}
    for key, value in tree.items():
        match value:
            case torch.Tensor():
                rebuilt[key] = values[(*path, key)]
            case Mapping():
                rebuilt[key] = _rebuild(value, values, (*path, key))
            case _:
                rebuilt[key] = value
    return rebuilt


# The labs import other topics' functions inside themselves, not here: a topic that fails to
# load then costs the lab that uses it, not every function of this module.


def layer_norm(x, weight, bias, eps=1e-5):
    r"""Layer normalization over the last axis.

    .. math::
        \mu = \frac{1}{E}\sum_{e} x_e, \qquad
        \sigma^2 = \frac{1}{E}\sum_{e} (x_e - \mu)^2, \qquad
        y = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} \odot \gamma + \beta

    The variance is the biased one (divide by ``E``, not ``E - 1``). Each token is normalized on
    its own features, unlike BatchNorm, which normalizes each feature across the batch (W8 §15.3).

    Args:
        x (Tensor): (..., E) float32/float64.
        weight (Tensor): (E,), the gain :math:`\gamma`.
        bias (Tensor): (E,), the shift :math:`\beta`.
        eps (float): added to the variance for stability (default 1e-5).

    Returns:
        y (Tensor): same shape as ``x``, a new tensor.

    Notes: W8 §15.3; L7-8 (Lecture 8) §四.1.

    Agrees with ``torch.nn.functional.layer_norm(x, (E,), weight, bias, eps)`` (and
    ``torch.nn.LayerNorm``), which must not be called here.
    """
    centered = x - x.mean(dim=-1, keepdim=True)
    variance = (centered * centered).mean(dim=-1, keepdim=True)  # biased: divide by E
    return centered * torch.rsqrt(variance + eps) * weight + bias


def feed_forward(x, W1, b1, W2, b2):
    r"""The position-wise feed-forward network (the block's MLP).

    .. math::
        \mathrm{FFN}(x) = \max(0,\; x W_1^\top + b_1)\, W_2^\top + b_2

    The same two-layer MLP is applied to every position independently; attention is the only
    place where positions interact (W8 §15.3).

    Args:
        x (Tensor): (..., E) float32/float64.
        W1 (Tensor): (F, E), the expansion (F is typically 4E).
        b1 (Tensor): (F,).
        W2 (Tensor): (E, F), the projection back.
        b2 (Tensor): (E,).

    Returns:
        y (Tensor): (..., E).

    Notes: W8 §15.2-§15.3; L7-8 (Lecture 8) §四.1.

    Agrees with ``linear2(relu(linear1(x)))`` of ``torch.nn.TransformerEncoderLayer``
    (``activation="relu"``, no dropout).
    """
    return torch.relu(x @ W1.T + b1) @ W2.T + b2


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    r"""One Transformer encoder block: self-attention and FFN, each with residual and LayerNorm.

    Post-LN (default, the notes' block and Vaswani et al.):

    .. math::
        x' = \mathrm{LN}_1(x + \mathrm{SA}(x)), \qquad y = \mathrm{LN}_2(x' + \mathrm{FFN}(x'))

    Pre-LN (``norm_first=True``):

    .. math::
        x' = x + \mathrm{SA}(\mathrm{LN}_1(x)), \qquad y = x' + \mathrm{FFN}(\mathrm{LN}_2(x'))

    where SA is :func:`multi_head_attention` with query = key = value.

    Args:
        x (Tensor): (B, T, E) float32/float64.
        params (dict): ``"self_attn"`` (a ``multi_head_attention`` params dict), ``"ffn"``
            (``W1, b1, W2, b2``), ``"norm1"``, ``"norm2"`` (``weight, bias``); not modified.
        num_heads (int): number of attention heads; must divide ``E``.
        mask (Tensor, optional): bool, broadcastable to (B, T, T), ``True`` = may attend; e.g.
            (T, T) causal or (B, 1, T) padding.
        norm_first (bool): pre-LN instead of post-LN.

    Returns:
        y (Tensor): (B, T, E).

    Notes: W8 §15.2-§15.3; L5 §17; L7-8 (Lecture 8) §四.1.

    Agrees with ``torch.nn.TransformerEncoderLayer(E, num_heads, dim_feedforward=F, dropout=0.0,
    activation="relu", batch_first=True, norm_first=norm_first)`` in ``eval()`` mode, given
    ``src_mask=~mask`` for a (T, T) mask or ``src_key_padding_mask=~mask[:, 0]`` for a
    (B, 1, T) one.
    """

    def self_attention(t: Tensor) -> Tensor:
        out, _weights = multi_head_attention(t, t, t, params["self_attn"], num_heads, mask)
        return out

    x = _residual(x, self_attention, params["norm1"], norm_first)
    return _residual(x, lambda t: _ffn(t, params["ffn"]), params["norm2"], norm_first)


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    r"""One Transformer decoder block: masked self-attention, cross-attention, FFN.

    Post-LN (default):

    .. math::
        \begin{aligned}
        x_1 &= \mathrm{LN}_1(x + \mathrm{SA}(x)) \\
        x_2 &= \mathrm{LN}_2(x_1 + \mathrm{CA}(x_1, m)) \\
        y &= \mathrm{LN}_3(x_2 + \mathrm{FFN}(x_2))
        \end{aligned}

    Pre-LN (``norm_first=True``): :math:`x_1 = x + \mathrm{SA}(\mathrm{LN}_1(x))`,
    :math:`x_2 = x_1 + \mathrm{CA}(\mathrm{LN}_2(x_1), m)`, :math:`y = x_2 + \mathrm{FFN}(\mathrm{LN}_3(x_2))`
    (the memory :math:`m` itself is not normalized).

    SA is self-attention (query = key = value = x) with the mask ``causal_mask(T) & self_mask``
    when ``causal`` (just ``self_mask`` otherwise), so position ``t`` cannot see later targets;
    CA is cross-attention with queries from the decoder and keys/values from the encoder output
    ``memory``, with ``memory_mask``.

    Args:
        x (Tensor): (B, T, E) float32/float64, the target-side input.
        memory (Tensor): (B, S, E), the encoder output.
        params (dict): ``"self_attn"``, ``"cross_attn"`` (``multi_head_attention`` params dicts),
            ``"ffn"`` (``W1, b1, W2, b2``), ``"norm1"``, ``"norm2"``, ``"norm3"`` (``weight, bias``);
            not modified.
        num_heads (int): number of attention heads (both attentions); must divide ``E``.
        self_mask (Tensor, optional): bool, broadcastable to (B, T, T), ``True`` = may attend;
            e.g. (B, 1, T) target padding.
        memory_mask (Tensor, optional): bool, broadcastable to (B, T, S), ``True`` = may attend;
            e.g. (B, 1, S) source padding.
        causal (bool): combine a (T, T) causal mask with ``self_mask`` by logical AND.
        norm_first (bool): pre-LN instead of post-LN.

    Returns:
        y (Tensor): (B, T, E).

    Notes: W8 §16.2, §12; L5 §17; L7-8 (Lecture 8) §三 (cross and masked attention), §四.1.

    Agrees with ``torch.nn.TransformerDecoderLayer(E, num_heads, dim_feedforward=F, dropout=0.0,
    activation="relu", batch_first=True, norm_first=norm_first)`` in ``eval()`` mode given the
    same masks inverted (``tgt_mask=~(causal_mask(T) & self_mask)`` or key-padding masks, and
    ``memory_mask=~memory_mask`` or ``memory_key_padding_mask``).
    """
    if causal:
        no_peeking = causal_mask(x.shape[1], device=x.device)
        self_mask = no_peeking if self_mask is None else no_peeking & self_mask

    def self_attention(t: Tensor) -> Tensor:
        out, _weights = multi_head_attention(t, t, t, params["self_attn"], num_heads, self_mask)
        return out

    def cross_attention(t: Tensor) -> Tensor:
        out, _weights = multi_head_attention(t, memory, memory, params["cross_attn"], num_heads, memory_mask)
        return out

    x = _residual(x, self_attention, params["norm1"], norm_first)
    x = _residual(x, cross_attention, params["norm2"], norm_first)
    return _residual(x, lambda t: _ffn(t, params["ffn"]), params["norm3"], norm_first)


# --- the lab: a Transformer that learns to reverse -----------------------------------------------

REVERSER_HEADS = 1  # one head, so the notebook's cross-attention map is the alignment itself


def reverser_batch(batch_size, seq_len, vocab, generator=None):
    r"""Draw reversal examples (given: the task, not an exercise).

    ``src`` holds uniform tokens in ``[0, vocab)``; the target is ``src`` reversed; the decoder
    reads the target shifted right by one behind a start token ``vocab`` (teacher forcing).

    Returns:
        (src, tgt_in, tgt): three ``(batch_size, seq_len)`` int64 tensors,
        ``tgt_in = [vocab, tgt[:, :-1]]``.
    """
    src = torch.randint(vocab, (batch_size, seq_len), generator=generator)
    tgt = src.flip(1)
    start = torch.full((batch_size, 1), vocab, dtype=torch.long)
    return src, torch.cat([start, tgt[:, :-1]], dim=1), tgt


def reverser_logits(params, src, tgt_in):
    r"""The encoder-decoder: one :func:`encoder_block`, one :func:`decoder_block`, a projection.

    .. math::
        m = \mathrm{Enc}(\mathrm{embed}(src)), \quad
        y = \mathrm{Dec}(\mathrm{embed}(tgt_{in}), m), \quad
        \mathrm{logits} = y W_{out}^\top + b_{out}

    ``embed`` is :func:`embed_tokens` with the shared table ``params["embedding"]`` and one
    positional table for both sides, ``pe = sinusoidal_encoding(max(S, T), E)`` (the larger
    length; in the dtype of ``params["embedding"]``, on the device of ``src``): the source adds
    ``pe[:S]``, the target ``pe[:T]``. Both blocks are post-LN with ``REVERSER_HEADS`` heads. No
    mask is passed to either block: the encoder and the cross-attention see every position, and
    the decoder's causal mask is the one :func:`decoder_block` builds inside (its default
    ``causal=True``, ``self_mask=None``), so position ``t`` sees ``tgt_in[:, :t+1]`` only.

    Args:
        params (dict): ``"embedding" (V + 1, E)`` (row ``V`` is the start token),
            ``"encoder"`` and ``"decoder"`` (block dicts as in :func:`encoder_block` and
            :func:`decoder_block`), ``"W_out" (V, E)``, ``"b_out" (V,)``.
        src (Tensor): ``(B, S)`` int64; tgt_in (Tensor): ``(B, T)`` int64.

    Returns:
        logits (Tensor): ``(B, T, V)``, the next target token at each decoder position.
    """
    from .positional import embed_tokens, sinusoidal_encoding

    embedding = params["embedding"]
    (src_len, tgt_len), width = (src.shape[1], tgt_in.shape[1]), embedding.shape[1]
    pe = sinusoidal_encoding(max(src_len, tgt_len), width, device=src.device, dtype=embedding.dtype)
    memory = encoder_block(embed_tokens(src, embedding, pe), params["encoder"], REVERSER_HEADS)
    decoded = decoder_block(embed_tokens(tgt_in, embedding, pe), memory, params["decoder"], REVERSER_HEADS)
    return decoded @ params["W_out"].T + params["b_out"]


def train_reverser(params, steps, batch_size, seq_len, vocab, lr=1e-3, generator=None):
    r"""Train :func:`reverser_logits` to output its input reversed, with teacher forcing.

    .. math::
        y_t = x_{S - 1 - t}, \qquad
        L = -\frac{1}{B S} \sum_{b, t} \log p_\theta(y_{b,t} \mid x_b, y_{b,<t})

    Each step draws ``src, tgt_in, tgt = reverser_batch(batch_size, seq_len, vocab,
    generator)`` and takes ``loss = softmax_cross_entropy(logits.reshape(-1, V),
    tgt.reshape(-1))`` (the mean over every target token); autograd gives the gradient of every
    tensor in ``params`` (nested dicts included), each of which takes one ``adam`` step with its
    own state (``lr``, default betas and eps). ``losses[s]`` is the loss before the update.

    The decoder sees the true previous tokens (teacher forcing, W8 §4); the causal mask keeps
    it from reading the token it must predict. Nothing but attention moves information between
    positions, so cross-attention must learn to look at source position ``S - 1 - t`` from
    output position ``t``: the anti-diagonal the notebook draws.

    Args:
        params (dict): initial weights as in :func:`reverser_logits`, float32/float64; not
            modified.
        steps (int): number of Adam steps.
        batch_size (int): sequences per step.
        seq_len (int): source (and target) length.
        vocab (int): number of symbols ``V``.
        lr (float): Adam's learning rate. Default: ``1e-3``.
        generator (torch.Generator, optional): draws every batch.

    Returns:
        (params_out, losses): new tensors with the structure, shapes and dtype of ``params``,
        and ``losses (steps,)`` in the dtype of ``params``.

    Notes: W8 §4 (teacher forcing), §8-§12 (attention, positional encoding, masking), §15-§16
    (blocks). Graded in the parent: greedy decoding of fresh sequences with the reference
    forward, exact-match reversal at least 0.5, within 5 s of CPU on one core.
    """
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    dtype, device = params["embedding"].dtype, params["embedding"].device
    current = {path: tensor.detach().clone() for path, tensor in _leaves(params)}
    adam_states: dict[Path, dict] = {path: {} for path in current}
    losses = []
    for _ in range(steps):
        src, tgt_in, tgt = (t.to(device) for t in reverser_batch(batch_size, seq_len, vocab, generator=generator))
        with torch.enable_grad():
            leaves = {path: tensor.detach().requires_grad_(True) for path, tensor in current.items()}
            logits = reverser_logits(_rebuild(params, leaves), src, tgt_in)
            loss = softmax_cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1))
            grads = torch.autograd.grad(loss, list(leaves.values()), allow_unused=True)
        for path, grad in zip(leaves, grads, strict=True):
            if grad is not None:
                current[path], adam_states[path] = adam(current[path], grad, adam_states[path], lr=lr)
        losses.append(loss.detach())
    history = torch.stack(losses).to(dtype) if losses else torch.zeros(0, dtype=dtype, device=device)
    return _rebuild(params, current), history
