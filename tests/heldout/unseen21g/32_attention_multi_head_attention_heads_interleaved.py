# function: attention.multi_head_attention
# mistake: the projections are split as view(B, L, E // h, h), so head i gets every h-th feature
#   (interleaved) instead of the i-th contiguous block of E // h features
# class: wrong reshape (head split)
# confirmed: out max |diff| 0.96, weights 0.45 vs nn.MultiheadAttention(8, 2, batch_first=True),
#   B=2 L=4 S=5
import torch


def multi_head_attention(query, key, value, params, num_heads, mask=None):
    B, L, E = query.shape
    S = key.shape[1]
    d_head = E // num_heads
    Q = query @ params["W_q"].T + params["b_q"]
    K = key @ params["W_k"].T + params["b_k"]
    V = value @ params["W_v"].T + params["b_v"]
    Q = Q.view(B, L, d_head, num_heads).permute(0, 3, 1, 2)
    K = K.view(B, S, d_head, num_heads).permute(0, 3, 1, 2)
    V = V.view(B, S, d_head, num_heads).permute(0, 3, 1, 2)
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    out, weights = scaled_dot_product_attention(Q, K, V, mask)
    out = out.permute(0, 2, 3, 1).reshape(B, L, E)
    return out @ params["W_o"].T + params["b_o"], weights
