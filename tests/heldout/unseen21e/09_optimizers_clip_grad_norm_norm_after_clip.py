# function: optimizers.clip_grad_norm
# mistake: the norm returned is measured after clipping (so it is never above max_norm)
#   instead of the global norm before clipping
# class: wrong quantity returned
# confirmed: vs torch.nn.utils.clip_grad_norm_(max_norm=1) on [randn(3,4), randn(5)],
#   float64: clipped gradients agree, returned norm 1.0000 vs 4.7523
import torch
def clip_grad_norm(grads, max_norm):
    if len(grads) == 0:
        return [], torch.tensor(0.0)
    total = torch.sqrt(sum((g * g).sum() for g in grads))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    clipped = [g * coef for g in grads]
    total = torch.sqrt(sum((g * g).sum() for g in clipped))
    return clipped, total
