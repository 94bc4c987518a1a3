# function: rnn.softmax_cross_entropy
# mistake: the row maximum m is subtracted inside the exponent but never added back, so
#   log-sum-exp is short by m and the loss is too small by the mean of the row maxima
# class: missing term
# confirmed: logits=randn(6,5)+3, float64: returns -2.87172 vs F.cross_entropy 1.37224 (a
#   negative cross-entropy)
import torch
def softmax_cross_entropy(logits, targets):
    m = logits.max(dim=1, keepdim=True).values
    lse = torch.log(torch.exp(logits - m).sum(dim=1))
    target_logit = logits.gather(1, targets[:, None])[:, 0]
    return (lse - target_logit).mean()
