"""Transformer blocks, typed. Transformer 编码器块与解码器块。"""

from __future__ import annotations

from typing import Any, Dict, Final, List, Optional, Tuple, Union

import torch
from torch import Tensor

from .attention import causal_mask, multi_head_attention

Params = Dict[str, Dict[str, Tensor]]
LN_EPS: Final[float] = 1e-5


def layer_norm(x: Tensor, weight: Tensor, bias: Tensor, eps: float = LN_EPS) -> Tensor:
    """LayerNorm over the last axis (biased variance). 对每个 token 自己的特征做归一化。"""
    mu: Tensor = x.mean(dim=-1, keepdim=True)
    var: Tensor = x.var(dim=-1, keepdim=True, correction=0)
    return (x - mu) / torch.sqrt(var + eps) * weight + bias


def feed_forward(x: Tensor, W1: Tensor, b1: Tensor, W2: Tensor, b2: Tensor) -> Tensor:
    """Position-wise MLP. 逐位置的前馈网络。"""
    return torch.relu(x @ W1.T + b1) @ W2.T + b2


def _ln(x: Tensor, p: Dict[str, Tensor]) -> Tensor:
    return layer_norm(x, p["weight"], p["bias"], LN_EPS)


def _ffn(x: Tensor, p: Dict[str, Tensor]) -> Tensor:
    return feed_forward(x, p["W1"], p["b1"], p["W2"], p["b2"])


def _attn(q: Tensor, kv: Tensor, p: Dict[str, Tensor], h: int, m: Optional[Tensor]) -> Tensor:
    out, _ = multi_head_attention(q, kv, kv, p, h, m)
    return out


def encoder_block(x: Tensor, params: Params, num_heads: int, mask: Optional[Tensor] = None, norm_first: bool = False) -> Tensor:
    """Encoder block. 编码器块：自注意力 + 前馈，各带残差与 LayerNorm。"""
    if norm_first:
        h: Tensor = _ln(x, params["norm1"])
        x = x + _attn(h, h, params["self_attn"], num_heads, mask)
        return x + _ffn(_ln(x, params["norm2"]), params["ffn"])
    x = _ln(x + _attn(x, x, params["self_attn"], num_heads, mask), params["norm1"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm2"])


def decoder_block(
    x: Tensor,
    memory: Tensor,
    params: Params,
    num_heads: int,
    self_mask: Optional[Tensor] = None,
    memory_mask: Optional[Tensor] = None,
    causal: bool = True,
    norm_first: bool = False,
) -> Tensor:
    """Decoder block. 解码器块：掩码自注意力、交叉注意力、前馈。"""
    sa_mask: Optional[Tensor] = self_mask
    if causal:
        cm: Tensor = causal_mask(x.size(1), device=x.device)
        sa_mask = cm if self_mask is None else cm & self_mask
    if norm_first:
        h: Tensor = _ln(x, params["norm1"])
        x = x + _attn(h, h, params["self_attn"], num_heads, sa_mask)
        x = x + _attn(_ln(x, params["norm2"]), memory, params["cross_attn"], num_heads, memory_mask)
        return x + _ffn(_ln(x, params["norm3"]), params["ffn"])
    x = _ln(x + _attn(x, x, params["self_attn"], num_heads, sa_mask), params["norm1"])
    x = _ln(x + _attn(x, memory, params["cross_attn"], num_heads, memory_mask), params["norm2"])
    return _ln(x + _ffn(x, params["ffn"]), params["norm3"])


# --- the lab: a Transformer that learns to reverse -----------------------------------------------

REVERSER_HEADS: Final[int] = 1  # one head, so the cross-attention map is the alignment itself

Tree = Dict[str, Any]  # nested parameter dicts, tensors at the leaves
Path = Tuple[str, ...]
AdamState = Dict[str, Union[Tensor, int]]  # the optimizers' state dict


def reverser_batch(
    batch_size: int, seq_len: int, vocab: int, generator: Optional[torch.Generator] = None
) -> Tuple[Tensor, Tensor, Tensor]:
    """Given task generator. 给定的任务：目标是倒序的源序列。"""
    src = torch.randint(vocab, (batch_size, seq_len), generator=generator)
    tgt = src.flip(1)
    start = torch.full((batch_size, 1), vocab, dtype=torch.long)
    return src, torch.cat([start, tgt[:, :-1]], dim=1), tgt


def reverser_logits(params: Tree, src: Tensor, tgt_in: Tensor) -> Tensor:
    """Encoder block -> decoder block -> projection. 一个编码器块、一个解码器块、一个输出投影。"""
    from .positional import embed_tokens, sinusoidal_encoding

    embedding: Tensor = params["embedding"]
    E: int = embedding.size(1)
    S: int = src.size(1)
    T: int = tgt_in.size(1)
    pe: Tensor = sinusoidal_encoding(max(S, T), E, device=src.device, dtype=embedding.dtype)
    memory: Tensor = encoder_block(embed_tokens(src, embedding, pe), params["encoder"], REVERSER_HEADS)
    y: Tensor = decoder_block(embed_tokens(tgt_in, embedding, pe), memory, params["decoder"], REVERSER_HEADS)
    return y @ params["W_out"].T + params["b_out"]


def _flatten(tree: Tree, prefix: Path = ()) -> Dict[Path, Tensor]:
    """{("encoder", "ffn", "W1"): tensor, ...}. 把嵌套字典拍平。"""
    flat: Dict[Path, Tensor] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, prefix + (key,)))
        else:
            flat[prefix + (key,)] = value
    return flat


def _unflatten(flat: Dict[Path, Tensor]) -> Tree:
    """Inverse of _flatten. 还原成嵌套字典。"""
    tree: Tree = {}
    for path, value in flat.items():
        node: Tree = tree
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return tree


def train_reverser(
    params: Tree,
    steps: int,
    batch_size: int,
    seq_len: int,
    vocab: int,
    lr: float = 1e-3,
    generator: Optional[torch.Generator] = None,
) -> Tuple[Tree, Tensor]:
    """Teacher forcing + autograd + own adam. 教师强制训练，autograd 求梯度，自己的 adam 更新。"""
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    W_out: Tensor = params["W_out"]
    current: Dict[Path, Tensor] = {k: v.detach().clone() for k, v in _flatten(params).items()}
    paths: List[Path] = list(current)
    states: Dict[Path, AdamState] = {k: {} for k in paths}
    losses: List[Tensor] = []
    for _ in range(steps):
        src, tgt_in, tgt = reverser_batch(batch_size, seq_len, vocab, generator)
        src, tgt_in, tgt = src.to(W_out.device), tgt_in.to(W_out.device), tgt.to(W_out.device)
        leaves: Dict[Path, Tensor] = {k: v.detach().requires_grad_(True) for k, v in current.items()}
        with torch.enable_grad():
            logits: Tensor = reverser_logits(_unflatten(leaves), src, tgt_in)
            loss: Tensor = softmax_cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1))
            grads: Tuple[Optional[Tensor], ...] = torch.autograd.grad(loss, [leaves[k] for k in paths], allow_unused=True)
        for k, g in zip(paths, grads):
            step_grad: Tensor = torch.zeros_like(current[k]) if g is None else g
            current[k], states[k] = adam(current[k], step_grad, states[k], lr=lr)
        losses.append(loss.detach())
    out: Tensor = torch.stack(losses) if losses else torch.zeros(0, dtype=W_out.dtype, device=W_out.device)
    return _unflatten(current), out
