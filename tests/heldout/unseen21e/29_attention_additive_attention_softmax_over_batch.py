# function: attention.additive_attention
# mistake: the softmax normalises the scores over the batch axis (dim 0) instead of over the
#   encoder positions, so each position's weights sum to 1 across the batch (right only when
#   B == 1 ... and even then every weight is 1)
# class: wrong axis
# confirmed: vs a hand loop over positions (e_j = v . tanh(W_q q + W_k h_j), softmax over j)
#   on B=3,S=5, float64: weights max |diff| 0.381, weight rows sum to 2.38, 1.42, 1.21
#   instead of 1
import torch
def additive_attention(query, keys, W_q, W_k, v, mask=None):
    proj = torch.tanh((query @ W_q.T)[:, None, :] + keys @ W_k.T)
    scores = proj @ v
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=0)
    weights = torch.nan_to_num(weights, nan=0.0)
    context = (weights[:, :, None] * keys).sum(dim=1)
    return context, weights
