# function: optimizers.rmsprop
# mistake: eps is added under the square root, sqrt(s + eps), instead of after it, sqrt(s) + eps
# class: numerics
# confirmed: one step on w=[1,-1], dw=[1e-4,-3e-5], lr=0.01: off by 0.09 vs torch.optim.RMSprop;
#   with randn gradients only float64 shows it (max |diff| 1.6e-8, rtol 1e-7)
import torch


def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    sq_avg = state.get("sq_avg", torch.zeros_like(w))
    sq_avg = alpha * sq_avg + (1 - alpha) * dw ** 2
    w_next = w - lr * dw / torch.sqrt(sq_avg + eps)
    return w_next, {"sq_avg": sq_avg}
