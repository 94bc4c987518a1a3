# function: positional.sinusoidal_encoding
# mistake: all sines are put in the first half of the columns and all cosines in the second
#   (torch.cat) instead of interleaving them (even columns sine, odd columns cosine)
# class: layout (concatenated vs interleaved)
# confirmed: max |diff| 1.98 vs a float64 loop over the interleaved formula, num_positions=8,
#   d_model=6
import torch


def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    pos = torch.arange(num_positions, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = pos / torch.pow(10000.0, two_i / d_model)
    pe = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)[:, :d_model]
    return pe.to(device=device, dtype=dtype)
