"""Optimizers (terse)."""
from __future__ import annotations

import torch


def sgd(w, dw, state, lr=1e-2):
    return w - lr * dw, {}


def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):
    v = dw.clone() if "velocity" not in state else momentum * state["velocity"] + dw
    return w - lr * v, {"velocity": v}


def adagrad(w, dw, state, lr=1e-2, eps=1e-10):
    G = state.get("sum_sq", torch.zeros_like(w)) + dw * dw
    return w - lr * dw / (G.sqrt() + eps), {"sum_sq": G}


def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    s = alpha * state.get("sq_avg", torch.zeros_like(w)) + (1 - alpha) * dw * dw
    return w - lr * dw / (s.sqrt() + eps), {"sq_avg": s}


def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    b1, b2 = betas
    t = state.get("step", 0) + 1
    m = b1 * state.get("m", torch.zeros_like(w)) + (1 - b1) * dw
    v = b2 * state.get("v", torch.zeros_like(w)) + (1 - b2) * dw * dw
    w_next = w - lr * (m / (1 - b1 ** t)) / ((v / (1 - b2 ** t)).sqrt() + eps)
    return w_next, {"step": t, "m": m, "v": v}


def clip_grad_norm(grads, max_norm):
    if not grads:
        return [], torch.tensor(0.0)
    total = torch.stack([g.pow(2).sum() for g in grads]).sum().sqrt()
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    return [g * coef for g in grads], total
