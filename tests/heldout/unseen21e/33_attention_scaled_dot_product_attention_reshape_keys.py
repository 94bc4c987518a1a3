# function: attention.scaled_dot_product_attention
# mistake: K is "transposed" with a reshape to (..., d, S), which keeps the memory order and
#   scrambles the entries (right only when S == 1 or d == 1)
# class: transpose/reshape
# confirmed: vs F.scaled_dot_product_attention on q=(2,3,5,8), k=(2,3,6,8), v=(2,3,6,4),
#   float64: out max |diff| 2.12
import math
import torch
def scaled_dot_product_attention(q, k, v, mask=None):
    S, d = k.shape[-2], k.shape[-1]
    k_t = k.reshape(*k.shape[:-2], d, S)
    scores = q @ k_t / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ v, weights
