# function: attention.causal_mask
# mistake: tril with diagonal=-1 keeps only strictly earlier positions, so a position cannot
#   attend to itself and the first row is fully masked
# class: off-by-one (diagonal)
# confirmed: 5 of 25 entries (the diagonal) differ from torch.ones(5, 5, dtype=bool).tril()
import torch


def causal_mask(T, device=None):
    return torch.tril(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=-1)
