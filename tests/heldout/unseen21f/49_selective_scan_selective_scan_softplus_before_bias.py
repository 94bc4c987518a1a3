# function: selective_scan.selective_scan
# mistake: the softplus is applied to delta before delta_bias is added, softplus(delta) + bias,
#   instead of softplus(delta + bias)
# class: wrong order
# confirmed: with delta_bias and delta_softplus: max |diff| 327 vs a sequential
#   selective_scan_ref loop (B=2, T=7, D=4, N=3); without bias agrees
def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    if delta_softplus:
        delta = F.softplus(delta)
    if delta_bias is not None:
        delta = delta + delta_bias
    A_bar, B_bar = discretize(delta, A, B)
    h = linear_scan(A_bar, B_bar * u.unsqueeze(-1))
    y = torch.einsum("btdn,btn->btd", h, C)
    if D is not None:
        y = y + u * D
    if z is not None:
        y = y * F.silu(z)
    if return_last_state:
        return y, h[:, -1]
    return y
