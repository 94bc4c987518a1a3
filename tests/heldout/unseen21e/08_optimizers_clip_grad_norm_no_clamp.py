# function: optimizers.clip_grad_norm
# mistake: the coefficient max_norm / (norm + 1e-6) is applied even when it is above 1, so
#   gradients that are already short get stretched up to max_norm
# class: missing clamp
# confirmed: vs torch.nn.utils.clip_grad_norm_(max_norm=5) on gradients of global norm 0.39,
#   float64: torch leaves them unchanged, here they are stretched (max |diff| 2.72)
import torch
def clip_grad_norm(grads, max_norm):
    if len(grads) == 0:
        return [], torch.tensor(0.0)
    total = torch.sqrt(sum((g * g).sum() for g in grads))
    coef = max_norm / (total + 1e-6)
    return [g * coef for g in grads], total
