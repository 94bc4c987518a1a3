# function: attention.multi_head_attention
# mistake: the per-head scores are divided by sqrt(E), the full model width, instead of
#   sqrt(E // num_heads), the width of one head (right only with a single head)
# class: wrong scale
# confirmed: vs torch.nn.MultiheadAttention(12, 3, batch_first=True) on query (2,5,12),
#   key=value (2,7,12), float64: out max |diff| 0.153, weights 0.171; with 1 head it agrees
import math
import torch
def multi_head_attention(query, key, value, params, num_heads, mask=None):
    B, L, E = query.shape
    S = key.shape[1]
    hd = E // num_heads
    Q = (query @ params["W_q"].T + params["b_q"]).reshape(B, L, num_heads, hd).transpose(1, 2)
    K = (key @ params["W_k"].T + params["b_k"]).reshape(B, S, num_heads, hd).transpose(1, 2)
    V = (value @ params["W_v"].T + params["b_v"]).reshape(B, S, num_heads, hd).transpose(1, 2)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(E)
    if mask is not None:
        scores = scores.masked_fill(~mask.unsqueeze(-3), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    out = (weights @ V).transpose(1, 2).reshape(B, L, E)
    return out @ params["W_o"].T + params["b_o"], weights
