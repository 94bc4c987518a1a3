# function: positional.sinusoidal_encoding
# mistake: the sines fill the first half of the columns and the cosines the second half
#   (concatenated) instead of alternating even/odd columns (right only for d_model <= 2)
# class: transpose/reshape (layout)
# confirmed: vs the hand formula, P=50, d=8, float64: max |diff| 1.96; PE[1,1] = 0.0998
#   instead of cos(1) = 0.5403; d=2 agrees
import math
import torch
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    pos = torch.arange(num_positions, dtype=torch.float64, device=device)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64, device=device)
    angles = pos / torch.pow(10000.0, two_i / d_model)
    pe = torch.cat([torch.sin(angles), torch.cos(angles[:, : d_model // 2])], dim=1)
    return pe.to(dtype)
