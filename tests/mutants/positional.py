"""Known-wrong and alternative-correct positional encodings (see tests/mutants/__init__.py)."""

from tests.mutants import Alternative, FromTable, Mutant

MUTANTS = [
    FromTable(
        "positional.sinusoidal_encoding",
        "concatenated [sin, cos] halves",
        "sines and cosines concatenated in two halves",
    ),
    FromTable("positional.sinusoidal_encoding", "exponent i/d", "exponent i/d instead of 2i/d"),
    Mutant(
        "positional.sinusoidal_encoding",
        "exponent divided by num_positions",
        """
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    pos = torch.arange(num_positions, device=device, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, device=device, dtype=torch.float64)
    angle = pos / 10000.0 ** (two_i / num_positions)
    pe = torch.empty(num_positions, d_model, device=device, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.to(dtype)
""",
        hint="divided by num_positions",
        # where num_positions = 2 d_model, 2i/num_positions is i/d: the table's row matches there
        wrong="exponent i/d",
    ),
    Mutant(
        "positional.sinusoidal_encoding",
        "PyTorch-tutorial code: fails for odd d_model",
        """
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    position = torch.arange(num_positions, device=device).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, device=device) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(num_positions, d_model, device=device, dtype=dtype)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
""",
    ),
    Mutant(
        "positional.sinusoidal_encoding",
        "angles computed in float32",
        """
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    pos = torch.arange(num_positions, device=device, dtype=torch.float32)[:, None]
    angle = pos / 10000.0 ** (torch.arange(0, d_model, 2, device=device, dtype=torch.float32) / d_model)
    pe = torch.zeros(num_positions, d_model, device=device, dtype=dtype)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe
""",
        hint="float32",
    ),
    FromTable("positional.embed_tokens", "no sqrt(d) scaling", "sqrt(d) scaling missing"),
    FromTable("positional.embed_tokens", "divides by sqrt(d)", "divided by sqrt(d) instead of multiplied"),
    Mutant(
        "positional.embed_tokens",
        "scales the table in place",
        """
def embed_tokens(tokens, embedding, pe):
    embedding.mul_(math.sqrt(embedding.shape[1]))
    return embedding[tokens] + pe[: tokens.shape[1]]
""",
    ),
    Mutant(
        "positional.embed_tokens",
        "uses F.embedding (forbidden)",
        """
def embed_tokens(tokens, embedding, pe):
    x = torch.nn.functional.embedding(tokens, embedding)
    return x * math.sqrt(embedding.shape[-1]) + pe[: tokens.shape[-1]]
""",
    ),
]

ALTERNATIVES = [
    Alternative(
        "positional.sinusoidal_encoding",
        "exp/log frequencies, stacked and flattened",
        """
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    half = (d_model + 1) // 2
    freq = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float64, device=device) * 2 / d_model)
    angle = torch.arange(num_positions, dtype=torch.float64, device=device)[:, None] * freq
    pe = torch.stack([angle.sin(), angle.cos()], dim=-1).reshape(num_positions, 2 * half)
    return pe[:, :d_model].to(dtype)
""",
    ),
    Alternative(
        "positional.embed_tokens",
        "one-hot matrix product",
        """
def embed_tokens(tokens, embedding, pe):
    V, d = embedding.shape
    one_hot = torch.nn.functional.one_hot(tokens, V).to(embedding.dtype)
    return (one_hot @ embedding) * d ** 0.5 + pe[: tokens.shape[1]]
""",
    ),
    Alternative(
        "positional.embed_tokens",
        "promotes to the result dtype before scaling",
        """
def embed_tokens(tokens, embedding, pe):
    dtype = torch.promote_types(embedding.dtype, pe.dtype)
    x = embedding.to(dtype)[tokens] * math.sqrt(embedding.shape[-1])
    return x + pe[: tokens.shape[-1]].to(dtype)
""",
    ),
]
