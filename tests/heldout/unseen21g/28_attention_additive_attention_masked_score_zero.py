# function: attention.additive_attention
# mistake: the mask is applied by multiplying the scores by it, which sets masked scores to 0
#   rather than -inf, so masked positions still get weight exp(0) / Z
# class: mask value
# confirmed: context max |diff| 1.59, weights 0.46 vs a per-row loop (softmax over the allowed
#   keys only), B=3 S=5 Hq=4 Hk=6 A=7, random (B,S) mask
import torch


def additive_attention(query, keys, W_q, W_k, v, mask=None):
    q_proj = query @ W_q.T  # (B, A)
    k_proj = keys @ W_k.T  # (B, S, A)
    scores = torch.tanh(q_proj.unsqueeze(1) + k_proj) @ v  # (B, S)
    if mask is not None:
        scores = scores * mask
    weights = torch.softmax(scores, dim=-1)
    context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)
    return context, weights
