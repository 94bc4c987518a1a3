"""Optimizers: SGD, Momentum, AdaGrad, RMSProp, Adam and gradient clipping.

My notes while doing this (W8 §1.1-1.5):
- every rule returns a NEW state dict, never touches the old one
- PyTorch puts eps after the sqrt, and SGD's velocity starts at the first gradient
"""

from __future__ import annotations

import logging
import sys
import time

import torch

DEBUG = False  # flip to True to see what every step does (prints go to stderr)
log = logging.getLogger(__name__)


def _debug(*args):
    """Print to stderr only when DEBUG is on, so the tests stay quiet."""
    if DEBUG:
        print("[optimizers]", *args, file=sys.stderr)


def _check_same(w, dw, name):
    assert isinstance(w, torch.Tensor), f"{name}: w must be a tensor, got {type(w).__name__}"
    assert w.shape == dw.shape, f"{name}: w {tuple(w.shape)} and dw {tuple(dw.shape)} differ"


def sgd(w, dw, state, lr=1e-2):
    """Plain SGD: w <- w - lr * dw."""
    _check_same(w, dw, "sgd")
    t0 = time.perf_counter()
    w_next = w - lr * dw  # a new tensor, w itself is untouched
    _debug(f"sgd: lr={lr:.3g}, took {time.perf_counter() - t0:.2e}s")
    return w_next, {}


def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):
    """Heavy-ball momentum, PyTorch's form: v = mu * v + g, w = w - lr * v."""
    _check_same(w, dw, "sgd_momentum")
    if "velocity" in state:
        v = momentum * state["velocity"] + dw
    else:
        # first call: PyTorch initialises the buffer to the gradient itself
        v = dw.clone()
    _debug("sgd_momentum: |v| =", float(v.norm()))
    return w - lr * v, {"velocity": v}


def adagrad(w, dw, state, lr=1e-2, eps=1e-10):
    """AdaGrad: accumulate squared gradients, divide by their sqrt (+eps after the sqrt)."""
    _check_same(w, dw, "adagrad")
    G_old = state["sum_sq"] if "sum_sq" in state else torch.zeros_like(w)
    G = G_old + dw * dw
    step = lr * dw / (torch.sqrt(G) + eps)
    log.debug("adagrad step max %s", step.abs().max())
    return w - step, {"sum_sq": G}


def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    """RMSProp: exponential moving average of g^2, no bias correction."""
    _check_same(w, dw, "rmsprop")
    assert 0.0 <= alpha <= 1.0, f"alpha should be in [0, 1], got {alpha}"
    s_old = state.get("sq_avg")
    if s_old is None:
        s_old = torch.zeros_like(w)
    s = alpha * s_old + (1.0 - alpha) * dw * dw
    return w - lr * dw / (s.sqrt() + eps), {"sq_avg": s}


def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    """Adam with bias correction (step counter is a Python int)."""
    _check_same(w, dw, "adam")
    beta1, beta2 = betas
    t = int(state.get("step", 0)) + 1
    m_prev = state.get("m", torch.zeros_like(w))
    v_prev = state.get("v", torch.zeros_like(w))
    m = beta1 * m_prev + (1 - beta1) * dw          # first moment
    v = beta2 * v_prev + (1 - beta2) * (dw * dw)   # second moment
    m_hat = m / (1 - beta1 ** t)                    # bias correction
    v_hat = v / (1 - beta2 ** t)
    w_next = w - lr * m_hat / (torch.sqrt(v_hat) + eps)
    _debug(f"adam t={t} m_hat[0]={m_hat.flatten()[0].item():.4f}")
    return w_next, {"step": t, "m": m, "v": v}


def clip_grad_norm(grads, max_norm):
    """Global-norm clipping (L5 §6.1): scale everything by min(1, max_norm / (norm + 1e-6))."""
    if len(grads) == 0:
        _debug("clip_grad_norm: empty list")
        return [], torch.tensor(0.0)
    norms = [torch.sqrt((g * g).sum()) for g in grads]  # per-tensor L2 norm
    total_norm = torch.sqrt(sum(n * n for n in norms))
    coef = max_norm / (total_norm + 1e-6)
    coef = torch.clamp(coef, max=1.0)  # never scale up
    _debug(f"clip: total={total_norm.item():.4f}, coef={coef.item():.4f}")
    clipped = [g * coef for g in grads]
    return clipped, total_norm
