# function: attention.multi_head_attention
# mistake: the heads are split by reshaping (B, L, E) straight to (B, h, L, E/h) instead of
#   to (B, L, h, E/h) followed by a transpose, so each "head" mixes positions and features
#   (right only for one head or a single position)
# class: transpose/reshape
# confirmed: vs torch.nn.MultiheadAttention(12, 3, batch_first=True) (in_proj split into
#   W_q, W_k, W_v) on query (2,5,12), key=value (2,7,12), float64: out max |diff| 0.562,
#   weights 0.404; with 1 head it agrees
import torch
def multi_head_attention(query, key, value, params, num_heads, mask=None):
    B, L, E = query.shape
    S = key.shape[1]
    hd = E // num_heads
    Q = (query @ params["W_q"].T + params["b_q"]).reshape(B, num_heads, L, hd)
    K = (key @ params["W_k"].T + params["b_k"]).reshape(B, num_heads, S, hd)
    V = (value @ params["W_v"].T + params["b_v"]).reshape(B, num_heads, S, hd)
    m = None if mask is None else mask.unsqueeze(-3)
    out, weights = scaled_dot_product_attention(Q, K, V, m)
    out = out.reshape(B, L, E)
    return out @ params["W_o"].T + params["b_o"], weights
