# function: attention.scaled_dot_product_attention
# mistake: the scores are divided by the square root of the value width v.shape[-1] instead of
#   the query/key width d (the same only when dv == d)
# class: wrong scale
# confirmed: q (2,4,3), dv=6: max |diff| 0.28 vs F.scaled_dot_product_attention; agrees when dv
#   == d
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isinf(row_max), torch.zeros_like(row_max), row_max)
    e = torch.exp(scores - row_max)
    total = e.sum(dim=-1, keepdim=True)
    weights = e / total.clamp_min(torch.finfo(e.dtype).tiny)
    return weights @ v, weights
