# function: attention.additive_attention
# mistake: the mask is applied after the softmax (masked weights set to zero) without
#   renormalising, so the allowed weights no longer sum to one
# class: masks
# confirmed: mask with some keys blocked (B=4, S=6): weights off by up to 0.44 vs a hand loop
#   softmax over the allowed keys only; no mask agrees
def additive_attention(query, keys, W_q, W_k, v, mask=None):
    q_proj = query @ W_q.T
    k_proj = keys @ W_k.T
    scores = torch.tanh(q_proj.unsqueeze(1) + k_proj) @ v
    weights = torch.softmax(scores, dim=1)
    if mask is not None:
        weights = weights * mask.to(weights.dtype)
    context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)
    return context, weights
