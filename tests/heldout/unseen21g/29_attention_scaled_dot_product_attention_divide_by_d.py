# function: attention.scaled_dot_product_attention
# mistake: the scores are divided by d instead of sqrt(d) (the notes' garbled "dk sqrt(d_k)"
#   read as d_k), so the softmax is too flat
# class: wrong scale
# confirmed: out max |diff| 0.70, weights 0.30 vs F.scaled_dot_product_attention (weights by
#   explicit softmax), q, k, v randn (2,3,4|5,6), no mask
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    d = q.shape[-1]
    scores = torch.matmul(q, k.transpose(-2, -1)) / d
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.where(torch.isnan(weights), torch.zeros_like(weights), weights)
    return torch.matmul(weights, v), weights
