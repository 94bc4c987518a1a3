"""Selective scan, typed. Mamba 的选择性扫描（并行线性扫描，O(log T) 步）。"""

from __future__ import annotations

from typing import List, Optional, Tuple, Union

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
