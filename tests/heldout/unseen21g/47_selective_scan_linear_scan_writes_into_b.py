# function: selective_scan.linear_scan
# mistake: the scan works in place on `h = b` (no clone), so it overwrites the caller's b and
#   returns that argument itself; the values are right (and autograd through it breaks)
# class: in-place mutation of an argument
# confirmed: values match a sequential loop (4e-16), but the caller's b changes by up to 2.75 and
#   is the returned tensor itself (B=2 T=9, h0 given)
import torch


def linear_scan(a, b, h0=None):
    T = a.shape[1]
    h = b
    coef = a.clone()
    if h0 is not None:
        h[:, 0] = h[:, 0] + a[:, 0] * h0
    offset = 1
    while offset < T:
        h[:, offset:] = h[:, offset:] + coef[:, offset:] * h[:, :-offset]
        coef[:, offset:] = coef[:, offset:] * coef[:, :-offset]
        offset *= 2
    return h
