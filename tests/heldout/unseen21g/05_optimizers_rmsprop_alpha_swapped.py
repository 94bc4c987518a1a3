# function: optimizers.rmsprop
# mistake: the moving-average weights are swapped, s = (1-alpha)*s + alpha*g^2, so the newest
#   squared gradient gets weight 0.99 instead of 0.01
# class: swapped coefficients
# confirmed: max |diff| 0.20 in w and 7.44 in sq_avg vs torch.optim.RMSprop(lr=0.01, alpha=0.99)
#   over 3 steps (w=randn(5,3))
import torch


def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    s = state["sq_avg"] if "sq_avg" in state else torch.zeros_like(w)
    s = (1 - alpha) * s + alpha * dw ** 2
    w_next = w - lr * dw / (s.sqrt() + eps)
    return w_next, {"sq_avg": s}
