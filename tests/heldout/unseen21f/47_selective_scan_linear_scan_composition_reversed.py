# function: selective_scan.linear_scan
# mistake: in the doubling scan the two affine maps are composed in the wrong order: the new
#   offset is a_left * b_right + b_left instead of a_right * b_left + b_right
# class: wrong formula
# confirmed: max |diff| 3.2 vs the sequential loop h = a[:, t] * h + b[:, t] on
#   a=rand(2,8,3)*1.5; T=1 agrees
def linear_scan(a, b, h0=None):
    dtype = torch.promote_types(a.dtype, b.dtype)
    if h0 is not None:
        dtype = torch.promote_types(dtype, h0.dtype)
    A = a.to(dtype)
    Bv = b.to(dtype)
    if h0 is not None:
        first = Bv[:, :1] + A[:, :1] * h0.to(dtype).unsqueeze(1)
        Bv = torch.cat([first, Bv[:, 1:]], dim=1)
    T = A.shape[1]
    k = 1
    while k < T:
        A_left, B_left = A[:, :-k], Bv[:, :-k]
        A_right, B_right = A[:, k:], Bv[:, k:]
        new_B = A_left * B_right + B_left
        new_A = A_right * A_left
        Bv = torch.cat([Bv[:, :k], new_B], dim=1)
        A = torch.cat([A[:, :k], new_A], dim=1)
        k *= 2
    return Bv.clone()
