"""Transformer blocks as composed residual sublayers."""

from __future__ import annotations

from functools import partial, reduce

import torch

from .attention import causal_mask, multi_head_attention


def layer_norm(x, weight, bias, eps=1e-5):
    centred = x - x.mean(-1, keepdim=True)
    return centred / (centred.pow(2).mean(-1, keepdim=True) + eps).sqrt() * weight + bias


def feed_forward(x, W1, b1, W2, b2):
    return (x @ W1.T + b1).relu() @ W2.T + b2


_norm = lambda p: partial(layer_norm, weight=p["weight"], bias=p["bias"])
_ffn = lambda p: lambda h: feed_forward(h, p["W1"], p["b1"], p["W2"], p["b2"])


def _attn(p, num_heads, mask, memory=None):
    return lambda h: multi_head_attention(h, h if memory is None else memory, h if memory is None else memory, p, num_heads, mask)[0]


def _residual(fn, norm, norm_first):
    return (lambda x: x + fn(norm(x))) if norm_first else (lambda x: norm(x + fn(x)))


def _compose(*fs):
    return lambda x: reduce(lambda acc, f: f(acc), fs, x)


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    return _compose(
        _residual(_attn(params["self_attn"], num_heads, mask), _norm(params["norm1"]), norm_first),
        _residual(_ffn(params["ffn"]), _norm(params["norm2"]), norm_first),
    )(x)


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    match (causal, self_mask):
        case (True, None):
            m = causal_mask(x.shape[1], device=x.device)
        case (True, _):
            m = causal_mask(x.shape[1], device=x.device) & self_mask
        case _:
            m = self_mask
    return _compose(
        _residual(_attn(params["self_attn"], num_heads, m), _norm(params["norm1"]), norm_first),
        _residual(_attn(params["cross_attn"], num_heads, memory_mask, memory), _norm(params["norm2"]), norm_first),
        _residual(_ffn(params["ffn"]), _norm(params["norm3"]), norm_first),
    )(x)


# --- the lab: a Transformer that learns to reverse -----------------------------------------------

REVERSER_HEADS = 1  # one head, so the notebook's cross-attention map is the alignment itself


def reverser_batch(batch_size, seq_len, vocab, generator=None):
    src = torch.randint(vocab, (batch_size, seq_len), generator=generator)
    tgt = src.flip(1)
    start = torch.full((batch_size, 1), vocab, dtype=torch.long)
    return src, torch.cat([start, tgt[:, :-1]], dim=1), tgt


def reverser_logits(params, src, tgt_in):
    from .positional import embed_tokens, sinusoidal_encoding

    emb = params["embedding"]
    pe = sinusoidal_encoding(max(src.shape[1], tgt_in.shape[1]), emb.shape[1], device=src.device, dtype=emb.dtype)
    embed = partial(embed_tokens, embedding=emb, pe=pe)
    memory = encoder_block(embed(src), params["encoder"], REVERSER_HEADS)
    y = decoder_block(embed(tgt_in), memory, params["decoder"], REVERSER_HEADS)
    return y @ params["W_out"].T + params["b_out"]


def _tree_map(fn, tree):
    """fn applied to every tensor of a nested dict, the structure kept."""
    return {k: _tree_map(fn, v) if isinstance(v, dict) else fn(v) for k, v in tree.items()}


def _tree_leaves(tree):
    """The tensors of a nested dict, in the order _tree_map visits them."""
    return [leaf for v in tree.values() for leaf in (_tree_leaves(v) if isinstance(v, dict) else [v])]


def _tree_fill(tree, leaves):
    """A nested dict shaped like tree holding leaves (in _tree_leaves order)."""
    it = iter(leaves)
    return _tree_map(lambda _: next(it), tree)


def train_reverser(params, steps, batch_size, seq_len, vocab, lr=1e-3, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    dtype, device = params["W_out"].dtype, params["W_out"].device

    def step(carry, _):
        theta, states, losses = carry
        src, tgt_in, tgt = (t.to(device) for t in reverser_batch(batch_size, seq_len, vocab, generator))
        leaves = [w.detach().requires_grad_() for w in _tree_leaves(theta)]
        with torch.enable_grad():
            logits = reverser_logits(_tree_fill(theta, leaves), src, tgt_in)
            loss = softmax_cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1))
            grads = torch.autograd.grad(loss, leaves)
        stepped = [adam(w.detach(), g, s, lr=lr) for w, g, s in zip(leaves, grads, states)]
        return _tree_fill(theta, [w for w, _ in stepped]), tuple(s for _, s in stepped), losses + (loss.detach(),)

    init = (_tree_map(torch.clone, params), tuple({} for _ in _tree_leaves(params)), ())
    theta, _, losses = reduce(step, range(steps), init)
    losses = torch.stack(losses).to(dtype) if losses else torch.zeros(0, dtype=dtype, device=device)
    return theta, losses
