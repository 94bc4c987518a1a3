# function: transformer.decoder_block
# mistake: pre-LN: the encoder memory is passed through norm2 as well before the cross-attention
#   (keys and values from LN2(memory)); the memory must not be normalized (post-LN is right)
# class: extra normalization
# confirmed: max |diff| 2.94 vs nn.TransformerDecoderLayer(8, 2, 16, dropout=0,
#   norm_first=True).eval(), B=2 T=5 S=6; post-LN right
import torch


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    mask = self_mask
    if causal:
        cm = causal_mask(x.shape[1], device=x.device)
        mask = cm if self_mask is None else cm & self_mask

    def ln(t, name):
        return layer_norm(t, params[name]["weight"], params[name]["bias"])

    def ffn(t):
        f = params["ffn"]
        return feed_forward(t, f["W1"], f["b1"], f["W2"], f["b2"])

    if norm_first:
        h = ln(x, "norm1")
        x = x + multi_head_attention(h, h, h, params["self_attn"], num_heads, mask)[0]
        h = ln(x, "norm2")
        m = ln(memory, "norm2")
        x = x + multi_head_attention(h, m, m, params["cross_attn"], num_heads, memory_mask)[0]
        return x + ffn(ln(x, "norm3"))
    x = ln(x + multi_head_attention(x, x, x, params["self_attn"], num_heads, mask)[0], "norm1")
    x = ln(x + multi_head_attention(x, memory, memory, params["cross_attn"], num_heads, memory_mask)[0], "norm2")
    return ln(x + ffn(x), "norm3")
