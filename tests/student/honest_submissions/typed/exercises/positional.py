"""Positional encoding, typed. 正弦位置编码（sin/cos 交错排列）。"""

from __future__ import annotations

import math
from typing import Final, Optional, Union

import torch
from torch import Tensor

BASE: Final[float] = 10000.0
Device = Optional[Union[torch.device, str]]


def sinusoidal_encoding(num_positions: int, d_model: int, device: Device = None, dtype: torch.dtype = torch.float32) -> Tensor:
    """PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(...). 角度用 float64 计算。"""
    p: Tensor = torch.arange(num_positions, dtype=torch.float64, device=device).unsqueeze(1)
    col: Tensor = torch.arange(d_model, device=device)
    two_i: Tensor = (col - col % 2).to(torch.float64)  # 2i for both columns of a pair
    angle: Tensor = p / BASE ** (two_i / d_model)
    pe: Tensor = torch.where(col % 2 == 0, torch.sin(angle), torch.cos(angle))
    return pe.to(dtype)


def embed_tokens(tokens: Tensor, embedding: Tensor, pe: Tensor) -> Tensor:
    """sqrt(d) * E[tokens] + PE[:T]. 嵌入层就是查表。"""
    T: int = tokens.size(1)
    d: int = embedding.size(-1)
    return embedding[tokens] * math.sqrt(d) + pe[:T]
