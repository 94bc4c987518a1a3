"""Transformer blocks, numpy style."""

from __future__ import annotations

import torch

from .attention import causal_mask, multi_head_attention

try:
    from exercises.rnn import linear
except ImportError:  # e.g. when the folder is not on sys.path as "exercises"
    from .rnn import linear


def layer_norm(x, weight, bias, eps=1e-5):
    E = x.shape[-1]
    mean = x.sum(dim=-1, keepdim=True) / E
    var = ((x - mean) ** 2).sum(dim=-1, keepdim=True) / E  # biased, like np.var
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def feed_forward(x, W1, b1, W2, b2):
    hidden = linear(x, W1, b1)
    hidden = torch.maximum(hidden, torch.zeros_like(hidden))  # np.maximum(0, h)
    return linear(hidden, W2, b2)


def _ln(x, p):
    return layer_norm(x, p["weight"], p["bias"])


def _ffn(x, p):
    return feed_forward(x, p["W1"], p["b1"], p["W2"], p["b2"])


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    if norm_first:
        h = _ln(x, params["norm1"])
        x = x + multi_head_attention(h, h, h, params["self_attn"], num_heads, mask)[0]
        return x + _ffn(_ln(x, params["norm2"]), params["ffn"])
    x = _ln(x + multi_head_attention(x, x, x, params["self_attn"], num_heads, mask)[0], params["norm1"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm2"])


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    B, T, E = x.shape
    if causal:
        m = causal_mask(T, device=x.device)
        if self_mask is not None:
            m = torch.logical_and(m, self_mask)
    else:
        m = self_mask
    sa, ca = params["self_attn"], params["cross_attn"]
    if norm_first:
        h = _ln(x, params["norm1"])
        x = x + multi_head_attention(h, h, h, sa, num_heads, m)[0]
        h = _ln(x, params["norm2"])
        x = x + multi_head_attention(h, memory, memory, ca, num_heads, memory_mask)[0]
        return x + _ffn(_ln(x, params["norm3"]), params["ffn"])
    x = _ln(x + multi_head_attention(x, x, x, sa, num_heads, m)[0], params["norm1"])
    x = _ln(x + multi_head_attention(x, memory, memory, ca, num_heads, memory_mask)[0], params["norm2"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm3"])


# --- the lab: a Transformer that learns to reverse -----------------------------------------------

REVERSER_HEADS = 1  # one head, so the notebook's cross-attention map is the alignment itself


def reverser_batch(batch_size, seq_len, vocab, generator=None):
    src = torch.randint(vocab, (batch_size, seq_len), generator=generator)
    tgt = src.flip(1)
    start = torch.full((batch_size, 1), vocab, dtype=torch.long)
    return src, torch.cat([start, tgt[:, :-1]], dim=1), tgt


def reverser_logits(params, src, tgt_in):
    from .positional import embed_tokens, sinusoidal_encoding

    table = params["embedding"]  # (V + 1, E)
    S, T = src.shape[1], tgt_in.shape[1]
    pe = sinusoidal_encoding(max(S, T), table.shape[1], device=src.device, dtype=table.dtype)
    memory = encoder_block(embed_tokens(src, table, pe), params["encoder"], REVERSER_HEADS)  # (B, S, E)
    y = decoder_block(embed_tokens(tgt_in, table, pe), memory, params["decoder"], REVERSER_HEADS)  # (B, T, E)
    return linear(y, params["W_out"], params["b_out"])  # (B, T, V)


def _flatten(tree, prefix=""):
    """{"encoder": {"ffn": {"W1": t}}} -> {"encoder/ffn/W1": t}, like a flat list of arrays."""
    flat = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            flat.update(_flatten(v, prefix + k + "/"))
        else:
            flat[prefix + k] = v
    return flat


def _unflatten(flat):
    tree = {}
    for path, v in flat.items():
        parts = path.split("/")
        node = tree
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = v
    return tree


def train_reverser(params, steps, batch_size, seq_len, vocab, lr=1e-3, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    dtype, device = params["W_out"].dtype, params["W_out"].device
    theta = {k: v.clone() for k, v in _flatten(params).items()}
    names = list(theta)
    mem = {k: {} for k in names}
    losses = torch.zeros(steps, dtype=dtype, device=device)
    for s in range(steps):
        src, tgt_in, tgt = reverser_batch(batch_size, seq_len, vocab, generator)
        src, tgt_in, tgt = src.to(device), tgt_in.to(device), tgt.to(device)
        leaves = {k: theta[k].detach().requires_grad_(True) for k in names}
        with torch.enable_grad():
            logits = reverser_logits(_unflatten(leaves), src, tgt_in)  # (B, S, V)
            loss = softmax_cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1))
            grads = torch.autograd.grad(loss, [leaves[k] for k in names])
        for k, dk in zip(names, grads):
            theta[k], mem[k] = adam(theta[k], dk, mem[k], lr=lr)
        losses[s] = loss.detach()
    return _unflatten(theta), losses


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    w, b = torch.ones(8, dtype=torch.float64), torch.zeros(8, dtype=torch.float64)
    y = layer_norm(x, w, b)
    print("layer_norm mean/std:", y.mean().item(), y.std(unbiased=False).item())
