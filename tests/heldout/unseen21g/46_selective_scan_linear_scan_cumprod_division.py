# function: selective_scan.linear_scan
# mistake: closed form h_t = P_t * (h0 + cumsum(b / P)_t) with P = cumprod(a): exact on short
#   sequences, but P underflows on long ones (0/0 = NaN, inf * 0) and any a = 0 divides by zero
# class: numerical instability (subtle)
# confirmed: matches a sequential loop (9e-16) at T=9; NaN from t=170 on at T=400 (float32, a in
#   [0.3, 1]), NaN at T=2000 in float64, NaN after any a = 0
import torch


def linear_scan(a, b, h0=None):
    P = torch.cumprod(a, dim=1)
    acc = torch.cumsum(b / P, dim=1)
    if h0 is not None:
        acc = acc + h0.unsqueeze(1)
    return P * acc
