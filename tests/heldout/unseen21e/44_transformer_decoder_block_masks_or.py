# function: transformer.decoder_block
# mistake: the causal mask is combined with self_mask by logical OR instead of AND, so a
#   padding mask re-opens future positions (right when self_mask is None)
# class: mask applied wrongly
# confirmed: vs torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0,
#   batch_first=True).eval() with tgt_mask = ~(causal & padding), x (2,5,8), memory (2,6,8),
#   self_mask (2,1,5), float64: max |diff| 0.98; causal mask alone agrees
import torch
def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    T = x.shape[1]
    m = self_mask
    if causal:
        cm = causal_mask(T, device=x.device)
        m = cm if self_mask is None else (cm | self_mask)
    n1, n2, n3, ffn = params["norm1"], params["norm2"], params["norm3"], params["ffn"]
    sa, ca = params["self_attn"], params["cross_attn"]
    if norm_first:
        h = layer_norm(x, n1["weight"], n1["bias"])
        x = x + multi_head_attention(h, h, h, sa, num_heads, m)[0]
        h = layer_norm(x, n2["weight"], n2["bias"])
        x = x + multi_head_attention(h, memory, memory, ca, num_heads, memory_mask)[0]
        h = layer_norm(x, n3["weight"], n3["bias"])
        return x + feed_forward(h, ffn["W1"], ffn["b1"], ffn["W2"], ffn["b2"])
    x = layer_norm(x + multi_head_attention(x, x, x, sa, num_heads, m)[0], n1["weight"], n1["bias"])
    x = layer_norm(x + multi_head_attention(x, memory, memory, ca, num_heads, memory_mask)[0], n2["weight"], n2["bias"])
    return layer_norm(x + feed_forward(x, ffn["W1"], ffn["b1"], ffn["W2"], ffn["b2"]), n3["weight"], n3["bias"])
