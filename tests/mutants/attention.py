"""Known-wrong and alternative-correct attention functions (see tests/mutants/__init__.py)."""

from tests.mutants import Alternative, FromTable, Mutant

MUTANTS = [
    FromTable("attention.scaled_dot_product_attention", "inverted mask convention (True = blocked)", "inverted mask"),
    FromTable("attention.scaled_dot_product_attention", "softmax over the query axis", "softmax over the wrong axis"),
    FromTable("attention.scaled_dot_product_attention", "NaN for a fully masked row", "NaN in a fully masked row"),
    Mutant(
        "attention.scaled_dot_product_attention",
        "divides q by sqrt(d) in place",
        """
def scaled_dot_product_attention(q, k, v, mask=None):
    q /= math.sqrt(q.shape[-1])
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = weights.masked_fill(scores.amax(dim=-1, keepdim=True) == float("-inf"), 0.0)
    return weights @ v, weights
""",
    ),
    Mutant(
        "attention.scaled_dot_product_attention",
        "uses F.scaled_dot_product_attention (forbidden)",
        """
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return torch.nan_to_num(out), weights
""",
    ),
    FromTable("attention.additive_attention", "no tanh in the alignment model", "no tanh"),
    FromTable(
        "attention.additive_attention",
        "masks with -1e9, so a fully masked row is uniform",
        "fully masked row not zeroed",
    ),
    FromTable(
        "attention.additive_attention",
        "multiplies the weights by the mask after the softmax",
        "mask applied after the softmax",
    ),
    FromTable("attention.causal_mask", "True above the diagonal (PyTorch's attn_mask convention)", "inverted mask"),
    FromTable("attention.causal_mask", "excludes the diagonal", "diagonal excluded"),
    FromTable("attention.multi_head_attention", "interleaved heads", "heads interleaved"),
    FromTable("attention.multi_head_attention", "weights averaged over the heads", "weights averaged over heads"),
    FromTable("attention.multi_head_attention", "scales every head by sqrt(E)", "scaled by sqrt(E)"),
    FromTable("attention.multi_head_attention", "no output projection", "no output projection"),
    FromTable(
        "attention.multi_head_attention", "padding mask not expanded for the heads", "mask not expanded for the heads"
    ),
    Mutant(
        "attention.multi_head_attention",
        "unsqueezes the caller's mask in place",
        """
def multi_head_attention(query, key, value, params, num_heads, mask=None):
    B, L, E = query.shape
    S = key.shape[1]
    dh = E // num_heads
    q = (query @ params["W_q"].T + params["b_q"]).view(B, L, num_heads, dh).transpose(1, 2)
    k = (key @ params["W_k"].T + params["b_k"]).view(B, S, num_heads, dh).transpose(1, 2)
    v = (value @ params["W_v"].T + params["b_v"]).view(B, S, num_heads, dh).transpose(1, 2)
    if mask is not None and mask.dim() == 3:
        mask.unsqueeze_(1)
    heads, weights = scaled_dot_product_attention(q, k, v, mask)
    return heads.transpose(1, 2).reshape(B, L, E) @ params["W_o"].T + params["b_o"], weights
""",
    ),
    Mutant(
        "attention.multi_head_attention",
        "uses F.multi_head_attention_forward (forbidden)",
        """
def multi_head_attention(query, key, value, params, num_heads, mask=None):
    E = query.shape[-1]
    in_w = torch.cat([params["W_q"], params["W_k"], params["W_v"]])
    in_b = torch.cat([params["b_q"], params["b_k"], params["b_v"]])
    attn_mask = None
    if mask is not None:
        m = torch.broadcast_to(mask, (query.shape[0], query.shape[1], key.shape[1]))
        attn_mask = (~m).repeat_interleave(num_heads, dim=0)
    out, weights = torch.nn.functional.multi_head_attention_forward(
        query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1), E, num_heads, in_w, in_b,
        None, None, False, 0.0, params["W_o"], params["b_o"], training=False, need_weights=True,
        attn_mask=attn_mask, average_attn_weights=False)
    return torch.nan_to_num(out.transpose(0, 1)), torch.nan_to_num(weights)
""",
    ),
]

ALTERNATIVES = [
    Alternative(
        "attention.scaled_dot_product_attention",
        "einsum, scaled queries, where() for empty rows",
        """
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.einsum("...ld,...sd->...ls", q * (1.0 / math.sqrt(q.shape[-1])), k)
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device))
    m = scores.amax(dim=-1, keepdim=True)
    e = torch.exp(scores - torch.where(torch.isfinite(m), m, torch.zeros_like(m)))
    total = e.sum(dim=-1, keepdim=True)
    weights = torch.where(total > 0, e / total.clamp_min(torch.finfo(e.dtype).tiny), torch.zeros_like(e))
    return torch.einsum("...ls,...sd->...ld", weights, v), weights
""",
    ),
    Alternative(
        "attention.causal_mask",
        "compares position indices",
        """
def causal_mask(T, device=None):
    i = torch.arange(T, device=device)
    return i[:, None] >= i[None, :]
""",
    ),
    Alternative(
        "attention.additive_attention",
        "einsum scores, nan_to_num for empty rows",
        """
def additive_attention(query, keys, W_q, W_k, v, mask=None):
    hidden = torch.tanh(torch.einsum("aq,bq->ba", W_q, query)[:, None, :] + torch.einsum("ak,bsk->bsa", W_k, keys))
    scores = torch.einsum("bsa,a->bs", hidden, v)
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=1), nan=0.0)
    return torch.einsum("bs,bsk->bk", weights, keys), weights
""",
    ),
    Alternative(
        "attention.multi_head_attention",
        "loop over heads, attention written inline",
        """
def multi_head_attention(query, key, value, params, num_heads, mask=None):
    E = query.shape[-1]
    dh = E // num_heads
    q = torch.nn.functional.linear(query, params["W_q"], params["b_q"])
    k = torch.nn.functional.linear(key, params["W_k"], params["b_k"])
    v = torch.nn.functional.linear(value, params["W_v"], params["b_v"])
    outs, all_weights = [], []
    for i in range(num_heads):
        sl = slice(i * dh, (i + 1) * dh)
        scores = q[..., sl] @ k[..., sl].transpose(1, 2) / math.sqrt(dh)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        w = torch.where(torch.isnan(w), torch.zeros_like(w), w)
        outs.append(w @ v[..., sl])
        all_weights.append(w)
    out = torch.nn.functional.linear(torch.cat(outs, dim=-1), params["W_o"], params["b_o"])
    return out, torch.stack(all_weights, dim=1)
""",
    ),
]
