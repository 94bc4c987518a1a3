"""Transformer blocks built from small callable sublayer objects."""

from __future__ import annotations

import torch

from .attention import causal_mask, multi_head_attention


def layer_norm(x, weight, bias, eps=1e-5):
    mu = x.mean(dim=-1, keepdim=True)
    xc = x - mu
    var = (xc * xc).mean(dim=-1, keepdim=True)
    return xc * torch.rsqrt(var + eps) * weight + bias


def feed_forward(x, W1, b1, W2, b2):
    return torch.clamp(x @ W1.T + b1, min=0) @ W2.T + b2


class _Sublayer:
    def __init__(self, fn, norm, norm_first):
        self._fn, self._norm, self._pre = fn, norm, norm_first

    def _ln(self, x):
        return layer_norm(x, self._norm["weight"], self._norm["bias"])

    def __call__(self, x):
        if self._pre:
            return x + self._fn(self._ln(x))
        return self._ln(x + self._fn(x))


class _Attn:
    def __init__(self, params, num_heads, mask, memory=None):
        self._p, self._h, self._m, self._mem = params, num_heads, mask, memory

    def __call__(self, x):
        kv = x if self._mem is None else self._mem
        return multi_head_attention(x, kv, kv, self._p, self._h, self._m)[0]


class _FFN:
    def __init__(self, p):
        self._p = p

    def __call__(self, x):
        p = self._p
        return feed_forward(x, p["W1"], p["b1"], p["W2"], p["b2"])


class _Block:
    def __init__(self, *sublayers):
        self._layers = sublayers

    def __len__(self):
        return len(self._layers)

    def __call__(self, x):
        for layer in self._layers:
            x = layer(x)
        return x


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    block = _Block(
        _Sublayer(_Attn(params["self_attn"], num_heads, mask), params["norm1"], norm_first),
        _Sublayer(_FFN(params["ffn"]), params["norm2"], norm_first),
    )
    return block(x)


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    m = self_mask
    if causal:
        cm = causal_mask(x.shape[1], device=x.device)
        m = cm if self_mask is None else cm & self_mask
    block = _Block(
        _Sublayer(_Attn(params["self_attn"], num_heads, m), params["norm1"], norm_first),
        _Sublayer(_Attn(params["cross_attn"], num_heads, memory_mask, memory), params["norm2"], norm_first),
        _Sublayer(_FFN(params["ffn"]), params["norm3"], norm_first),
    )
    return block(x)


# --- the lab: a Transformer that learns to reverse -----------------------------------------------

REVERSER_HEADS = 1  # one head, so the notebook's cross-attention map is the alignment itself


def reverser_batch(batch_size, seq_len, vocab, generator=None):
    src = torch.randint(vocab, (batch_size, seq_len), generator=generator)
    tgt = src.flip(1)
    start = torch.full((batch_size, 1), vocab, dtype=torch.long)
    return src, torch.cat([start, tgt[:, :-1]], dim=1), tgt


class _Embed:
    """embed_tokens with one shared table and one positional table for both sides."""

    def __init__(self, table, length, device):
        from .positional import sinusoidal_encoding

        self._table = table
        self._pe = sinusoidal_encoding(length, table.shape[1], device=device, dtype=table.dtype)

    def __call__(self, tokens):
        from .positional import embed_tokens

        return embed_tokens(tokens, self._table, self._pe)


def reverser_logits(params, src, tgt_in):
    embed = _Embed(params["embedding"], max(src.shape[1], tgt_in.shape[1]), src.device)
    memory = encoder_block(embed(src), params["encoder"], REVERSER_HEADS)
    y = decoder_block(embed(tgt_in), memory, params["decoder"], REVERSER_HEADS)
    return y @ params["W_out"].T + params["b_out"]


class _ParamTree:
    """A nested dict of tensors seen as a flat dict keyed by paths, and built back."""

    def __init__(self, tree):
        self._tree = tree

    def flat(self):
        out = {}
        self._walk(self._tree, (), out)
        return out

    @classmethod
    def _walk(cls, node, path, out):
        for k, v in node.items():
            if isinstance(v, dict):
                cls._walk(v, path + (k,), out)
            else:
                out[path + (k,)] = v

    @staticmethod
    def build(flat):
        tree = {}
        for path, value in flat.items():
            node = tree
            for k in path[:-1]:
                node = node.setdefault(k, {})
            node[path[-1]] = value
        return tree


def train_reverser(params, steps, batch_size, seq_len, vocab, lr=1e-3, generator=None):
    from .optimizers import AutogradTrainer
    from .rnn import softmax_cross_entropy

    dtype, device = params["W_out"].dtype, params["W_out"].device
    flat = _ParamTree(params).flat()
    trainer = AutogradTrainer(flat, flat.keys(), lr)

    for _ in range(steps):
        src, tgt_in, tgt = (t.to(device) for t in reverser_batch(batch_size, seq_len, vocab, generator))

        def loss_fn(p):
            logits = reverser_logits(_ParamTree.build(p), src, tgt_in)
            return softmax_cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1))

        trainer.step(loss_fn)
    return _ParamTree.build(trainer.params), trainer.losses(dtype, device)
