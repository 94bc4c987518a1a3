# function: positional.embed_tokens
# mistake: the sequence length is taken as len(tokens), which is the batch size B, so the first
#   B rows of pe are added: with B = 1 every position gets PE_0, other batch sizes fail unless B == T
# class: shape case
# confirmed: B=3, T=5: RuntimeError (pe[:3] against T=5); B=1, T=3: max |diff| 2.69 vs
#   F.embedding(tokens, E) * sqrt(d) + pe[:T]
def embed_tokens(tokens, embedding, pe):
    d = embedding.shape[-1]
    T = len(tokens)
    return embedding[tokens] * d ** 0.5 + pe[:T]
