"""Known-wrong and alternative-correct Transformer functions (see tests/mutants/__init__.py)."""

from tests.mutants import Alternative, FromTable, Mutant

MUTANTS = [
    FromTable("transformer.layer_norm", "unbiased variance (torch.var's default)", "unbiased variance"),
    FromTable("transformer.layer_norm", "eps added after the square root", "eps outside the square root"),
    FromTable("transformer.layer_norm", "normalizes over the token axis", "normalized over the wrong axis"),
    Mutant(
        "transformer.layer_norm",
        "the mean over the first axis",
        """
def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(dim=0, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dim=-1, keepdim=True)
    return centered / torch.sqrt(var + eps) * weight + bias
""",
        hint="mean is taken along dim 0 where dim -1 belongs",
    ),
    Mutant(
        "transformer.layer_norm",
        "calls F.layer_norm (forbidden)",
        """
def layer_norm(x, weight, bias, eps=1e-5):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)
""",
    ),
    FromTable("transformer.feed_forward", "no activation", "activation missing"),
    FromTable("transformer.feed_forward", "GELU instead of ReLU", "GELU instead of ReLU"),
    FromTable("transformer.encoder_block", "always post-LN (ignores norm_first)", "pre-LN block computed as post-LN"),
    FromTable("transformer.encoder_block", "no residual around the attention", "residual missing around the attention"),
    Mutant(
        "transformer.encoder_block",
        "LayerNorm written with F.layer_norm (forbidden)",
        """
def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    E = x.shape[-1]
    p, n1, n2 = params["ffn"], params["norm1"], params["norm2"]

    def norm(h, n):
        return torch.nn.functional.layer_norm(h, (E,), n["weight"], n["bias"], 1e-5)

    def sa(h):
        return multi_head_attention(h, h, h, params["self_attn"], num_heads, mask)[0]

    def ffn(h):
        return feed_forward(h, p["W1"], p["b1"], p["W2"], p["b2"])

    if norm_first:
        x = x + sa(norm(x, n1))
        return x + ffn(norm(x, n2))
    x = norm(x + sa(x), n1)
    return norm(x + ffn(x), n2)
""",
    ),
    FromTable(
        "transformer.decoder_block", "cross-attention reads keys and values from x", "cross-attention uses x as keys"
    ),
    FromTable(
        "transformer.decoder_block",
        "causal mask replaces self_mask instead of being combined",
        "self_mask dropped when causal",
    ),
    FromTable("transformer.decoder_block", "ignores causal=False", "causal mask applied although causal=False"),
    FromTable("transformer.decoder_block", "normalizes the memory too in pre-LN", "memory normalized in pre-LN"),
    Mutant(
        "transformer.decoder_block",
        "pre-LN residuals added in place to x",
        """
def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    if causal:
        future = causal_mask(x.shape[1], device=x.device)
        self_mask = future if self_mask is None else self_mask & future

    def norm(h, name):
        return layer_norm(h, params[name]["weight"], params[name]["bias"])

    def ffn(h):
        p = params["ffn"]
        return feed_forward(h, p["W1"], p["b1"], p["W2"], p["b2"])

    def sa(h):
        return multi_head_attention(h, h, h, params["self_attn"], num_heads, self_mask)[0]

    def ca(h):
        return multi_head_attention(h, memory, memory, params["cross_attn"], num_heads, memory_mask)[0]

    if norm_first:
        x += sa(norm(x, "norm1"))
        x += ca(norm(x, "norm2"))
        x += ffn(norm(x, "norm3"))
        return x.clone()
    x = norm(x + sa(x), "norm1")
    x = norm(x + ca(x), "norm2")
    return norm(x + ffn(x), "norm3")
""",
    ),
]

ALTERNATIVES = [
    Alternative(
        "transformer.layer_norm",
        "var_mean and rsqrt",
        """
def layer_norm(x, weight, bias, eps=1e-5):
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return torch.addcmul(bias, (x - mean) * torch.rsqrt(var + eps), weight)
""",
    ),
    Alternative(
        "transformer.feed_forward",
        "F.linear and clamp",
        """
def feed_forward(x, W1, b1, W2, b2):
    hidden = torch.nn.functional.linear(x, W1, b1).clamp(min=0)
    return torch.nn.functional.linear(hidden, W2, b2)
""",
    ),
    Alternative(
        "transformer.encoder_block",
        "sublayers as a list of (norm, function) pairs",
        """
def encoder_block(x, params, num_heads, mask=None, norm_first=False):
    f = params["ffn"]
    sublayers = [
        ("norm1", lambda h: multi_head_attention(h, h, h, params["self_attn"], num_heads, mask)[0]),
        ("norm2", lambda h: feed_forward(h, f["W1"], f["b1"], f["W2"], f["b2"])),
    ]
    for name, sublayer in sublayers:
        n = params[name]
        if norm_first:
            x = x + sublayer(layer_norm(x, n["weight"], n["bias"]))
        else:
            x = layer_norm(x + sublayer(x), n["weight"], n["bias"])
    return x
""",
    ),
    Alternative(
        "transformer.decoder_block",
        "causal mask built with torch.tril, keyword calls",
        """
def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    T = x.shape[1]
    mask = self_mask
    if causal:
        lower = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
        mask = lower if mask is None else torch.logical_and(mask, lower)
    f = params["ffn"]
    steps = [
        ("norm1", lambda h: multi_head_attention(h, h, h, params["self_attn"], num_heads, mask=mask)[0]),
        ("norm2", lambda h: multi_head_attention(h, memory, memory, params["cross_attn"], num_heads,
                                                 mask=memory_mask)[0]),
        ("norm3", lambda h: feed_forward(h, f["W1"], f["b1"], f["W2"], f["b2"])),
    ]
    for name, sublayer in steps:
        n = params[name]
        if norm_first:
            x = x + sublayer(layer_norm(x, n["weight"], n["bias"]))
        else:
            x = layer_norm(x + sublayer(x), n["weight"], n["bias"])
    return x
""",
    ),
]
