# function: transformer.layer_norm
# mistake: the variance is the unbiased one (x.var divides by E - 1 by default) instead of the
#   biased one LayerNorm uses
# class: wrong scale
# confirmed: vs F.layer_norm(x, (8,), w, b) on x=3*randn(2,5,8), float64: max |diff| 0.16
import torch
def layer_norm(x, weight, bias, eps=1e-5):
    mu = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * weight + bias
