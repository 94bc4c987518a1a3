# function: selective_scan.selective_scan
# mistake: softplus is applied to delta before delta_bias is added, softplus(delta) + bias,
#   instead of softplus(delta + bias) (delta can even turn negative)
# class: wrong order of operations
# confirmed: max |diff| 0.36 vs a float64 loop port of selective_scan_ref with delta_bias and
#   delta_softplus=True; right without delta_bias
import torch
import torch.nn.functional as F


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    if delta_softplus:
        delta = F.softplus(delta)
    if delta_bias is not None:
        delta = delta + delta_bias
    A_bar, B_bar = discretize(delta, A, B)
    h = linear_scan(A_bar, B_bar * u.unsqueeze(-1))  # (B, T, D, N)
    y = (h * C.unsqueeze(2)).sum(-1)
    if D is not None:
        y = y + u * D
    if z is not None:
        y = y * F.silu(z)
    if return_last_state:
        return y, h[:, -1]
    return y
