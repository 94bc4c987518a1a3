"""Optimizers in a functional style: pure helpers, partial application, reduce."""

from __future__ import annotations

import operator
from functools import partial, reduce

import torch

_zeros_if_missing = lambda state, key, like: state.get(key, None) if key in state else torch.zeros_like(like)
_ema = lambda decay, old, new: decay * old + (1 - decay) * new
_sq = lambda t: t * t


def _scaled_step(w, lr, direction):
    return w - lr * direction


def sgd(w, dw, state, lr=1e-2):
    return _scaled_step(w, lr, dw), {}


def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):
    match state:
        case {"velocity": v_old}:
            v = momentum * v_old + dw
        case _:
            v = dw.clone()
    return _scaled_step(w, lr, v), {"velocity": v}


def _adaptive(w, dw, acc, lr, eps):
    return _scaled_step(w, lr, dw / (torch.sqrt(acc) + eps))


def adagrad(w, dw, state, lr=1e-2, eps=1e-10):
    G = _zeros_if_missing(state, "sum_sq", w) + _sq(dw)
    return _adaptive(w, dw, G, lr, eps), {"sum_sq": G}


def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    s = _ema(alpha, _zeros_if_missing(state, "sq_avg", w), _sq(dw))
    return _adaptive(w, dw, s, lr, eps), {"sq_avg": s}


def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    (b1, b2), t = betas, state.get("step", 0) + 1
    m, v = (_ema(b, _zeros_if_missing(state, k, w), g) for b, k, g in ((b1, "m", dw), (b2, "v", _sq(dw))))
    correct = lambda x, b: x / (1 - b ** t)
    return _scaled_step(w, lr, correct(m, b1) / (torch.sqrt(correct(v, b2)) + eps)), {"step": t, "m": m, "v": v}


def clip_grad_norm(grads, max_norm):
    if not grads:
        return [], torch.tensor(0.0)
    total = torch.sqrt(reduce(operator.add, map(lambda g: _sq(g).sum(), grads)))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    return list(map(partial(operator.mul, coef), grads)), total
