# function: positional.sinusoidal_encoding
# mistake: the angles p * freq are computed in float32 whatever dtype is asked for, so the
#   table is only float32-accurate (wrong in float64, and off by ~1e-4 at large p in float32)
# class: numerics (float32 vs float64)
# confirmed: vs the hand formula: dtype=float64, P=50, d=8 max |diff| 4.7e-7 (float64
#   tolerance 1e-9); dtype=float32, P=4000, d=16 max |diff| 6.8e-5 with 594 entries beyond
#   rtol 1e-4 / atol 1e-5
import math
import torch
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    pos = torch.arange(num_positions, dtype=torch.float32, device=device)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32, device=device)
    angles = pos * torch.exp(-math.log(10000.0) * two_i / d_model)
    pe = torch.zeros(num_positions, d_model, dtype=dtype, device=device)
    pe[:, 0::2] = torch.sin(angles).to(dtype)
    pe[:, 1::2] = torch.cos(angles[:, : d_model // 2]).to(dtype)
    return pe
