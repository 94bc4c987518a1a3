# function: rnn.softmax_cross_entropy
# mistake: log-sum-exp is computed directly as log(sum(exp(logits))) without subtracting the row
#   maximum, so large logits overflow to inf (right for ordinary logits)
# class: numerical instability (subtle)
# confirmed: agrees with F.cross_entropy (4e-16) on logits randn(6,5); returns inf for logits
#   randn(6,5)*1e4 in float64 and randn(6,5)*100 in float32
import torch


def softmax_cross_entropy(logits, targets):
    N = logits.shape[0]
    log_z = torch.log(torch.exp(logits).sum(dim=1))
    correct = logits[torch.arange(N, device=logits.device), targets]
    return (log_z - correct).mean()
