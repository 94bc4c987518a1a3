# function: attention.causal_mask
# mistake: the mask is strictly below the diagonal (tril with diagonal=-1), so a position may
#   not attend to itself and the first row allows nothing
# class: off by one
# confirmed: T=4: first row all False and the diagonal False, vs
#   ~isinf(nn.Transformer.generate_square_subsequent_mask(4)) = tril of ones
import torch
def causal_mask(T, device=None):
    return torch.tril(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=-1)
