# function: transformer.layer_norm
# mistake: eps is added to the standard deviation instead of to the variance,
#   (x - mu) / (sqrt(var) + eps), which differs noticeably for small variances or large eps
# class: numerics (eps placement)
# confirmed: vs F.layer_norm: x=0.01*randn(4,6), eps=1e-5: max |diff| 0.158; x=randn(4,6),
#   eps=0.5: max |diff| 0.441 (float64)
import torch
def layer_norm(x, weight, bias, eps=1e-5):
    mu = x.mean(dim=-1, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
    return (x - mu) / (torch.sqrt(var) + eps) * weight + bias
