# function: transformer.decoder_block
# mistake: cross-attention takes its queries from the encoder memory and its keys/values from
#   the decoder, multi_head_attention(memory, x1, x1), the wrong way round (shapes clash unless S == T)
# class: wrong argument order
# confirmed: S != T: RuntimeError; S == T == 4: max |diff| 0.93 vs
#   nn.TransformerDecoderLayer(dropout=0, batch_first=True).eval()
def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    T = x.shape[1]
    mask = self_mask
    if causal:
        mask = causal_mask(T, device=x.device)
        if self_mask is not None:
            mask = mask & self_mask

    def ln(t, k):
        return layer_norm(t, params[k]["weight"], params[k]["bias"])

    def ffn(t):
        p = params["ffn"]
        return feed_forward(t, p["W1"], p["b1"], p["W2"], p["b2"])

    if norm_first:
        h = ln(x, "norm1")
        x = x + multi_head_attention(h, h, h, params["self_attn"], num_heads, mask)[0]
        h = ln(x, "norm2")
        x = x + multi_head_attention(memory, h, h, params["cross_attn"], num_heads, memory_mask)[0]
        return x + ffn(ln(x, "norm3"))
    x = ln(x + multi_head_attention(x, x, x, params["self_attn"], num_heads, mask)[0], "norm1")
    x = ln(x + multi_head_attention(memory, x, x, params["cross_attn"], num_heads, memory_mask)[0], "norm2")
    return ln(x + ffn(x), "norm3")
