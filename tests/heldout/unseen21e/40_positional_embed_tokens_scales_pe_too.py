# function: positional.embed_tokens
# mistake: the positional encoding is added before the scaling, (E[tokens] + PE) * sqrt(d),
#   so the encoding is scaled by sqrt(d) as well
# class: wrong formula (order of operations)
# confirmed: vs F.embedding(tokens, E) * sqrt(8) + pe[:5] on tokens (2,5), E (7,8), pe
#   (10,8), float64: max |diff| 3.78
import math
import torch
def embed_tokens(tokens, embedding, pe):
    T = tokens.shape[1]
    d = embedding.shape[1]
    return (embedding[tokens] + pe[:T]) * math.sqrt(d)
