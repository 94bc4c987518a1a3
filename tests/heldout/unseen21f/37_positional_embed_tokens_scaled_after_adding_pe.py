# function: positional.embed_tokens
# mistake: the positional encoding is added before the sqrt(d) scaling, so the encoding is scaled
#   too: sqrt(d) * (E[tok] + PE_t) instead of sqrt(d) * E[tok] + PE_t
# class: wrong order
# confirmed: max |diff| 1.94 vs F.embedding(tokens, E) * sqrt(d) + pe[:T] on B=3, T=5, d=4
def embed_tokens(tokens, embedding, pe):
    T = tokens.shape[1]
    d = embedding.shape[1]
    x = embedding[tokens] + pe[:T].unsqueeze(0)
    return x * math.sqrt(d)
