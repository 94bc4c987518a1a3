# function: optimizers.clip_grad_norm
# mistake: each gradient is clipped by its own norm instead of by the global norm of all of them,
#   so the direction of the full gradient is not kept
# class: wrong formula
# confirmed: grads [3,4] and [0.5], max_norm=1: gives [0.6,0.8], [0.5] instead of both scaled by
#   1/5.025; max |diff| 0.45 vs torch.nn.utils.clip_grad_norm_ on randn (3,4)+(5,)
import torch


def clip_grad_norm(grads, max_norm):
    if len(grads) == 0:
        return [], torch.tensor(0.0)
    norms = [torch.sqrt((g * g).sum()) for g in grads]
    total_norm = torch.sqrt(sum(n * n for n in norms))
    clipped = []
    for g, n in zip(grads, norms):
        coef = min(1.0, max_norm / (n.item() + 1e-6))
        clipped.append(g * coef)
    return clipped, total_norm
