# function: rnn.softmax_cross_entropy
# mistake: the loss takes log(softmax(logits)); the softmax is fine but the target's
#   probability underflows to 0 for logits of magnitude 1e4, so the log gives inf instead of
#   the log-sum-exp form
# class: numerics
# confirmed: logits=1e4*randn(6,5), float64: returns inf vs F.cross_entropy 6419.44; on
#   randn(6,5) it agrees (0)
import torch
def softmax_cross_entropy(logits, targets):
    p = torch.softmax(logits, dim=1)
    picked = p[torch.arange(logits.shape[0], device=logits.device), targets]
    return -torch.log(picked).mean()
