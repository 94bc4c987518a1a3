# function: transformer.encoder_block
# mistake: pre-LN: the final residual sum is still wrapped in norm2 (post-LN habit),
#   y = LN2(x' + FFN(LN2(x'))), instead of y = x' + FFN(LN2(x')) (post-LN is right)
# class: extra normalization
# confirmed: max |diff| 1.86 vs nn.TransformerEncoderLayer(8, 2, 16, dropout=0, batch_first=True,
#   norm_first=True).eval(), B=2 T=5; post-LN right
import torch


def _norm(t, p):
    return layer_norm(t, p["weight"], p["bias"])


def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    sa, ffn = params["self_attn"], params["ffn"]
    if norm_first:
        z = _norm(x, params["norm1"])
        x = x + multi_head_attention(z, z, z, sa, num_heads, mask)[0]
        z = _norm(x, params["norm2"])
        x = x + feed_forward(z, ffn["W1"], ffn["b1"], ffn["W2"], ffn["b2"])
        return _norm(x, params["norm2"])
    x = _norm(x + multi_head_attention(x, x, x, sa, num_heads, mask)[0], params["norm1"])
    return _norm(x + feed_forward(x, ffn["W1"], ffn["b1"], ffn["W2"], ffn["b2"]), params["norm2"])
