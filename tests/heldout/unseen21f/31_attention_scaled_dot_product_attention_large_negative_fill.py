# function: attention.scaled_dot_product_attention
# mistake: masked scores are filled with -1e9 instead of -inf, so a query row in which every key
#   is masked gets uniform weights (and the mean of the values) instead of zeros
# class: masks
# confirmed: a (L,S) mask with an all-False row: weights 1/S and the mean of v there (max |diff|
#   0.85) instead of zeros; rows with an allowed key agree with F.scaled_dot_product_attention
def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    out = torch.matmul(weights, v)
    return out, weights
