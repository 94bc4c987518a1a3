# function: optimizers.clip_grad_norm
# mistake: the coefficient max_norm / (norm + 1e-6) is applied without min(1, .), so gradients
#   whose norm is already below max_norm are scaled up to it
# class: missing clamp
# confirmed: right when the norm exceeds max_norm; max |diff| 0.33 vs
#   torch.nn.utils.clip_grad_norm_ for grads randn(4,3)*0.1, randn(5)*0.1, max_norm=1
import torch


def clip_grad_norm(grads, max_norm):
    if not grads:
        return [], torch.tensor(0.0)
    total_norm = torch.sqrt(sum([(g ** 2).sum() for g in grads]))
    coef = max_norm / (total_norm + 1e-6)
    return [g * coef for g in grads], total_norm
