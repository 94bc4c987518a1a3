"""Optimizers, written the way I would in numpy: explicit shapes, one formula per line."""

from __future__ import annotations

import numpy as np
import torch

EPS_CLIP = 1e-6


def _zeros_like(w):
    # np.zeros_like equivalent
    return torch.zeros(w.shape, dtype=w.dtype, device=w.device)


def sgd(w, dw, state, lr=1e-2):
    assert w.shape == dw.shape
    return w - lr * dw, {}


def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):
    v = momentum * state["velocity"] + dw if "velocity" in state else dw * 1.0  # copy
    return w - lr * v, {"velocity": v}


def adagrad(w, dw, state, lr=1e-2, eps=1e-10):
    cache = state["sum_sq"] if "sum_sq" in state else _zeros_like(w)
    cache = cache + dw ** 2
    return w - lr * dw / (torch.sqrt(cache) + eps), {"sum_sq": cache}


def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    cache = state["sq_avg"] if "sq_avg" in state else _zeros_like(w)
    cache = alpha * cache + (1 - alpha) * dw ** 2
    return w - lr * dw / (torch.sqrt(cache) + eps), {"sq_avg": cache}


def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    beta1, beta2 = float(betas[0]), float(betas[1])
    t = state.get("step", 0) + 1
    m = state["m"] if "m" in state else _zeros_like(w)
    v = state["v"] if "v" in state else _zeros_like(w)
    m = beta1 * m + (1 - beta1) * dw
    v = beta2 * v + (1 - beta2) * (dw ** 2)
    mt = m / (1 - beta1 ** t)
    vt = v / (1 - beta2 ** t)
    w_next = w - lr * mt / (torch.sqrt(vt) + eps)
    return w_next, {"step": int(t), "m": m, "v": v}


def clip_grad_norm(grads, max_norm):
    if len(grads) == 0:
        return [], torch.tensor(0.0)
    total_sq = 0.0
    for g in grads:
        total_sq = total_sq + torch.sum(g * g)
    total_norm = torch.sqrt(total_sq)
    scale = max_norm / (total_norm + EPS_CLIP)
    scale = torch.minimum(scale, torch.ones_like(scale))
    return [g * scale for g in grads], total_norm


if __name__ == "__main__":
    torch.manual_seed(0)
    np.set_printoptions(precision=4, suppress=True)
    w = torch.tensor([1.0, -1.0])
    st = {}
    for _ in range(2):
        w, st = adam(w, torch.tensor([0.5, -3.0]), st, lr=0.1)
    print("adam after 2 steps:", w.numpy(), "step", st["step"])
    p = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
    opt = torch.optim.Adam([p], lr=0.1)
    for _ in range(2):
        p.grad = torch.tensor([0.5, -3.0])
        opt.step()
    print("torch.optim.Adam:       ", p.detach().numpy())
