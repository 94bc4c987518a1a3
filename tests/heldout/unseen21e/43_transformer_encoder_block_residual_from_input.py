# function: transformer.encoder_block
# mistake: in the post-LN block the FFN's residual adds the block's original input x instead
#   of the normalised output of the attention sublayer, LN2(x + FFN(x')) rather than
#   LN2(x' + FFN(x'))
# class: wrong quantity fed back
# confirmed: vs torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0,
#   batch_first=True).eval() on x=randn(2,5,8), float64: post-LN max |diff| 0.683; pre-LN
#   agrees (4e-16)
import torch
def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    n1, n2, ffn = params["norm1"], params["norm2"], params["ffn"]
    sa = params["self_attn"]
    if norm_first:
        h = layer_norm(x, n1["weight"], n1["bias"])
        x1 = x + multi_head_attention(h, h, h, sa, num_heads, mask)[0]
        h2 = layer_norm(x1, n2["weight"], n2["bias"])
        return x1 + feed_forward(h2, ffn["W1"], ffn["b1"], ffn["W2"], ffn["b2"])
    a = multi_head_attention(x, x, x, sa, num_heads, mask)[0]
    x1 = layer_norm(x + a, n1["weight"], n1["bias"])
    f = feed_forward(x1, ffn["W1"], ffn["b1"], ffn["W2"], ffn["b2"])
    return layer_norm(x + f, n2["weight"], n2["bias"])
