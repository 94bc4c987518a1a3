# function: optimizers.clip_grad_norm
# mistake: each gradient is clipped by its own norm instead of all of them by the global norm,
#   which changes the direction of the full gradient
# class: local instead of global norm
# confirmed: clipped grads max |diff| 0.32 vs torch.nn.utils.clip_grad_norm_ (total_norm right),
#   grads randn(4,3)*2 and randn(5)*2, max_norm=1
import torch


def clip_grad_norm(grads, max_norm):
    if len(grads) == 0:
        return [], torch.tensor(0.0)
    clipped = []
    sq = 0.0
    for g in grads:
        n = torch.sqrt((g * g).sum())
        sq = sq + n ** 2
        scale = torch.clamp(max_norm / (n + 1e-6), max=1.0)
        clipped.append(g * scale)
    return clipped, torch.sqrt(sq)
