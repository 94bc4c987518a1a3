# Exercises: optimizers. Fill in every `raise NotImplementedError()` below; keep the signatures.
# Public tests: test_optimizers.py (run `pytest -k optimizers`).
"""Optimizers: the update rules of the W8 recap (SGD, Momentum, AdaGrad, RMSProp, Adam) and
gradient-norm clipping.

Notes: W8 §1.1-1.5 (optimizer recap), L5 §6.1 and L7-8 (Lecture 7) §四 (gradient clipping).

Conventions that matter here:

- Every rule is ``name(w, dw, state, **hyperparameters) -> (w_next, state_next)``. ``state`` is
  ``{}`` on the first call; each call returns a *new* dict and leaves ``w``, ``dw``, the old dict
  and the tensors in it untouched (so write ``v = momentum * v + dw``, never ``v.mul_(...)``).
- ``state["step"]`` (Adam only) is a Python int; every other state entry is a tensor shaped like
  ``w``.
- Each rule agrees with the ``torch.optim`` class of the same name step after step. Where the
  notes and PyTorch differ in a detail, PyTorch's choice is the one used (and said in the
  docstring): SGD's momentum buffer starts *at* the first gradient, eps is added *after* the
  square root.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

Tensor = torch.Tensor
State = dict[str, Any]

# clip_grad_norm_ adds 1e-6 to the norm; kept in float64 so that `.to(norm)` rounds it only once.
_CLIP_EPS = torch.tensor(1e-6, dtype=torch.float64)
_EMPTY_NORM = torch.tensor(0.0)  # the norm of no gradients at all


def _buffer(state: State, key: str, like: Tensor) -> Tensor:
    """A running buffer from the old state, or zeros on the first step (never written to)."""
    return buffer if (buffer := state.get(key)) is not None else torch.zeros_like(like)


@dataclass(frozen=True)
class AdamMoments:
    """Adam's running state after a step: a small immutable record, turned into a dict at the end."""

    step: int = 0
    m: Tensor | None = None
    v: Tensor | None = None

    @classmethod
    def from_state(cls, state: State, like: Tensor) -> AdamMoments:
        match state:
            case {"step": step, "m": m, "v": v}:
                return cls(step, m, v)
            case _:
                return cls(0, torch.zeros_like(like), torch.zeros_like(like))

    def advanced(self, grad: Tensor, betas: tuple[float, float]) -> AdamMoments:
        beta1, beta2 = betas
        return AdamMoments(
            step=self.step + 1,
            m=self.m.lerp(grad, 1 - beta1),
            v=self.v.mul(beta2).addcmul(grad, grad, value=1 - beta2),
        )

    def as_state(self) -> State:
        return {"step": self.step, "m": self.m, "v": self.v}


def sgd(w, dw, state, lr=1e-2):
    r"""One step of plain stochastic gradient descent.

    .. math::
        w_{t+1} = w_t - \mathrm{lr} \cdot \nabla_w L(w_t)

    Args:
        w (Tensor): parameters, any shape, float32/float64.
        dw (Tensor): gradient of the loss at ``w``, same shape, dtype and device as ``w``.
        state (dict): optimizer state; SGD keeps none (``{}``).
        lr (float): learning rate. Default: ``1e-2``.

    Returns:
        (w_next, state_next): ``w_next`` a new tensor shaped like ``w``; ``state_next`` a new,
        empty dict.

    Notes: W8 §1.1 (SGD and its three problems).

    Agrees with ``torch.optim.SGD([w], lr=lr)``.
    """
    return w.add(dw, alpha=-lr), {}


def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):
    r"""One step of SGD with (heavy-ball) momentum, in PyTorch's form.

    .. math::
        v_{t+1} = \mu \, v_t + \nabla_w L(w_t), \qquad w_{t+1} = w_t - \mathrm{lr} \cdot v_{t+1}

    with :math:`v_0 = 0`, so the first velocity is the first gradient.

    Args:
        w (Tensor): parameters, any shape, float32/float64.
        dw (Tensor): gradient of the loss at ``w``, same shape, dtype and device as ``w``.
        state (dict): ``{}`` on the first call, afterwards ``{"velocity": Tensor like w}``.
        lr (float): learning rate. Default: ``1e-2``.
        momentum (float): :math:`\mu`, the friction/decay of the velocity. Default: ``0.9``.

    Returns:
        (w_next, state_next): ``state_next = {"velocity": v_{t+1}}``, a new dict, where
        :math:`v_{t+1} = \mu v_t + \nabla_w L(w_t)` is the sum of raw gradients above (not
        scaled by ``lr``). The returned state is graded too, after every step, not only
        ``w_next``.

    Notes: W8 §1.2. Some texts (the notes among them) write
    :math:`v = \mu v - \mathrm{lr}\, g,\ w = w + v`; with a constant learning rate that moves
    ``w`` along the same trajectory, but its velocity is this one scaled by ``-lr``. PyTorch (and
    this function) accumulates raw gradients and multiplies by ``lr`` at the end: store that
    velocity. A state holding the notes' velocity gets ``w_next`` right and ``state_next`` wrong,
    and loses half of each test's points.

    Agrees with ``torch.optim.SGD([w], lr=lr, momentum=momentum)`` (``dampening=0``,
    ``nesterov=False``), whose buffer is initialised to the first gradient.
    """
    match state:
        case {"velocity": Tensor() as velocity}:
            velocity = velocity.mul(momentum).add(dw)
        case _:
            velocity = dw.clone()  # PyTorch starts the buffer at the first gradient
    return w.add(velocity, alpha=-lr), {"velocity": velocity}


def adagrad(w, dw, state, lr=1e-2, eps=1e-10):
    r"""One step of AdaGrad: a per-coordinate learning rate from the sum of squared gradients.

    .. math::
        G_{t+1} = G_t + g_t \odot g_t, \qquad
        w_{t+1} = w_t - \mathrm{lr} \cdot \frac{g_t}{\sqrt{G_{t+1}} + \epsilon}

    with :math:`G_0 = 0` and :math:`g_t = \nabla_w L(w_t)`.

    Args:
        w (Tensor): parameters, any shape, float32/float64.
        dw (Tensor): gradient of the loss at ``w``, same shape, dtype and device as ``w``.
        state (dict): ``{}`` on the first call, afterwards ``{"sum_sq": Tensor like w}``.
        lr (float): learning rate. Default: ``1e-2``.
        eps (float): added to the denominator *after* the square root. Default: ``1e-10``.

    Returns:
        (w_next, state_next): ``state_next = {"sum_sq": G_{t+1}}``, a new dict.

    Notes: W8 §1.3 (and why its step size decays towards zero).

    Agrees with ``torch.optim.Adagrad([w], lr=lr, eps=eps)`` (``lr_decay=0``,
    ``initial_accumulator_value=0``, ``weight_decay=0``).
    """
    sum_sq = _buffer(state, "sum_sq", w).addcmul(dw, dw)
    std = sum_sq.sqrt().add(eps)
    return w.addcdiv(dw, std, value=-lr), {"sum_sq": sum_sq}


def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    r"""One step of RMSProp: AdaGrad with an exponential moving average instead of a sum.

    .. math::
        s_{t+1} = \alpha\, s_t + (1 - \alpha)\, g_t \odot g_t, \qquad
        w_{t+1} = w_t - \mathrm{lr} \cdot \frac{g_t}{\sqrt{s_{t+1}} + \epsilon}

    with :math:`s_0 = 0` (no bias correction, as in PyTorch).

    Args:
        w (Tensor): parameters, any shape, float32/float64.
        dw (Tensor): gradient of the loss at ``w``, same shape, dtype and device as ``w``.
        state (dict): ``{}`` on the first call, afterwards ``{"sq_avg": Tensor like w}``.
        lr (float): learning rate. Default: ``1e-2``.
        alpha (float): decay rate of the moving average. Default: ``0.99``.
        eps (float): added to the denominator *after* the square root. Default: ``1e-8``.

    Returns:
        (w_next, state_next): ``state_next = {"sq_avg": s_{t+1}}``, a new dict.

    Notes: W8 §1.4.

    Agrees with ``torch.optim.RMSprop([w], lr=lr, alpha=alpha, eps=eps)`` (``momentum=0``,
    ``centered=False``).
    """
    sq_avg = _buffer(state, "sq_avg", w).mul(alpha).addcmul(dw, dw, value=1 - alpha)
    return w.addcdiv(dw, sq_avg.sqrt().add(eps), value=-lr), {"sq_avg": sq_avg}


def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    r"""One step of Adam: momentum (first moment) + RMSProp (second moment) + bias correction.

    .. math::
        t &\leftarrow t + 1 \\
        m_t &= \beta_1 m_{t-1} + (1 - \beta_1)\, g, \qquad
        v_t = \beta_2 v_{t-1} + (1 - \beta_2)\, g \odot g \\
        \hat m_t &= \frac{m_t}{1 - \beta_1^t}, \qquad \hat v_t = \frac{v_t}{1 - \beta_2^t} \\
        w &\leftarrow w - \mathrm{lr} \cdot \frac{\hat m_t}{\sqrt{\hat v_t} + \epsilon}

    with :math:`m_0 = v_0 = 0`, :math:`t_0 = 0`.

    Args:
        w (Tensor): parameters, any shape, float32/float64.
        dw (Tensor): gradient :math:`g` of the loss at ``w``, same shape, dtype and device.
        state (dict): ``{}`` on the first call, afterwards
            ``{"step": int, "m": Tensor like w, "v": Tensor like w}``.
        lr (float): learning rate. Default: ``1e-3``.
        betas (tuple[float, float]): :math:`(\beta_1, \beta_2)`. Default: ``(0.9, 0.999)``.
        eps (float): added after the square root of :math:`\hat v_t`. Default: ``1e-8``.

    Returns:
        (w_next, state_next): ``state_next = {"step": t, "m": m_t, "v": v_t}``, a new dict;
        ``"step"`` is a Python int.

    Notes: W8 §1.5 (why the bias correction: :math:`m_0 = v_0 = 0` makes early estimates small).

    Agrees with ``torch.optim.Adam([w], lr=lr, betas=betas, eps=eps)`` (``amsgrad=False``,
    ``weight_decay=0``).
    """
    moments = AdamMoments.from_state(state, w).advanced(dw, betas)
    beta1, beta2 = betas
    bias1, bias2 = 1 - beta1**moments.step, 1 - beta2**moments.step
    denom = (moments.v.sqrt() / math.sqrt(bias2)).add(eps)
    return w.addcdiv(moments.m, denom, value=-lr / bias1), moments.as_state()


def clip_grad_norm(grads, max_norm):
    r"""Rescale a list of gradients so that their global L2 norm is at most ``max_norm``.

    .. math::
        \|g\| = \sqrt{\textstyle\sum_i \|g_i\|_2^2}, \qquad
        g_i \leftarrow g_i \cdot \min\!\left(1, \frac{\mathrm{max\_norm}}{\|g\| + 10^{-6}}\right)

    The direction of the full gradient is kept; only its length is limited.

    Args:
        grads (list[Tensor]): gradients, any shapes, float32/float64, one device.
        max_norm (float): the largest allowed global norm.

    Returns:
        (clipped, total_norm): ``clipped`` a list of new tensors, one per gradient, same shapes;
        ``total_norm`` the global norm *before* clipping, a 0-dim tensor. An empty list gives
        ``([], tensor(0.))``.

    Notes: L5 §6.1 (norm clipping against exploding gradients), L7-8 (Lecture 7) §四.

    Agrees with ``torch.nn.utils.clip_grad_norm_`` (``norm_type=2``), which does the same in
    place on ``p.grad`` and also clamps the coefficient at 1.0. No guard against overflow is
    asked for: where the sum of squares overflows the dtype (float32 gradients of about 1e19 and
    above), ``total_norm`` is ``inf`` and the clipped gradients are zeros, as
    ``clip_grad_norm_`` gives too. The graded gradients are far from that range.
    """
    if not grads:
        return [], _EMPTY_NORM.clone()
    total_norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    coef = torch.clamp(max_norm / (total_norm + _CLIP_EPS.to(total_norm)), max=1.0)
    return [g * coef.to(g) for g in grads], total_norm
