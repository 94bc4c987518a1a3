# function: attention.scaled_dot_product_attention
# mistake: masked scores are set to -1e9 instead of -inf, so a query row with no allowed key
#   gets uniform weights over all keys (and the mean of the values) instead of zeros
# class: mask applied wrongly (fully masked rows)
# confirmed: q=(1,3,4), k=(1,5,4), v=(1,5,2), mask row 1 all False: that row gets weights
#   [0.2]*5 and a non-zero output instead of zeros; rows with an allowed key agree with
#   F.scaled_dot_product_attention (2e-16)
import math
import torch
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
