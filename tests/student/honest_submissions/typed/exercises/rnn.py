"""Vanilla RNN, typed. 普通循环神经网络：前向、BPTT、截断 BPTT、双向 RNN、贪心解码。"""

from __future__ import annotations

from typing import Dict, Final, List, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

Params = Dict[str, Tensor]
Grads = Dict[str, Tensor]
PARAM_KEYS: Final[Tuple[str, ...]] = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")


def rnn_cell(x: Tensor, h_prev: Tensor, W_xh: Tensor, W_hh: Tensor, b_h: Tensor) -> Tensor:
    """h_t = tanh(x W_xh^T + h W_hh^T + b). 所有时间步共享同一组参数。"""
    return torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h)


def rnn_forward(x: Tensor, h0: Tensor, W_xh: Tensor, W_hh: Tensor, b_h: Tensor) -> Tensor:
    """Unroll over T. 沿时间展开。"""
    h: Tensor = h0
    hs: List[Tensor] = []
    for t in range(x.size(1)):
        h = rnn_cell(x[:, t], h, W_xh, W_hh, b_h)
        hs.append(h)
    return torch.stack(hs, dim=1)


def softmax_cross_entropy(logits: Tensor, targets: Tensor) -> Tensor:
    """Stable CE with log-sum-exp. 先减去每行最大值，避免 exp 溢出。"""
    m: Tensor = logits.amax(dim=-1, keepdim=True)
    log_probs: Tensor = logits - m - torch.log(torch.exp(logits - m).sum(dim=-1, keepdim=True))
    nll: Tensor = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return nll.mean()


def rnn_bptt(x: Tensor, targets: Tensor, h0: Tensor, params: Params) -> Tuple[Tensor, Grads]:
    """BPTT by hand. 手写反向传播，不用 autograd。"""
    W_xh, W_hh, b_h, W_hy, b_y = (params[k] for k in PARAM_KEYS)
    B, T, _ = x.shape
    hs: Tensor = rnn_forward(x, h0, W_xh, W_hh, b_h)
    o: Tensor = hs @ W_hy.T + b_y
    C: int = o.size(-1)
    loss: Tensor = softmax_cross_entropy(o.reshape(B * T, C), targets.reshape(B * T)) * T
    dO: Tensor = (torch.softmax(o, dim=-1) - F.one_hot(targets, C).to(o.dtype)) / B
    h_prev_all: Tensor = torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1)
    dh_next: Tensor = torch.zeros_like(h0)  # = dL/da_{t+1} W_hh
    das: List[Tensor] = [torch.zeros_like(h0)] * T
    for t in range(T - 1, -1, -1):
        da: Tensor = (dO[:, t] @ W_hy + dh_next) * (1.0 - hs[:, t].square())
        das[t] = da
        dh_next = da @ W_hh
    dA: Tensor = torch.stack(das, dim=1)  # (B, T, H)
    grads: Grads = {
        "W_xh": dA.flatten(0, 1).T @ x.flatten(0, 1),
        "W_hh": dA.flatten(0, 1).T @ h_prev_all.flatten(0, 1),
        "b_h": dA.sum(dim=(0, 1)),
        "W_hy": dO.flatten(0, 1).T @ hs.flatten(0, 1),
        "b_y": dO.sum(dim=(0, 1)),
        "h0": dh_next,
    }
    return loss, grads


def truncated_bptt(
    x: Tensor, targets: Tensor, h0: Tensor, params: Params, chunk: int
) -> Tuple[Tensor, Grads, Tensor]:
    """Truncated BPTT. 前向时状态跨块传递，反向时梯度只在块内。"""
    T: int = x.size(1)
    h: Tensor = h0
    loss: Optional[Tensor] = None
    grads: Optional[Grads] = None
    for s in range(0, T, chunk):
        e: int = min(s + chunk, T)
        l_c, g_c = rnn_bptt(x[:, s:e], targets[:, s:e], h, params)
        if grads is None or loss is None:
            loss, grads = l_c, dict(g_c)
        else:
            loss = loss + l_c
            grads = {k: grads[k] + g_c[k] if k != "h0" else grads[k] for k in grads}
        h = rnn_forward(x[:, s:e], h, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
    assert loss is not None and grads is not None
    return loss, grads, h


def birnn_forward(x: Tensor, h0_fwd: Tensor, h0_bwd: Tensor, params_fwd: Params, params_bwd: Params) -> Tensor:
    """BiRNN. 双向 RNN：正向和反向的隐藏状态按位置对齐后拼接。"""
    fwd: Tensor = rnn_forward(x, h0_fwd, params_fwd["W_xh"], params_fwd["W_hh"], params_fwd["b_h"])
    bwd: Tensor = rnn_forward(x.flip(1), h0_bwd, params_bwd["W_xh"], params_bwd["W_hh"], params_bwd["b_h"]).flip(1)
    return torch.cat([fwd, bwd], dim=-1)


def greedy_decode(params: Params, embedding: Tensor, h0: Tensor, start_token: Tensor, steps: int) -> Tensor:
    """Greedy generation. 贪心解码：把最可能的字符作为下一步输入。"""
    h: Tensor = h0
    token: Tensor = start_token
    out: Tensor = torch.zeros(h0.size(0), steps, dtype=torch.int64, device=h0.device)
    for s in range(steps):
        h = rnn_cell(embedding[token], h, params["W_xh"], params["W_hh"], params["b_h"])
        token = torch.argmax(h @ params["W_hy"].T + params["b_y"], dim=-1)
        out[:, s] = token
    return out


# --- the lab: a character-level language model, trained by hand --------------------------------

AdamState = Dict[str, Union[Tensor, int]]  # the optimizers' state dict


def train_char_rnn(
    tokens: Tensor,
    params: Params,
    steps: int,
    batch_size: int,
    seq_len: int,
    lr: float = 1e-2,
    clip: float = 5.0,
) -> Tuple[Params, Tensor]:
    """Truncated BPTT + global clipping + Adam, no autograd. 截断 BPTT、全局裁剪和 Adam，全部手写。"""
    from .optimizers import adam, clip_grad_norm

    W_xh: Tensor = params["W_xh"]
    V: int = W_xh.size(1)
    H: int = params["W_hh"].size(0)
    L: int = tokens.size(0) // batch_size
    n_windows: int = (L - 1) // seq_len
    streams: Tensor = tokens[: batch_size * L].reshape(batch_size, L).to(W_xh.device)
    current: Params = {k: params[k] for k in PARAM_KEYS}
    states: Dict[str, AdamState] = {k: {} for k in PARAM_KEYS}
    h: Tensor = torch.zeros(batch_size, H, dtype=W_xh.dtype, device=W_xh.device)
    losses: List[Tensor] = []
    for s in range(steps):
        w: int = s % n_windows
        if w == 0:
            h = torch.zeros(batch_size, H, dtype=W_xh.dtype, device=W_xh.device)  # 重新从头读
        window: Tensor = streams[:, w * seq_len : (w + 1) * seq_len + 1]
        x: Tensor = F.one_hot(window[:, :-1], V).to(W_xh.dtype)
        y: Tensor = window[:, 1:]
        loss, grads, h = truncated_bptt(x, y, h, current, seq_len)  # h 用更新前的参数算出
        clipped, _ = clip_grad_norm([grads[k] for k in PARAM_KEYS], clip)
        for k, g in zip(PARAM_KEYS, clipped):
            current[k], states[k] = adam(current[k], g, states[k], lr=lr)
        losses.append(loss / seq_len)  # nats per character
    out: Tensor = torch.stack(losses) if losses else torch.zeros(0, dtype=W_xh.dtype, device=W_xh.device)
    return {k: v.clone() for k, v in current.items()}, out


def sample_chars(
    params: Params,
    start_token: Tensor,
    steps: int,
    temperature: float = 1.0,
    generator: Optional[torch.Generator] = None,
) -> Tensor:
    """Sample with temperature on the logits. 温度除的是 logits，不是概率。"""
    W_xh: Tensor = params["W_xh"]
    V: int = W_xh.size(1)
    B: int = start_token.size(0)
    h: Tensor = torch.zeros(B, params["W_hh"].size(0), dtype=W_xh.dtype, device=W_xh.device)
    token: Tensor = start_token
    out: Tensor = torch.zeros(B, steps, dtype=torch.int64, device=start_token.device)
    for s in range(steps):
        x: Tensor = F.one_hot(token, V).to(W_xh.dtype)
        h = rnn_cell(x, h, W_xh, params["W_hh"], params["b_h"])
        p: Tensor = torch.softmax((h @ params["W_hy"].T + params["b_y"]) / temperature, dim=-1)
        token = torch.multinomial(p, 1, generator=generator)[:, 0]
        out[:, s] = token
    return out
