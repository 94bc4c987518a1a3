# function: attention.multi_head_attention
# mistake: the projections are reshaped straight to (B, h, L, d_head) with view, instead of to
#   (B, L, h, d_head) followed by a transpose, so heads mix positions and features
# class: transpose/reshape
# confirmed: max |diff| 1.06 vs torch.nn.MultiheadAttention(batch_first=True, need_weights,
#   average_attn_weights=False) on B=2, L=4, S=5, E=8, 2 heads; agrees for one head and B=1
def multi_head_attention(query, key, value, params, num_heads, mask=None):
    B, L, E = query.shape
    S = key.shape[1]
    d = E // num_heads
    Q = (query @ params["W_q"].T + params["b_q"]).view(B, num_heads, L, d)
    K = (key @ params["W_k"].T + params["b_k"]).view(B, num_heads, S, d)
    V = (value @ params["W_v"].T + params["b_v"]).view(B, num_heads, S, d)
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    concat = heads.view(B, L, E)
    out = concat @ params["W_o"].T + params["b_o"]
    return out, weights
