# function: attention.additive_attention
# mistake: masked positions get a score of 0 instead of -inf before the softmax, so they still
#   receive weight exp(0) / sum and leak into the context
# class: mask applied wrongly
# confirmed: vs a hand loop over the allowed positions with a (3,5) padding mask, float64:
#   2.18 of total weight on masked positions (should be 0), context max |diff| 2.17 (no
#   mask: agrees)
import torch
def additive_attention(query, keys, W_q, W_k, v, mask=None):
    proj = torch.tanh((query @ W_q.T)[:, None, :] + keys @ W_k.T)
    scores = proj @ v
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask.any(dim=-1, keepdim=True)
    context = (weights[:, :, None] * keys).sum(dim=1)
    return context, weights
