# function: transformer.encoder_block
# mistake: in the pre-LN block the residual adds the normalised input instead of the raw one,
#   x' = LN1(x) + SA(LN1(x)) (and likewise around the FFN), so the skip path is normalised too
# class: wrong formula
# confirmed: norm_first=True: max |diff| 5.08 vs
#   nn.TransformerEncoderLayer(norm_first=True).eval() on B=2, T=5, E=8 with a causal mask; post-
#   LN agrees
def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    p_sa = params["self_attn"]
    p_ff = params["ffn"]

    def ln(t, name):
        return layer_norm(t, params[name]["weight"], params[name]["bias"])

    def ff(t):
        return feed_forward(t, p_ff["W1"], p_ff["b1"], p_ff["W2"], p_ff["b2"])

    if norm_first:
        x = ln(x, "norm1")
        x = x + multi_head_attention(x, x, x, p_sa, num_heads, mask=mask)[0]
        x = ln(x, "norm2")
        x = x + ff(x)
        return x
    x = ln(x + multi_head_attention(x, x, x, p_sa, num_heads, mask=mask)[0], "norm1")
    return ln(x + ff(x), "norm2")
