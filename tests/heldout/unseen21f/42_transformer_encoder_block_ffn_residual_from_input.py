# function: transformer.encoder_block
# mistake: in the post-LN block the FFN's residual adds the block input x instead of the output
#   x' of the first sublayer: y = LN2(x + FFN(x'))
# class: state bookkeeping
# confirmed: norm_first=False: max |diff| 4.69 vs nn.TransformerEncoderLayer(dropout=0,
#   batch_first=True).eval() on B=2, T=4, E=8, 2 heads; pre-LN agrees
def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    sa, ffn = params["self_attn"], params["ffn"]
    n1, n2 = params["norm1"], params["norm2"]
    if norm_first:
        h = layer_norm(x, n1["weight"], n1["bias"])
        attn, _ = multi_head_attention(h, h, h, sa, num_heads, mask)
        x1 = x + attn
        h2 = layer_norm(x1, n2["weight"], n2["bias"])
        return x1 + feed_forward(h2, ffn["W1"], ffn["b1"], ffn["W2"], ffn["b2"])
    attn, _ = multi_head_attention(x, x, x, sa, num_heads, mask)
    x1 = layer_norm(x + attn, n1["weight"], n1["bias"])
    f = feed_forward(x1, ffn["W1"], ffn["b1"], ffn["W2"], ffn["b2"])
    return layer_norm(x + f, n2["weight"], n2["bias"])
