# function: selective_scan.selective_scan
# mistake: the silu(z) gate is applied before the skip term is added, y = (h . C) * silu(z)
#   + D * u, so the skip connection escapes the gate
# class: wrong formula (order of operations)
# confirmed: vs a sequential loop written from selective_scan_ref (batch-first),
#   B=2,T=6,D=3,N=4, with D, z, delta_softplus=True, float64: y max |diff| 3.76; without z
#   it agrees
import torch
import torch.nn.functional as F
def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    if delta_bias is not None:
        delta = delta + delta_bias
    if delta_softplus:
        delta = F.softplus(delta)
    A_bar, B_bar = discretize(delta, A, B)
    h = linear_scan(A_bar, B_bar * u[..., None])
    y = (h * C[:, :, None, :]).sum(dim=-1)
    if z is not None:
        y = y * F.silu(z)
    if D is not None:
        y = y + D * u
    if return_last_state:
        return y, h[:, -1]
    return y
