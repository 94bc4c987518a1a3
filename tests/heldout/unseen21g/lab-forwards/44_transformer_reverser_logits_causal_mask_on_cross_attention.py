# function: transformer.reverser_logits
# mistake: the causal mask is passed to the decoder as memory_mask, so the cross-attention is
#   made causal too: output position t only sees source positions <= t and cannot reverse
# class: mask passed to the wrong attention
# confirmed: max |diff| 2.29 vs the same model built from nn.TransformerEncoderLayer /
#   nn.TransformerDecoderLayer (causal tgt_mask only), B=2 S=T=5 V=6 E=8
import torch


def reverser_logits(params, src, tgt_in):
    from .positional import embed_tokens, sinusoidal_encoding

    E = params["embedding"].shape[1]
    S, T = src.shape[1], tgt_in.shape[1]
    pe = sinusoidal_encoding(max(S, T), E, device=src.device, dtype=params["embedding"].dtype)
    memory = encoder_block(embed_tokens(src, params["embedding"], pe), params["encoder"], REVERSER_HEADS)
    y = embed_tokens(tgt_in, params["embedding"], pe)
    y = decoder_block(y, memory, params["decoder"], REVERSER_HEADS, memory_mask=causal_mask(T, device=src.device))
    return y @ params["W_out"].T + params["b_out"]
