# function: attention.scaled_dot_product_attention
# mistake: the boolean mask is read with nn.MultiheadAttention's meaning (True = blocked), so
#   exactly the allowed keys are removed; NaN rows are zeroed afterwards
# class: mask convention inverted
# confirmed: out max |diff| 3.26, weights 1.0 vs F.scaled_dot_product_attention(attn_mask=mask),
#   a (2,1,1,5) padding mask
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ v, weights
