# function: attention.multi_head_attention
# mistake: a (B, L, S) or (B, 1, S) mask is passed to the per-head scores (B, h, L, S) without a
#   head axis, so it broadcasts as (1, B, ., S): batch row b's mask lands on head b (and the
#   shapes clash unless B == 1 or B == num_heads)
# class: shape case
# confirmed: B=2, 2 heads, (B,1,S) padding mask: max |diff| 0.56 vs nn.MultiheadAttention with
#   key_padding_mask; B=3, 4 heads: RuntimeError; (L,S) causal mask agrees
def multi_head_attention(query, key, value, params, num_heads, mask=None):
    B, L, E = query.shape
    S = key.shape[1]
    hd = E // num_heads

    def split(t, n):
        return t.reshape(B, n, num_heads, hd).permute(0, 2, 1, 3)

    Q = split(query @ params["W_q"].T + params["b_q"], L)
    K = split(key @ params["W_k"].T + params["b_k"], S)
    V = split(value @ params["W_v"].T + params["b_v"], S)
    o, w = scaled_dot_product_attention(Q, K, V, mask)
    o = o.permute(0, 2, 1, 3).reshape(B, L, E)
    return o @ params["W_o"].T + params["b_o"], w
