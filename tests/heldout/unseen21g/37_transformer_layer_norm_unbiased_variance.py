# function: transformer.layer_norm
# mistake: the variance is torch.var's default, the unbiased one (divide by E - 1), instead of
#   the biased variance LayerNorm uses
# class: biased vs unbiased variance
# confirmed: max |diff| 0.33 vs F.layer_norm on x=randn(2,3,8)
import torch


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias
