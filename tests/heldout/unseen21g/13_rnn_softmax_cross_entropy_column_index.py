# function: rnn.softmax_cross_entropy
# mistake: the target logits are picked with logits[:, targets], an (N, N) matrix that broadcasts
#   against the (N,) log-sum-exp, and the mean is taken over all N*N entries
# class: wrong indexing (broadcasts silently)
# confirmed: max |diff| 0.12 vs F.cross_entropy on logits randn(6,5)
import torch


def softmax_cross_entropy(logits, targets):
    m = logits.max(dim=1, keepdim=True).values
    lse = m.squeeze(1) + torch.log(torch.exp(logits - m).sum(dim=1))
    return (lse - logits[:, targets]).mean()
