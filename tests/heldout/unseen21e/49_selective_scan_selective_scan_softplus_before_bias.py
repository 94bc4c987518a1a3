# function: selective_scan.selective_scan
# mistake: softplus is applied to delta before delta_bias is added, softplus(delta) + bias,
#   instead of softplus(delta + bias) (right when there is no bias or no softplus)
# class: wrong formula (order of operations)
# confirmed: vs a sequential loop written from selective_scan_ref (batch-first),
#   B=2,T=6,D=3,N=4, with D, z, delta_bias, delta_softplus=True, float64: y max |diff| 2.5;
#   without delta_bias it agrees
import torch
import torch.nn.functional as F
def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    if delta_softplus:
        delta = F.softplus(delta)
    if delta_bias is not None:
        delta = delta + delta_bias
    A_bar, B_bar = discretize(delta, A, B)
    h = linear_scan(A_bar, B_bar * u[..., None])
    y = (h * C[:, :, None, :]).sum(dim=-1)
    if D is not None:
        y = y + D * u
    if z is not None:
        y = y * F.silu(z)
    if return_last_state:
        return y, h[:, -1]
    return y
