# function: transformer.decoder_block
# mistake: the causal mask is used only when no self_mask is given; with a padding self_mask the
#   self-attention is no longer causal (the two masks must be combined with AND)
# class: mask combination
# confirmed: right without self_mask; max |diff| 2.52 vs nn.TransformerDecoderLayer(8, 2, 16,
#   dropout=0) with a causal tgt_mask and tgt_key_padding_mask
import torch


def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    T = x.shape[1]
    if self_mask is not None:
        sa_mask = self_mask
    elif causal:
        sa_mask = causal_mask(T, device=x.device)
    else:
        sa_mask = None
    n1, n2, n3, f = params["norm1"], params["norm2"], params["norm3"], params["ffn"]
    if norm_first:
        y = layer_norm(x, n1["weight"], n1["bias"])
        x = x + multi_head_attention(y, y, y, params["self_attn"], num_heads, sa_mask)[0]
        y = layer_norm(x, n2["weight"], n2["bias"])
        x = x + multi_head_attention(y, memory, memory, params["cross_attn"], num_heads, memory_mask)[0]
        y = layer_norm(x, n3["weight"], n3["bias"])
        return x + feed_forward(y, f["W1"], f["b1"], f["W2"], f["b2"])
    x = layer_norm(x + multi_head_attention(x, x, x, params["self_attn"], num_heads, sa_mask)[0], n1["weight"], n1["bias"])
    x = layer_norm(x + multi_head_attention(x, memory, memory, params["cross_attn"], num_heads, memory_mask)[0], n2["weight"], n2["bias"])
    return layer_norm(x + feed_forward(x, f["W1"], f["b1"], f["W2"], f["b2"]), n3["weight"], n3["bias"])
