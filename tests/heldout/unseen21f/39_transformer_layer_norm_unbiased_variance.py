# function: transformer.layer_norm
# mistake: the variance is torch.var's default, the unbiased one (divide by E - 1), instead of
#   the biased one LayerNorm uses (divide by E)
# class: API misuse
# confirmed: max |diff| 0.157 vs F.layer_norm on x=randn(2,3,6), float64
def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True)
    x_hat = (x - mean) / torch.sqrt(var + eps)
    return x_hat * weight + bias
