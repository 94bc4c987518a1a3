"""LSTM and GRU, typed. 门控循环单元：LSTM 与 GRU。"""

from __future__ import annotations

from typing import Final, List, Tuple

import torch
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
