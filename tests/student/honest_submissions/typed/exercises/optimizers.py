"""Optimizers with full type hints. 优化器：SGD、动量、AdaGrad、RMSProp、Adam 以及梯度裁剪。"""

from __future__ import annotations

from typing import Dict, Final, List, Tuple, Union

import torch
from torch import Tensor

State = Dict[str, Union[Tensor, int]]
Step = Tuple[Tensor, State]

CLIP_EPS: Final[float] = 1e-6  # 防止除以零


def _buf(state: State, key: str, like: Tensor) -> Tensor:
    """Return state[key] or zeros like ``like``. 取出状态缓冲区，没有就用零。"""
    value = state.get(key)
    if value is None:
        return torch.zeros_like(like)
    assert isinstance(value, Tensor)
    return value


def sgd(w: Tensor, dw: Tensor, state: State, lr: float = 1e-2) -> Step:
    """w - lr * dw. 普通梯度下降。"""
    return w - lr * dw, {}


def sgd_momentum(w: Tensor, dw: Tensor, state: State, lr: float = 1e-2, momentum: float = 0.9) -> Step:
    """v = mu v + g; w = w - lr v. 第一次的速度就是梯度本身（PyTorch 的约定）。"""
    v: Tensor = momentum * _buf(state, "velocity", w) + dw if "velocity" in state else dw.clone()
    return w - lr * v, {"velocity": v}


def adagrad(w: Tensor, dw: Tensor, state: State, lr: float = 1e-2, eps: float = 1e-10) -> Step:
    """G += g^2; w -= lr g / (sqrt(G) + eps). eps 加在开方之后。"""
    G: Tensor = _buf(state, "sum_sq", w) + dw.square()
    return w - lr * dw / (G.sqrt() + eps), {"sum_sq": G}


def rmsprop(w: Tensor, dw: Tensor, state: State, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8) -> Step:
    """Moving average of g^2. 指数滑动平均，没有偏差修正。"""
    s: Tensor = alpha * _buf(state, "sq_avg", w) + (1.0 - alpha) * dw.square()
    return w - lr * dw / (s.sqrt() + eps), {"sq_avg": s}


def adam(
    w: Tensor,
    dw: Tensor,
    state: State,
    lr: float = 1e-3,
    betas: Tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
) -> Step:
    """Adam with bias correction. 一阶矩 + 二阶矩 + 偏差修正。"""
    beta1, beta2 = betas
    step_prev = state.get("step", 0)
    assert isinstance(step_prev, int)
    t: int = step_prev + 1
    m: Tensor = beta1 * _buf(state, "m", w) + (1.0 - beta1) * dw
    v: Tensor = beta2 * _buf(state, "v", w) + (1.0 - beta2) * dw.square()
    m_hat: Tensor = m / (1.0 - beta1**t)
    v_hat: Tensor = v / (1.0 - beta2**t)
    return w - lr * m_hat / (v_hat.sqrt() + eps), {"step": t, "m": m, "v": v}


def clip_grad_norm(grads: List[Tensor], max_norm: float) -> Tuple[List[Tensor], Tensor]:
    """Global L2-norm clipping. 全局范数裁剪，只改变长度不改变方向。"""
    if not grads:
        return [], torch.tensor(0.0)
    sq: Tensor = torch.stack([g.square().sum() for g in grads]).sum()
    total_norm: Tensor = sq.sqrt()
    coef: Tensor = torch.clamp(max_norm / (total_norm + CLIP_EPS), max=1.0)
    clipped: List[Tensor] = [g * coef for g in grads]
    return clipped, total_norm
