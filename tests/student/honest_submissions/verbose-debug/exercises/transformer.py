"""Transformer encoder and decoder blocks (W8 §15-§16, L8 §四.1)."""

from __future__ import annotations

import logging
import sys
import time

import torch

from .attention import causal_mask, multi_head_attention

DEBUG = False
log = logging.getLogger(__name__)


def _debug(*args):
    if DEBUG:
        print("[transformer]", *args, file=sys.stderr)


def layer_norm(x, weight, bias, eps=1e-5):
    """Normalize each token over its own features (biased variance)."""
    assert x.shape[-1] == weight.shape[0], f"last axis {x.shape[-1]} != weight {weight.shape[0]}"
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)  # divide by E, not E-1
    x_hat = (x - mean) / torch.sqrt(var + eps)
    return x_hat * weight + bias


def feed_forward(x, W1, b1, W2, b2):
    """relu(x W1^T + b1) W2^T + b2, applied per position."""
    hidden = torch.relu(x @ W1.T + b1)
    return hidden @ W2.T + b2


def _sublayers(params, name):
    p = params[name]
    return p["weight"], p["bias"]


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    """Post-LN by default, pre-LN when norm_first."""
    t0 = time.perf_counter()
    sa_p, ffn_p = params["self_attn"], params["ffn"]
    w1, b1 = _sublayers(params, "norm1")
    w2, b2 = _sublayers(params, "norm2")
    if norm_first:
        h = layer_norm(x, w1, b1)
        x = x + multi_head_attention(h, h, h, sa_p, num_heads, mask)[0]
        h = layer_norm(x, w2, b2)
        y = x + feed_forward(h, ffn_p["W1"], ffn_p["b1"], ffn_p["W2"], ffn_p["b2"])
    else:
        attn_out, _ = multi_head_attention(x, x, x, sa_p, num_heads, mask)
        x = layer_norm(x + attn_out, w1, b1)
        y = layer_norm(x + feed_forward(x, ffn_p["W1"], ffn_p["b1"], ffn_p["W2"], ffn_p["b2"]), w2, b2)
    _debug(f"encoder_block norm_first={norm_first} took {time.perf_counter() - t0:.4f}s")
    return y


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    """Masked self-attention, cross-attention, FFN; each with residual + LayerNorm."""
    T = x.shape[1]
    if causal:
        sa_mask = causal_mask(T, device=x.device)
        if self_mask is not None:
            sa_mask = sa_mask & self_mask  # broadcasts (T, T) with (B, 1, T)
    else:
        sa_mask = self_mask
    ffn_p = params["ffn"]
    ffn = lambda h: feed_forward(h, ffn_p["W1"], ffn_p["b1"], ffn_p["W2"], ffn_p["b2"])
    n1, n2, n3 = (_sublayers(params, n) for n in ("norm1", "norm2", "norm3"))
    if norm_first:
        h = layer_norm(x, *n1)
        x = x + multi_head_attention(h, h, h, params["self_attn"], num_heads, sa_mask)[0]
        h = layer_norm(x, *n2)
        x = x + multi_head_attention(h, memory, memory, params["cross_attn"], num_heads, memory_mask)[0]
        return x + ffn(layer_norm(x, *n3))
    x = layer_norm(x + multi_head_attention(x, x, x, params["self_attn"], num_heads, sa_mask)[0], *n1)
    x = layer_norm(x + multi_head_attention(x, memory, memory, params["cross_attn"], num_heads, memory_mask)[0], *n2)
    y = layer_norm(x + ffn(x), *n3)
    log.debug("decoder_block out %s", tuple(y.shape))
    return y


# --- the lab: a Transformer that learns to reverse -----------------------------------------------

REVERSER_HEADS = 1  # one head, so the notebook's cross-attention map is the alignment itself


def reverser_batch(batch_size, seq_len, vocab, generator=None):
    """Draw reversal examples (given with the exercise, copied unchanged)."""
    src = torch.randint(vocab, (batch_size, seq_len), generator=generator)
    tgt = src.flip(1)
    start = torch.full((batch_size, 1), vocab, dtype=torch.long)
    return src, torch.cat([start, tgt[:, :-1]], dim=1), tgt


def reverser_logits(params, src, tgt_in):
    """embed -> encoder_block -> decoder_block (its own causal mask) -> W_out."""
    from .positional import embed_tokens, sinusoidal_encoding

    embedding = params["embedding"]
    V1, E = embedding.shape  # V + 1 rows: the last one is the start token
    B, S = src.shape
    T = tgt_in.shape[1]
    assert tgt_in.shape[0] == B, "src and tgt_in must have the same batch size"
    pe = sinusoidal_encoding(max(S, T), E, device=src.device, dtype=embedding.dtype)  # one table for both sides
    memory = encoder_block(embed_tokens(src, embedding, pe), params["encoder"], REVERSER_HEADS)  # no mask
    y = decoder_block(embed_tokens(tgt_in, embedding, pe), memory, params["decoder"], REVERSER_HEADS)
    logits = y @ params["W_out"].T + params["b_out"]
    assert logits.shape == (B, T, params["W_out"].shape[0]), f"logits {tuple(logits.shape)}"
    return logits


def _flatten_params(tree, prefix=()):
    """Nested dicts -> list of (path, tensor), e.g. (("decoder", "cross_attn", "W_q"), tensor)."""
    items = []
    for key, value in tree.items():
        if isinstance(value, dict):
            items.extend(_flatten_params(value, prefix + (key,)))
        else:
            items.append((prefix + (key,), value))
    return items


def _rebuild_params(flat):
    """Inverse of _flatten_params: {path: tensor} -> nested dicts."""
    tree = {}
    for path, value in flat.items():
        node = tree
        for key in path[:-1]:
            if key not in node:
                node[key] = {}
            node = node[key]
        node[path[-1]] = value
    return tree


def train_reverser(params, steps, batch_size, seq_len, vocab, lr=1e-3, generator=None):
    """Teacher forcing; autograd for the gradients, my own adam (one state per tensor) for the steps."""
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    assert params["W_out"].shape[0] == vocab, f"W_out has {params['W_out'].shape[0]} rows, vocab={vocab}"
    assert params["embedding"].shape[0] == vocab + 1, "embedding needs vocab + 1 rows (start token)"
    dtype, device = params["W_out"].dtype, params["W_out"].device
    current = {path: t.detach().clone() for path, t in _flatten_params(params)}
    paths = list(current)
    adam_states = {path: {} for path in paths}
    _debug(f"train_reverser: {len(paths)} tensors, {sum(t.numel() for t in current.values())} numbers")
    losses = []
    t0 = time.perf_counter()
    for s in range(steps):
        src, tgt_in, tgt = reverser_batch(batch_size, seq_len, vocab, generator)
        src, tgt_in, tgt = src.to(device), tgt_in.to(device), tgt.to(device)
        leaves = {path: t.detach().requires_grad_(True) for path, t in current.items()}
        with torch.enable_grad():
            logits = reverser_logits(_rebuild_params(leaves), src, tgt_in)  # (B, T, V)
            loss = softmax_cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1))  # mean over all tokens
            grads = torch.autograd.grad(loss, [leaves[p] for p in paths], allow_unused=True)
        for path, g in zip(paths, grads):
            if g is None:
                g = torch.zeros_like(current[path])
            current[path], adam_states[path] = adam(current[path], g, adam_states[path], lr=lr)
        losses.append(loss.detach())
        if s % 50 == 0:
            _debug(f"train_reverser step {s}: loss {float(losses[-1]):.4f}")
    log.debug("train_reverser: %d steps in %.3fs", steps, time.perf_counter() - t0)
    losses_out = torch.stack(losses) if losses else torch.zeros(0, dtype=dtype, device=device)
    return _rebuild_params(current), losses_out
