# function: transformer.encoder_block
# mistake: post-LN: the FFN's residual adds the block input x instead of the normalized
#   attention output x', y = LN2(x + FFN(x')) (pre-LN is right)
# class: wrong residual source
# confirmed: max |diff| 1.89 vs nn.TransformerEncoderLayer(8, 2, 16, dropout=0,
#   batch_first=True).eval(), post-LN, B=2 T=5; pre-LN right
import torch


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    n1, n2, f = params["norm1"], params["norm2"], params["ffn"]
    if norm_first:
        xn = layer_norm(x, n1["weight"], n1["bias"])
        h = x + multi_head_attention(xn, xn, xn, params["self_attn"], num_heads, mask)[0]
        hn = layer_norm(h, n2["weight"], n2["bias"])
        return h + feed_forward(hn, f["W1"], f["b1"], f["W2"], f["b2"])
    attn, _ = multi_head_attention(x, x, x, params["self_attn"], num_heads, mask)
    h = layer_norm(x + attn, n1["weight"], n1["bias"])
    return layer_norm(x + feed_forward(h, f["W1"], f["b1"], f["W2"], f["b2"]), n2["weight"], n2["bias"])
