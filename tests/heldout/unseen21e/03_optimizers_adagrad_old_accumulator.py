# function: optimizers.adagrad
# mistake: the step divides by the square root of the accumulator from before this step's
#   squared gradient is added (G_t instead of G_{t+1}), so the first step divides by eps
# class: off by one
# confirmed: 5 steps vs torch.optim.Adagrad(lr=0.05, eps=1e-10), w=randn(3,4), float64:
#   weights off by up to 7.6e8 (the first step divides by eps)
import torch
def adagrad(w, dw, state, lr=1e-2, eps=1e-10):
    G = state.get("sum_sq", torch.zeros_like(w))
    w_next = w - lr * dw / (torch.sqrt(G) + eps)
    G_next = G + dw * dw
    return w_next, {"sum_sq": G_next}
