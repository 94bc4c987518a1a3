# function: positional.sinusoidal_encoding
# mistake: the angles are computed in the output dtype (float32 by default) instead of float64,
#   so for large positions p * freq is already off by about p * 6e-8 radians
# class: numerics
# confirmed: P=2000, d=16, float32: max |diff| 3.4e-5 vs the formula evaluated in float64 with
#   math.sin/cos and rounded once; float64 agrees
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    position = torch.arange(num_positions, device=device, dtype=dtype).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, device=device, dtype=dtype) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(num_positions, d_model, device=device, dtype=dtype)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term[: d_model // 2])
    return pe
