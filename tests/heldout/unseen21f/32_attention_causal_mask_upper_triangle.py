# function: attention.causal_mask
# mistake: the mask is True strictly above the diagonal (the blocked positions, nn.Transformer's
#   convention), the complement of the package's True = may attend
# class: masks
# confirmed: T=5: every entry differs from
#   ~isinf(nn.Transformer.generate_square_subsequent_mask(5)); T=1 gives [[False]]
def causal_mask(T, device=None):
    return torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)
