# function: attention.multi_head_attention
# mistake: a 3-dim mask (B, 1, S) or (B, L, S) is passed to the per-head scores (B, h, L, S)
#   without a head axis, so its batch axis lines up with the head axis: head i gets batch row
#   i's mask (raises when B != num_heads and B > 1; right for B = 1 and for 2-dim masks)
# class: broadcasting (missing axis)
# confirmed: vs nn.MultiheadAttention(8, 2) with key_padding_mask: out off by 1.02 for B=2 and a
#   (B,1,S) mask; right for an (L,S) causal mask and for B=1; RuntimeError for B=3
import torch


def multi_head_attention(query, key, value, params, num_heads, mask=None):
    B, L, E = query.shape
    S = key.shape[1]
    hd = E // num_heads

    def split(t, n):
        return t.reshape(B, n, num_heads, hd).transpose(1, 2)

    q = split(query @ params["W_q"].T + params["b_q"], L)
    k = split(key @ params["W_k"].T + params["b_k"], S)
    v = split(value @ params["W_v"].T + params["b_v"], S)
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    out = out.transpose(1, 2).reshape(B, L, E)
    return out @ params["W_o"].T + params["b_o"], weights
