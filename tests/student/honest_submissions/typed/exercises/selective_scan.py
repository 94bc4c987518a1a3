"""Selective scan, typed. Mamba 的选择性扫描（并行线性扫描，O(log T) 步）。"""

from __future__ import annotations

from typing import Dict, Final, List, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

ScanOut = Union[Tensor, Tuple[Tensor, Tensor]]


def discretize(delta: Tensor, A: Tensor, B: Tensor) -> Tuple[Tensor, Tensor]:
    """ZOH for A, Euler for B. A 用零阶保持，B 用欧拉近似。"""
    d: Tensor = delta.unsqueeze(-1)
    A_bar: Tensor = torch.exp(d * A)
    B_bar: Tensor = d * B.unsqueeze(-2)
    return A_bar, B_bar


def _up_down(a: Tensor, b: Tensor) -> Tensor:
    """Blelloch-style scan along axis 1. 上扫 + 下扫，共约 2 log2(T) 层。"""
    stack: List[Tuple[Tensor, Tensor]] = []
    while b.size(1) > 1:
        n: int = b.size(1) // 2
        stack.append((a, b))
        a_e, a_o = a[:, 0 : 2 * n : 2], a[:, 1 : 2 * n : 2]
        b_e, b_o = b[:, 0 : 2 * n : 2], b[:, 1 : 2 * n : 2]
        a, b = a_o * a_e, a_o * b_e + b_o
    h: Tensor = b.clone()
    while stack:
        a_l, b_l = stack.pop()
        T: int = b_l.size(1)
        full: Tensor = b_l.clone()
        full[:, 1::2] = h
        full[:, 2::2] = a_l[:, 2::2] * h[:, : (T - 1) // 2] + b_l[:, 2::2]
        h = full
    return h


def linear_scan(a: Tensor, b: Tensor, h0: Optional[Tensor] = None) -> Tensor:
    """h_t = a_t h_{t-1} + b_t. 一阶线性递推，结合律保证可以并行。"""
    dt: torch.dtype = torch.promote_types(a.dtype, b.dtype)
    if h0 is not None:
        dt = torch.promote_types(dt, h0.dtype)
    a, b = a.to(dt), b.to(dt)
    if h0 is not None:
        b = torch.cat([a[:, :1] * h0.to(dt).unsqueeze(1) + b[:, :1], b[:, 1:]], dim=1)
    return _up_down(a, b)


def selective_scan(
    u: Tensor,
    delta: Tensor,
    A: Tensor,
    B: Tensor,
    C: Tensor,
    D: Optional[Tensor] = None,
    z: Optional[Tensor] = None,
    delta_bias: Optional[Tensor] = None,
    delta_softplus: bool = False,
    return_last_state: bool = False,
) -> ScanOut:
    """S6 scan. 选择性机制：Δ、B、C 都依赖输入。"""
    if delta_bias is not None:
        delta = delta + delta_bias
    if delta_softplus:
        delta = F.softplus(delta)
    A_bar, B_bar = discretize(delta, A, B)
    h: Tensor = linear_scan(A_bar, B_bar * u.unsqueeze(-1))
    y: Tensor = torch.einsum("btdn,btn->btd", h, C)
    if D is not None:
        y = y + u * D
    if z is not None:
        y = y * F.silu(z)
    if return_last_state:
        return y, h[:, -1]
    return y


# --- the lab: selective copying ------------------------------------------------------------------

COPY_CONTEXT: Final[int] = 16  # context positions
COPY_COUNT: Final[int] = 4  # data tokens among them (and outputs)
UNUSED_IF_NOT_SELECTIVE: Final[Tuple[str, ...]] = ("W_delta", "W_B", "W_C")

Params = Dict[str, Tensor]
AdamState = Dict[str, Union[Tensor, int]]  # the optimizers' state dict


def copy_batch(M: int, batch_size: int, generator: Optional[torch.Generator] = None) -> Tuple[Tensor, Tensor]:
    """Given task generator. 给定的任务：噪声中散布的数据 token，按顺序复制出来。"""
    B, T, n = batch_size, COPY_CONTEXT, COPY_COUNT
    positions = torch.rand(B, T, generator=generator).argsort(dim=1)[:, :n].sort(dim=1).values
    data = torch.randint(1, M + 1, (B, n), generator=generator)
    tokens = torch.zeros(B, T + n, dtype=torch.long).scatter(1, positions, data)
    tokens[:, T:] = M + 1 + torch.arange(n)
    return tokens, data - 1


def copy_logits(params: Params, tokens: Tensor, selective: bool = True) -> Tensor:
    """Embed, selective_scan, read out at the markers. 选择性：Δ、B、C 由输入决定；否则是常数。"""
    u: Tensor = params["embedding"][tokens]  # (B, T, D)
    Bsz, T, D = u.shape
    N: int = params["A_log"].size(1)
    A: Tensor = -torch.exp(params["A_log"])
    if selective:
        delta: Tensor = u @ params["W_delta"].T + params["b_delta"]
        B_in: Tensor = u @ params["W_B"].T + params["b_B"]
        C_in: Tensor = u @ params["W_C"].T + params["b_C"]
    else:
        delta = params["b_delta"].expand(Bsz, T, D)
        B_in = params["b_B"].expand(Bsz, T, N)
        C_in = params["b_C"].expand(Bsz, T, N)
    y = selective_scan(u, delta, A, B_in, C_in, params["D"], delta_softplus=True)
    assert isinstance(y, Tensor)
    return y[:, -COPY_COUNT:] @ params["W_out"].T + params["b_out"]


def train_selective_copy(
    params: Params,
    steps: int,
    batch_size: int,
    selective: bool = True,
    lr: float = 1e-3,
    generator: Optional[torch.Generator] = None,
) -> Tuple[Params, Tensor]:
    """Adam on selective copying through our own scan. 通过自己的 selective_scan 训练选择性复制。"""
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    W_out: Tensor = params["W_out"]
    M: int = W_out.size(0)
    current: Params = {k: v.detach().clone() for k, v in params.items()}
    trained: List[str] = [k for k in current if selective or k not in UNUSED_IF_NOT_SELECTIVE]
    states: Dict[str, AdamState] = {k: {} for k in trained}
    losses: List[Tensor] = []
    for _ in range(steps):
        tokens, targets = copy_batch(M, batch_size, generator)
        tokens, targets = tokens.to(W_out.device), targets.to(W_out.device)
        leaves: Params = {k: (v.detach().requires_grad_(True) if k in trained else v) for k, v in current.items()}
        with torch.enable_grad():
            logits: Tensor = copy_logits(leaves, tokens, selective)
            loss: Tensor = softmax_cross_entropy(logits.reshape(-1, M), targets.reshape(-1))
            grads: Tuple[Optional[Tensor], ...] = torch.autograd.grad(loss, [leaves[k] for k in trained], allow_unused=True)
        for k, g in zip(trained, grads):
            step_grad: Tensor = torch.zeros_like(current[k]) if g is None else g
            current[k], states[k] = adam(current[k], step_grad, states[k], lr=lr)
        losses.append(loss.detach())
    out: Tensor = torch.stack(losses) if losses else torch.zeros(0, dtype=W_out.dtype, device=W_out.device)
    return current, out
