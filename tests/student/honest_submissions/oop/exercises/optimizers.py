"""Optimizers, written with a tiny class hierarchy (one class per rule)."""

from __future__ import annotations

from dataclasses import dataclass

import torch


class _Rule:
    """Base class: a stateless callable that maps (w, dw, state) to (w_next, state_next)."""

    name = "rule"

    def __init__(self, lr):
        self._lr = lr

    @property
    def lr(self):
        return self._lr

    def __call__(self, w, dw, state):
        direction, new_state = self.direction(w, dw, state)
        return w - self.lr * direction, new_state

    def direction(self, w, dw, state):  # pragma: no cover - overridden
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}(lr={self._lr})"

    @staticmethod
    def _buffer(state, key, like):
        return state[key] if key in state else torch.zeros_like(like)


class _SGD(_Rule):
    def direction(self, w, dw, state):
        return dw, {}


class _Momentum(_Rule):
    def __init__(self, lr, momentum):
        super().__init__(lr)
        self._mu = momentum

    def direction(self, w, dw, state):
        v = self._mu * state["velocity"] + dw if "velocity" in state else dw.clone()
        return v, {"velocity": v}


class _AdaGrad(_Rule):
    def __init__(self, lr, eps):
        super().__init__(lr)
        self._eps = eps

    def direction(self, w, dw, state):
        G = self._buffer(state, "sum_sq", w) + dw * dw
        return dw / (G.sqrt() + self._eps), {"sum_sq": G}


class _RMSProp(_Rule):
    def __init__(self, lr, alpha, eps):
        super().__init__(lr)
        self._alpha, self._eps = alpha, eps

    def direction(self, w, dw, state):
        s = self._alpha * self._buffer(state, "sq_avg", w) + (1 - self._alpha) * dw * dw
        return dw / (s.sqrt() + self._eps), {"sq_avg": s}


@dataclass(frozen=True)
class AdamConfig:
    lr: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8

    @classmethod
    def from_args(cls, lr, betas, eps):
        return cls(lr=lr, beta1=betas[0], beta2=betas[1], eps=eps)


class _Adam(_Rule):
    def __init__(self, config: AdamConfig):
        super().__init__(config.lr)
        self.__cfg = config  # name-mangled on purpose: nobody outside should touch it

    def direction(self, w, dw, state):
        c = self.__cfg
        t = state.get("step", 0) + 1
        m = c.beta1 * self._buffer(state, "m", w) + (1 - c.beta1) * dw
        v = c.beta2 * self._buffer(state, "v", w) + (1 - c.beta2) * dw * dw
        m_hat = m / (1 - c.beta1 ** t)
        v_hat = v / (1 - c.beta2 ** t)
        return m_hat / (v_hat.sqrt() + c.eps), {"step": t, "m": m, "v": v}


def sgd(w, dw, state, lr=1e-2):
    return _SGD(lr)(w, dw, state)


def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):
    return _Momentum(lr, momentum)(w, dw, state)


def adagrad(w, dw, state, lr=1e-2, eps=1e-10):
    return _AdaGrad(lr, eps)(w, dw, state)


def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    return _RMSProp(lr, alpha, eps)(w, dw, state)


def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    return _Adam(AdamConfig.from_args(lr, betas, eps))(w, dw, state)


class _GradList:
    """A list of gradients that knows its global norm."""

    __slots__ = ("_grads",)

    def __init__(self, grads):
        self._grads = list(grads)

    def __len__(self):
        return len(self._grads)

    def __iter__(self):
        return iter(self._grads)

    def __getitem__(self, i):
        return self._grads[i]

    @property
    def norm(self):
        return torch.stack([torch.linalg.vector_norm(g) for g in self._grads]).pow(2).sum().sqrt()

    def scaled(self, factor):
        return [g * factor for g in self._grads]


def clip_grad_norm(grads, max_norm):
    gl = _GradList(grads)
    if len(gl) == 0:
        return [], torch.tensor(0.0)
    total = gl.norm
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    return gl.scaled(coef), total


# --- helpers of the labs: Adam over many named tensors ----------------------------------------


class AdamGroup:
    """One ``adam`` state per named tensor (never shared between tensors of different shapes)."""

    def __init__(self, names, lr):
        self._lr = lr
        self._states = {name: {} for name in names}

    def __repr__(self):
        return f"AdamGroup(lr={self._lr}, tensors={len(self._states)})"

    def step(self, tensors, grads):
        """New tensors for the names in ``grads``, one adam step each; the states move on."""
        updated = {}
        for name, g in grads.items():
            updated[name], self._states[name] = adam(tensors[name], g, self._states[name], lr=self._lr)
        return updated


class AutogradTrainer:
    """Trains the named tensors of a flat dict: autograd gives the gradients, AdamGroup steps."""

    def __init__(self, params, names, lr):
        self.params = {k: v.clone() for k, v in params.items()}
        self._names = tuple(names)
        self._adam = AdamGroup(self._names, lr)
        self._losses = []

    def step(self, loss_fn):
        """One update; ``loss_fn(params)`` builds the loss from the dict it is given."""
        leaves = {k: self.params[k].detach().requires_grad_() for k in self._names}
        with torch.enable_grad():
            loss = loss_fn({**self.params, **leaves})
            grads = torch.autograd.grad(loss, [leaves[k] for k in self._names])
        self.params = {**self.params, **self._adam.step(self.params, dict(zip(self._names, grads)))}
        self._losses.append(loss.detach())
        return loss

    def losses(self, dtype, device):
        if not self._losses:
            return torch.zeros(0, dtype=dtype, device=device)
        return torch.stack(self._losses).to(dtype)
