# function: selective_scan.linear_scan
# mistake: the scan is written as h_t = P_t * (h0 + cumsum(b / P)) with P = cumprod(a), which
#   divides by a prefix product: it underflows to 0 on long sequences (then inf/nan) and breaks
#   for a = 0
# class: numerics
# confirmed: a=[0.5, 0, 2], b=1: nan after the zero instead of [1, 1, 3]; a=rand(2,300,3)*1.5 in
#   float32: nan vs the sequential loop; short sequences agree
def linear_scan(a, b, h0=None):
    P = torch.cumprod(a, dim=1)
    S = torch.cumsum(b / P, dim=1)
    if h0 is not None:
        S = S + h0.unsqueeze(1)
    return P * S
