"""Transformer blocks (terse)."""
from __future__ import annotations

import torch

from .attention import causal_mask, multi_head_attention


def layer_norm(x, weight, bias, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * weight + bias


def feed_forward(x, W1, b1, W2, b2):
    return torch.relu(x @ W1.T + b1) @ W2.T + b2


def _ln(x, p):
    return layer_norm(x, p["weight"], p["bias"])


def _ffn(x, p):
    return feed_forward(x, p["W1"], p["b1"], p["W2"], p["b2"])


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    sa = lambda h: multi_head_attention(h, h, h, params["self_attn"], num_heads, mask)[0]
    if norm_first:
        x = x + sa(_ln(x, params["norm1"]))
        return x + _ffn(_ln(x, params["norm2"]), params["ffn"])
    x = _ln(x + sa(x), params["norm1"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm2"])


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    m = self_mask
    if causal:
        cm = causal_mask(x.shape[1], device=x.device)
        m = cm if self_mask is None else cm & self_mask
    sa = lambda h: multi_head_attention(h, h, h, params["self_attn"], num_heads, m)[0]
    ca = lambda h: multi_head_attention(h, memory, memory, params["cross_attn"], num_heads, memory_mask)[0]
    if norm_first:
        x = x + sa(_ln(x, params["norm1"]))
        x = x + ca(_ln(x, params["norm2"]))
        return x + _ffn(_ln(x, params["norm3"]), params["ffn"])
    x = _ln(x + sa(x), params["norm1"])
    x = _ln(x + ca(x), params["norm2"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm3"])


REVERSER_HEADS = 1


def reverser_batch(batch_size, seq_len, vocab, generator=None):
    src = torch.randint(vocab, (batch_size, seq_len), generator=generator)
    tgt = src.flip(1)
    start = torch.full((batch_size, 1), vocab, dtype=torch.long)
    return src, torch.cat([start, tgt[:, :-1]], dim=1), tgt


def reverser_logits(params, src, tgt_in):
    from .positional import embed_tokens, sinusoidal_encoding

    E = params["embedding"]
    pe = sinusoidal_encoding(max(src.shape[1], tgt_in.shape[1]), E.shape[1], device=src.device, dtype=E.dtype)
    m = encoder_block(embed_tokens(src, E, pe), params["encoder"], REVERSER_HEADS)
    return decoder_block(embed_tokens(tgt_in, E, pe), m, params["decoder"], REVERSER_HEADS) @ params["W_out"].T + params["b_out"]


def _flat(d, pre=()):
    return [kv for k, v in d.items() for kv in (_flat(v, pre + (k,)) if isinstance(v, dict) else [(pre + (k,), v)])]


def _nest(flat):
    out = {}
    for path, v in flat.items():
        node = out
        for k in path[:-1]:
            node = node.setdefault(k, {})
        node[path[-1]] = v
    return out


def train_reverser(params, steps, batch_size, seq_len, vocab, lr=1e-3, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    p = {k: v.detach().clone() for k, v in _flat(params)}
    st, losses, dev = {k: {} for k in p}, [], params["W_out"].device
    for _ in range(steps):
        src, tgt_in, tgt = (t.to(dev) for t in reverser_batch(batch_size, seq_len, vocab, generator))
        leaves = {k: v.detach().requires_grad_() for k, v in p.items()}
        with torch.enable_grad():
            loss = softmax_cross_entropy(reverser_logits(_nest(leaves), src, tgt_in).reshape(-1, vocab), tgt.reshape(-1))
            gs = torch.autograd.grad(loss, list(leaves.values()), allow_unused=True)
        for (k, v), g in zip(leaves.items(), gs):
            p[k], st[k] = adam(v.detach(), torch.zeros_like(v) if g is None else g, st[k], lr=lr)
        losses.append(loss.detach())
    return _nest(p), torch.stack(losses) if losses else params["W_out"].new_zeros(0)
