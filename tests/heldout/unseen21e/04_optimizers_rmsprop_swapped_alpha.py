# function: optimizers.rmsprop
# mistake: the two weights of the moving average are swapped: the old average is multiplied by
#   (1 - alpha) and the new squared gradient by alpha, so the average forgets almost at once
# class: wrong formula
# confirmed: 5 steps vs torch.optim.RMSprop(lr=0.05, alpha=0.99), w=randn(3,4), float64:
#   weights max |diff| 1.15, sq_avg vs square_avg max |diff| 4.46
import torch
def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    s = state.get("sq_avg", torch.zeros_like(w))
    s = (1 - alpha) * s + alpha * dw * dw
    return w - lr * dw / (torch.sqrt(s) + eps), {"sq_avg": s}
