# function: transformer.layer_norm
# mistake: eps is added to the standard deviation, (x - mu) / (sigma + eps), instead of to the
#   variance under the square root
# class: numerics
# confirmed: x=randn(4,8)*1e-2, unit weight: max |diff| 0.18 vs F.layer_norm; on randn inputs max
#   |diff| 9.6e-4 in float64
def layer_norm(x, weight, bias, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    sigma = ((x - mu) ** 2).mean(-1, keepdim=True).sqrt()
    return weight * (x - mu) / (sigma + eps) + bias
