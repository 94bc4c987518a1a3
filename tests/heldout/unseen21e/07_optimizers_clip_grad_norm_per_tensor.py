# function: optimizers.clip_grad_norm
# mistake: every gradient is clipped by its own norm instead of by the one global norm over
#   all of them, which changes the direction of the full gradient
# class: wrong scope (per tensor instead of global)
# confirmed: vs torch.nn.utils.clip_grad_norm_(max_norm=1) on [randn(3,4), 0.1*randn(5)],
#   float64: total norm agrees, clipped gradients max |diff| 0.106 (the small one is not
#   scaled down)
import torch
def clip_grad_norm(grads, max_norm):
    if len(grads) == 0:
        return [], torch.tensor(0.0)
    clipped = []
    sq = 0.0
    for g in grads:
        n = torch.sqrt((g * g).sum())
        sq = sq + n * n
        coef = torch.clamp(max_norm / (n + 1e-6), max=1.0)
        clipped.append(g * coef)
    return clipped, torch.sqrt(sq)
