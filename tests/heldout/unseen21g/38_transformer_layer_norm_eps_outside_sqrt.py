# function: transformer.layer_norm
# mistake: eps is added to the standard deviation, (x - mu) / (sigma + eps), instead of inside the
#   square root; within float32 tolerance for ordinary rows, wrong for near-constant rows and at
#   float64's tolerance
# class: eps placement (subtle)
# confirmed: vs F.layer_norm: x=randn(2,3,8)+1 in float32 within tolerance (1.2e-5, 0.27x); in
#   float64 2.5e-5 (326x tolerance); rows 1 + 1e-3*randn (float64) 3.54
import torch


def layer_norm(x, weight, bias, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    sigma = torch.sqrt(((x - mu) ** 2).mean(-1, keepdim=True))
    x_hat = (x - mu) / (sigma + eps)
    return weight * x_hat + bias
