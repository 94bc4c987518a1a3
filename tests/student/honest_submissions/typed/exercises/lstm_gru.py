"""LSTM and GRU, typed. 门控循环单元：LSTM 与 GRU。"""

from __future__ import annotations

from typing import Dict, Final, List, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

HC = Tuple[Tensor, Tensor]
LSTM_GATES: Final[int] = 4  # i, f, g, o
GRU_GATES: Final[int] = 3  # r, z, n


def lstm_cell(x: Tensor, h_prev: Tensor, c_prev: Tensor, W_ih: Tensor, W_hh: Tensor, b_ih: Tensor, b_hh: Tensor) -> HC:
    """One LSTM step. 细胞状态 c 的更新是加法路径。"""
    gates: Tensor = x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    i, f, g, o = torch.chunk(gates, LSTM_GATES, dim=-1)
    c: Tensor = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    h: Tensor = torch.sigmoid(o) * torch.tanh(c)
    return h, c


def lstm_forward(
    x: Tensor, h0: Tensor, c0: Tensor, W_ih: Tensor, W_hh: Tensor, b_ih: Tensor, b_hh: Tensor
) -> Tuple[Tensor, HC]:
    """Run the LSTM over T. 沿时间运行 LSTM。"""
    h, c = h0, c0
    hs: List[Tensor] = []
    for t in range(x.size(1)):
        h, c = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, dim=1), (h, c)


def gru_cell(x: Tensor, h_prev: Tensor, W_ih: Tensor, W_hh: Tensor, b_ih: Tensor, b_hh: Tensor) -> Tensor:
    """PyTorch's GRU form. 注意：r 乘在 (W_hn h + b_hn) 上，和讲义的写法不同。"""
    i_r, i_z, i_n = torch.chunk(x @ W_ih.T + b_ih, GRU_GATES, dim=-1)
    h_r, h_z, h_n = torch.chunk(h_prev @ W_hh.T + b_hh, GRU_GATES, dim=-1)
    r: Tensor = torch.sigmoid(i_r + h_r)
    z: Tensor = torch.sigmoid(i_z + h_z)
    n: Tensor = torch.tanh(i_n + r * h_n)
    return (1.0 - z) * n + z * h_prev


def gru_forward(x: Tensor, h0: Tensor, W_ih: Tensor, W_hh: Tensor, b_ih: Tensor, b_hh: Tensor) -> Tuple[Tensor, Tensor]:
    """Run the GRU over T. 沿时间运行 GRU。"""
    h: Tensor = h0
    hs: List[Tensor] = []
    for t in range(x.size(1)):
        h = gru_cell(x[:, t], h, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, dim=1), h


# --- the lab: why gates --------------------------------------------------------------------------

Params = Dict[str, Tensor]
AdamState = Dict[str, Union[Tensor, int]]  # the optimizers' state dict
KINDS: Final[Tuple[str, ...]] = ("rnn", "lstm", "gru")


def _last_hidden(kind: str, x: Tensor, h0: Tensor, params: Params) -> Tensor:
    """h_T of the chosen cell (LSTM: c0 = 0). 选择的循环单元的最后隐藏状态。"""
    from .rnn import rnn_forward

    if kind == "rnn":
        hs: Tensor = rnn_forward(x, h0, params["W_xh"], params["W_hh"], params["b_h"])
        return hs[:, -1]
    if kind == "lstm":
        _, (h_T, _c_T) = lstm_forward(x, h0, torch.zeros_like(h0), params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
        return h_T
    if kind == "gru":
        _, h_last = gru_forward(x, h0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
        return h_last
    raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


def input_gradient_norms(kind: str, x: Tensor, h0: Tensor, params: Params) -> Tensor:
    """n_t = ||d(sum h_T)/d x_t||. 用 autograd 测量梯度随距离的衰减。"""
    xs: Tensor = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        h_T: Tensor = _last_hidden(kind, xs, h0, params)
        (dx,) = torch.autograd.grad(h_T.sum(), [xs])
    norms: Tensor = dx.square().sum(dim=(0, 2)).sqrt()
    return norms


# --- the lab: delayed recall ---------------------------------------------------------------------


def recall_batch(K: int, batch_size: int, lag: int, generator: Optional[torch.Generator] = None) -> Tensor:
    """Given task generator. 给定的任务：第一个记忆符号 + lag 个干扰符号。"""
    M = K // 2
    first = torch.randint(M, (batch_size, 1), generator=generator)
    rest = torch.randint(M, K, (batch_size, lag), generator=generator)
    return torch.cat([first, rest], dim=1)


def recall_logits(kind: str, params: Params, x: Tensor) -> Tensor:
    """logits = h_T W_y^T + b_y, from zero states. 从零状态开始，读出最后的隐藏状态。"""
    H: int = params["W_hh"].size(1)
    h0: Tensor = torch.zeros(x.size(0), H, dtype=x.dtype, device=x.device)
    h_T: Tensor = _last_hidden(kind, x, h0, params)
    return h_T @ params["W_y"].T + params["b_y"]


def train_recall(
    kind: str,
    params: Params,
    steps: int,
    batch_size: int,
    lag: int,
    lr: float = 1e-2,
    generator: Optional[torch.Generator] = None,
) -> Tuple[Params, Tensor]:
    """Adam on delayed recall, gradients by autograd. 延迟回忆任务：autograd 求梯度，自己的 adam 更新。"""
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    W_y: Tensor = params["W_y"]
    K: int = W_y.size(0)
    current: Params = {k: v.detach().clone() for k, v in params.items()}
    states: Dict[str, AdamState] = {k: {} for k in current}
    losses: List[Tensor] = []
    for _ in range(steps):
        tokens: Tensor = recall_batch(K, batch_size, lag, generator).to(W_y.device)
        x: Tensor = F.one_hot(tokens, K).to(W_y.dtype)
        leaves: Params = {k: v.detach().requires_grad_(True) for k, v in current.items()}
        names: List[str] = list(leaves)
        with torch.enable_grad():
            loss: Tensor = softmax_cross_entropy(recall_logits(kind, leaves, x), tokens[:, 0])
            grads: Tuple[Optional[Tensor], ...] = torch.autograd.grad(loss, [leaves[k] for k in names], allow_unused=True)
        for k, g in zip(names, grads):
            step_grad: Tensor = torch.zeros_like(current[k]) if g is None else g
            current[k], states[k] = adam(current[k], step_grad, states[k], lr=lr)
        losses.append(loss.detach())
    out: Tensor = torch.stack(losses) if losses else torch.zeros(0, dtype=W_y.dtype, device=W_y.device)
    return current, out
