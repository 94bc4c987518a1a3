# function: positional.sinusoidal_encoding
# mistake: the even column index 2i is doubled again in the exponent, 10000^(2*(2i)/d)
#   instead of 10000^(2i/d), so the frequencies fall twice as fast across the columns
# class: wrong scale
# confirmed: vs math.sin/cos of p / 10000**(2i/d) by hand, P=50, d=8, float64: max |diff|
#   1.95; PE[1,2] = 0.0100 instead of sin(0.1) = 0.0998
import math
import torch
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    pos = torch.arange(num_positions, dtype=torch.float64, device=device)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64, device=device)
    angles = pos / torch.pow(10000.0, 2 * two_i / d_model)
    pe = torch.zeros(num_positions, d_model, dtype=torch.float64, device=device)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return pe.to(dtype)
