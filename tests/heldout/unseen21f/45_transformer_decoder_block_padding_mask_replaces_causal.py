# function: transformer.decoder_block
# mistake: when a self_mask is given it replaces the causal mask instead of being combined with
#   it by logical AND, so a padded target sequence can look ahead
# class: masks
# confirmed: with a (B,1,T) target padding mask and causal=True: max |diff| 0.23 (pre-LN) and 1.9
#   (post-LN) vs nn.TransformerDecoderLayer given tgt_mask and tgt_key_padding_mask; without
#   self_mask agrees
def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    if self_mask is not None:
        sa_mask = self_mask
    elif causal:
        sa_mask = causal_mask(x.shape[1], device=x.device)
    else:
        sa_mask = None
    n1, n2, n3 = params["norm1"], params["norm2"], params["norm3"]
    f = params["ffn"]
    if not norm_first:
        x = layer_norm(x + multi_head_attention(x, x, x, params["self_attn"], num_heads, sa_mask)[0], n1["weight"], n1["bias"])
        x = layer_norm(x + multi_head_attention(x, memory, memory, params["cross_attn"], num_heads, memory_mask)[0], n2["weight"], n2["bias"])
        x = layer_norm(x + feed_forward(x, f["W1"], f["b1"], f["W2"], f["b2"]), n3["weight"], n3["bias"])
        return x
    h = layer_norm(x, n1["weight"], n1["bias"])
    x = x + multi_head_attention(h, h, h, params["self_attn"], num_heads, sa_mask)[0]
    h = layer_norm(x, n2["weight"], n2["bias"])
    x = x + multi_head_attention(h, memory, memory, params["cross_attn"], num_heads, memory_mask)[0]
    h = layer_norm(x, n3["weight"], n3["bias"])
    return x + feed_forward(h, f["W1"], f["b1"], f["W2"], f["b2"])
