# function: optimizers.adagrad
# mistake: the step divides by the square root of the accumulator from before this gradient was
#   added (G_t instead of G_{t+1}); the new sum is only stored for the next call
# class: off by one
# confirmed: first step on w=[1], dw=[0.5], lr=0.1 gives -5e8 (0.5 / eps) instead of 0.9; max
#   |diff| 1.9e9 after 4 steps vs torch.optim.Adagrad
import torch


def adagrad(w, dw, state, lr=1e-2, eps=1e-10):
    G = state.get("sum_sq", torch.zeros_like(w))
    w_next = w - lr * dw / (torch.sqrt(G) + eps)
    G_next = G + dw * dw
    return w_next, {"sum_sq": G_next}
