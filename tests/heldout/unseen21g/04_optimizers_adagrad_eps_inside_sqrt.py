# function: optimizers.adagrad
# mistake: eps is added inside the square root, sqrt(G + eps), instead of after it; invisible for
#   ordinary gradients, wrong when the accumulated squares are comparable to eps (tiny gradients)
# class: eps placement (subtle)
# confirmed: vs torch.optim.Adagrad(lr=0.01, eps=1e-10) over 3 steps: w within tolerance for
#   dw=randn (1.1e-9), max |diff| 0.014 (2e5 x float64 tolerance) for dw=1e-5*randn(5,3)
import torch


def adagrad(w, dw, state, lr=1e-2, eps=1e-10):
    G = state.get("sum_sq", torch.zeros_like(w))
    G = G + dw * dw
    w_next = w - lr * dw / torch.sqrt(G + eps)
    return w_next, {"sum_sq": G}
