# function: positional.sinusoidal_encoding
# mistake: the exponent uses the column index j itself, 10000^(j / d_model), so the cosine column
#   2i+1 gets the frequency of 2i+1 instead of sharing its pair's frequency 10000^(-2i/d)
# class: off by one
# confirmed: P=10, d=8: max |diff| 1.57 vs the formula evaluated with math.sin/math.cos (odd
#   columns); d=1 agrees
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    pos = torch.arange(num_positions, dtype=torch.float64, device=device).unsqueeze(1)
    j = torch.arange(d_model, dtype=torch.float64, device=device).unsqueeze(0)
    angles = pos / torch.pow(10000.0, j / d_model)
    pe = torch.where(j % 2 == 0, torch.sin(angles), torch.cos(angles))
    return pe.to(dtype)
