# function: attention.additive_attention
# mistake: the softmax runs over dim=0 (the batch) instead of over the source positions, so each
#   row's weights do not sum to one
# class: wrong axis
# confirmed: max |diff| 1.51 vs a hand loop of e_j = v.tanh(W_q q + W_k h_j) and softmax over j
#   (B=3, S=5); even B=1 differs (all weights 1)
def additive_attention(query, keys, W_q, W_k, v, mask=None):
    e = torch.einsum("a,bsa->bs", v, torch.tanh((query @ W_q.T)[:, None, :] + keys @ W_k.T))
    if mask is not None:
        e = e.masked_fill(~mask, float("-inf"))
    alpha = torch.softmax(e, dim=0)
    alpha = torch.nan_to_num(alpha, nan=0.0)
    c = torch.einsum("bs,bsh->bh", alpha, keys)
    return c, alpha
