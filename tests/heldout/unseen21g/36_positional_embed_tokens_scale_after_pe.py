# function: positional.embed_tokens
# mistake: the positional encoding is added before the sqrt(d) scaling, (E[tok] + PE) * sqrt(d),
#   so the encoding is scaled too
# class: wrong order of operations
# confirmed: max |diff| 1.45 vs F.embedding(tokens, E) * sqrt(6) + pe[:T], B=2 T=4 d=6
import math

import torch


def embed_tokens(tokens, embedding, pe):
    T = tokens.shape[1]
    d = embedding.shape[-1]
    x = embedding[tokens] + pe[:T].unsqueeze(0)
    return x * math.sqrt(d)
