# function: attention.scaled_dot_product_attention
# mistake: the scores are divided by the square root of the value width dv instead of the
#   query/key width d (right whenever d == dv, as in most self-attention)
# class: wrong scale
# confirmed: vs F.scaled_dot_product_attention on q=(2,5,8), k=(2,6,8), v=(2,6,4), float64:
#   out max |diff| 0.285; with dv = d = 8 it agrees
import math
import torch
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ v, weights
