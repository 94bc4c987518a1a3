"""Hidden graders for exercises/attention.py (notes L5 §13-§16, W8 §8-§13, L7-8 §一-§三).

Every case compares the student's output with the reference on the same random inputs. The
cases probe what students get wrong: masks in every shape the contract allows ((B, S) for
Bahdanau, batch dims for SDPA, (L, S) causal and (B, 1, S) padding for multi-head attention),
rows in which no key is allowed (zero weights and zero output, never NaN; in multi-head
attention such a row of the output is ``b_o``), logits large enough to overflow a naive
softmax, B = L = S = 1, and float32 as well as float64.

When a case fails, the known wrong variants below are computed on the same inputs, so the
feedback can say which classic mistake the output matches (an inverted mask, scaling by d
instead of sqrt(d), interleaved heads, weights averaged over heads, ...).
"""

from __future__ import annotations

import math

import pytest
import torch

from seqlab.grading.checks import Mistake, describe_case, variant_output

grades = pytest.mark.grades
DTYPES = pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])


# --- known wrong variants: the masked softmax ------------------------------------------------


def masked_softmax(scores, mask=None, *, invert=False, full_rows="zero", after=False, stable=True, dim=-1):
    """Softmax over ``dim`` with ``mask`` (True = may attend) and the usual ways to get it wrong.

    full_rows: "zero" (the contract), "nan" (plain softmax over all -inf), "uniform" (masked
    with a large finite negative number, so a fully masked row spreads evenly over all keys).
    after: multiply the softmax by the mask instead of masking the scores (no renormalization).
    stable: False is exp(s) / sum(exp(s)) without subtracting the max.
    """
    if mask is not None and invert:
        mask = ~mask
    if mask is not None and not after:
        fill = -1e9 if full_rows == "uniform" else float("-inf")
        scores = scores.masked_fill(~mask, fill)
    if stable:
        weights = torch.softmax(scores, dim=dim)
    else:
        e = torch.exp(scores)
        weights = e / e.sum(dim=dim, keepdim=True)
    if mask is not None and after:
        weights = weights * mask
    if mask is not None and not after and full_rows == "zero":
        weights = weights.masked_fill(scores.amax(dim=dim, keepdim=True) == float("-inf"), 0.0)
    return weights


def attend(q, k, v, mask=None, *, scale=None, **softmax):
    scores = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale is None else scale)
    weights = masked_softmax(scores, mask, **softmax)
    return weights @ v, weights


MASK_MISTAKES = [
    (
        "inverted mask",
        {"invert": True},
        "in this package True means 'may attend' (as in F.scaled_dot_product_attention); fill the scores "
        "with -inf where the mask is False (masked_fill(~mask, -inf)), not where it is True.",
    ),
    (
        "NaN in a fully masked row",
        {"full_rows": "nan"},
        "when every key of a row is masked, softmax over all -inf is 0/0; such a row must get all-zero "
        "weights (and so a zero output).",
    ),
    (
        "fully masked row not zeroed",
        {"full_rows": "uniform"},
        "a large negative fill (-1e9, finfo.min) spreads a fully masked row evenly over all keys; the "
        "contract wants all-zero weights there.",
    ),
    (
        "mask applied after the softmax",
        {"after": True},
        "multiplying the weights by the mask leaves rows that no longer sum to 1; mask the scores with "
        "-inf before the softmax.",
    ),
]


# --- additive (Bahdanau) attention -----------------------------------------------------------


def additive_variant(query, keys, W_q, W_k, v, mask=None, *, tanh=True, dim=-1, projected_values=False, **softmax):
    pre = (query @ W_q.T).unsqueeze(1) + keys @ W_k.T
    scores = (torch.tanh(pre) if tanh else pre) @ v
    weights = masked_softmax(scores, mask, dim=dim, **softmax)
    values = keys @ W_k.T if projected_values else keys
    return (weights.unsqueeze(1) @ values).squeeze(1), weights


ADDITIVE_MISTAKES = [
    (
        "no tanh",
        {"tanh": False},
        "the alignment score is v . tanh(W_q q + W_k h_j); without the tanh it is linear in q and h_j.",
    ),
    (
        "softmax over the batch axis",
        {"dim": 0},
        "the scores are (B, S): normalize over the S encoder positions (dim=-1), separately for each batch row.",
    ),
    (
        "context from the projected keys",
        {"projected_values": True},
        "the context is the weighted sum of the encoder states h_j themselves, not of W_k h_j.",
    ),
    *MASK_MISTAKES,
]


def additive_mistakes(query, keys, W_q, W_k, v, mask=None):
    return [
        Mistake(name, variant_output(additive_variant, query, keys, W_q, W_k, v, mask, **kw), why)
        for name, kw, why in ADDITIVE_MISTAKES
    ]


def bahdanau_inputs(make, B, S, Hq, Hk, A, dtype):
    return (
        make.randn(B, Hq, dtype=dtype),
        make.randn(B, S, Hk, dtype=dtype),
        make.randn(A, Hq, dtype=dtype, scale=1 / math.sqrt(Hq)),
        make.randn(A, Hk, dtype=dtype, scale=1 / math.sqrt(Hk)),
        make.randn(A, dtype=dtype),
    )


def padding_mask(make, B, S, *, empty_row=0):
    """(B, S) bool: each batch row keeps a prefix of random length >= 1; row ``empty_row`` keeps none."""
    lengths = [make.integer(1, S) for _ in range(B)]
    if empty_row is not None:
        lengths[empty_row] = 0
    mask = torch.arange(S)[None, :] < torch.tensor(lengths)[:, None]
    return mask.to(make.device)


@grades("attention.additive_attention", title="Bahdanau attention, no mask, Hq != Hk != A")
@DTYPES
def test_additive_no_mask(grade, make, dtype):
    B, S, Hq, Hk, A = 3, 6, 5, 4, 7
    args = bahdanau_inputs(make, B, S, Hq, Hk, A, dtype)
    grade.check(*args, case=describe_case(B=B, S=S, Hq=Hq, Hk=Hk, A=A, dtype=dtype), mistakes=additive_mistakes)


@grades(
    "attention.additive_attention",
    title="Bahdanau attention, (B, S) mask with a fully masked batch row (zero weights, zero context)",
    weight=2,
)
@DTYPES
def test_additive_mask(grade, make, dtype):
    B, S, Hq, Hk, A = 3, 5, 4, 6, 6
    args = bahdanau_inputs(make, B, S, Hq, Hk, A, dtype)
    mask = padding_mask(make, B, S, empty_row=1)
    mask[2] = make.mask(S, p_keep=0.6) | (torch.arange(S, device=make.device) == 0)  # not only prefixes
    grade.check(
        *args,
        mask=mask,
        case=describe_case(B=B, S=S, Hq=Hq, Hk=Hk, A=A, mask="(B, S), batch row 1 fully masked", dtype=dtype),
        mistakes=additive_mistakes,
    )


@grades("attention.additive_attention", title="Bahdanau attention, B=1, S=1, A == Hk")
def test_additive_single(grade, make):
    args = bahdanau_inputs(make, 1, 1, 3, 4, 4, torch.float64)
    grade.check(
        *args,
        mask=torch.ones(1, 1, dtype=torch.bool, device=make.device),
        case=describe_case(B=1, S=1, Hq=3, Hk=4, A=4, mask="all True"),
        mistakes=additive_mistakes,
    )


# --- scaled dot-product attention ------------------------------------------------------------


def sdpa_variant(q, k, v, mask=None, *, scale="sqrt(d)", **softmax):
    d = q.shape[-1]
    value = {"sqrt(d)": math.sqrt(d), "d": d, "none": 1.0, "sqrt(dv)": math.sqrt(v.shape[-1])}[scale]
    return attend(q, k, v, mask, scale=value, **softmax)


SDPA_MISTAKES = [
    (
        "scaled by d instead of sqrt(d)",
        {"scale": "d"},
        "divide the scores by sqrt(d): that keeps their variance near 1 when q and k have unit variance (W8 §8.2).",
    ),
    (
        "no scaling",
        {"scale": "none"},
        "the scores q.k must be divided by sqrt(d), or the softmax saturates as d grows (W8 §8.2).",
    ),
    (
        "scaled by sqrt(dv)",
        {"scale": "sqrt(dv)"},
        "d is the size of the queries and keys (q.shape[-1]), not of the values.",
    ),
    (
        "softmax over the wrong axis",
        {"dim": -2},
        "each query's weights sum to 1 over the keys: softmax over the last axis (S) of the (..., L, S) scores.",
    ),
    (
        "softmax without subtracting the max",
        {"stable": False},
        "exp of a large score overflows to inf (inf/inf = NaN); subtract the row max first (torch.softmax does).",
    ),
    *MASK_MISTAKES,
]


def sdpa_mistakes(q, k, v, mask=None):
    return [Mistake(name, variant_output(sdpa_variant, q, k, v, mask, **kw), why) for name, kw, why in SDPA_MISTAKES]


@grades(
    "attention.scaled_dot_product_attention",
    title="matches F.scaled_dot_product_attention, (B, L, d) inputs, L != S, d != dv, no mask",
)
@DTYPES
def test_sdpa_no_mask(grade, make, dtype):
    B, L, S, d, dv = 2, 4, 6, 8, 5
    q, k, v = make.randn(B, L, d, dtype=dtype), make.randn(B, S, d, dtype=dtype), make.randn(B, S, dv, dtype=dtype)
    grade.check(q, k, v, case=describe_case(B=B, L=L, S=S, d=d, dv=dv, dtype=dtype), mistakes=sdpa_mistakes)


@grades("attention.scaled_dot_product_attention", title="no batch dims at all: q (L, d), k (S, d), v (S, dv)")
def test_sdpa_no_batch(grade, make):
    L, S, d, dv = 3, 5, 4, 6
    q, k, v = make.randn(L, d), make.randn(S, d), make.randn(S, dv)
    grade.check(q, k, v, case=describe_case(L=L, S=S, d=d, dv=dv, batch="none"), mistakes=sdpa_mistakes)


MASK_SHAPES = ["(L, S)", "(B, 1, 1, S)", "(B, H, L, S)"]


@grades(
    "attention.scaled_dot_product_attention",
    title="(B, H, L, d) inputs with a broadcasting mask that fully masks some rows",
)
@pytest.mark.parametrize("shape", MASK_SHAPES)
def test_sdpa_masks(grade, make, shape):
    B, H, L, S, d, dv = 2, 3, 4, 5, 6, 3
    q, k, v = make.randn(B, H, L, d), make.randn(B, H, S, d), make.randn(B, H, S, dv)
    if shape == "(L, S)":
        mask = make.mask(L, S, p_keep=0.6)
        mask[:, 0] = True
        mask[2] = False  # query 2 sees nothing, in every batch and head
        what = "(L, S), query 2 fully masked"
    elif shape == "(B, 1, 1, S)":
        mask = padding_mask(make, B, S, empty_row=1).view(B, 1, 1, S)
        what = "(B, 1, 1, S) padding, batch 1 fully masked"
    else:
        mask = make.mask(B, H, L, S, p_keep=0.6)
        mask[..., 0] = True
        mask[0, 1, 3] = False
        mask[1, 2, 0] = False
        what = "(B, H, L, S), two rows fully masked"
    grade.check(
        q, k, v, mask=mask, case=describe_case(B=B, H=H, L=L, S=S, d=d, dv=dv, mask=what), mistakes=sdpa_mistakes
    )


@grades("attention.scaled_dot_product_attention", title="B=1, L=1, S=1 (the one weight is 1), float32")
def test_sdpa_single(grade, make):
    q, k, v = (make.randn(1, 1, 4, dtype=torch.float32) for _ in range(3))
    grade.check(q, k, v, case=describe_case(B=1, L=1, S=1, d=4, dtype=torch.float32), mistakes=sdpa_mistakes)


@grades("attention.scaled_dot_product_attention", title="scores of magnitude ~1e4 (a naive softmax overflows)")
def test_sdpa_large_logits(grade, make):
    B, L, S, d = 2, 3, 5, 4
    q, k, v = make.randn(B, L, d, scale=100.0), make.randn(B, S, d, scale=100.0), make.randn(B, S, 3)
    grade.check(q, k, v, case=describe_case(B=B, L=L, S=S, d=d, scores="~1e4"), mistakes=sdpa_mistakes)


# --- causal mask -----------------------------------------------------------------------------

CAUSAL_MISTAKES = [
    (
        "inverted mask",
        lambda T, dev: torch.ones(T, T, dtype=torch.bool, device=dev).triu(1),
        "True means 'may attend': position i may see j <= i, so True on and below the diagonal "
        "(nn.Transformer.generate_square_subsequent_mask uses the opposite convention).",
    ),
    (
        "diagonal excluded",
        lambda T, dev: torch.ones(T, T, dtype=torch.bool, device=dev).tril(-1),
        "a position may attend to itself: keep the diagonal (tril(), not tril(-1)).",
    ),
    (
        "upper triangle",
        lambda T, dev: torch.ones(T, T, dtype=torch.bool, device=dev).triu(),
        "rows are queries and columns keys: query i may see keys j <= i, the lower triangle.",
    ),
]


def causal_mistakes(T, device=None):
    return [Mistake(name, variant_output(fn, T, device), why) for name, fn, why in CAUSAL_MISTAKES]


@grades("attention.causal_mask", title="(T, T) bool, True on and below the diagonal, on the requested device")
@pytest.mark.parametrize("T", [1, 5, 12])
def test_causal_mask(grade, device, T):
    grade.check(T, device=device, case=describe_case(T=T, device=device.type), mistakes=causal_mistakes)


@grades("attention.causal_mask", title="device=None gives a mask on the default device")
def test_causal_mask_default_device(grade):
    grade.check(4, case=describe_case(T=4, device="None"), mistakes=causal_mistakes)


# --- multi-head attention --------------------------------------------------------------------


def mha_params(make, E, dtype=torch.float64):
    params = {f"W_{n}": make.randn(E, E, dtype=dtype, scale=1 / math.sqrt(E)) for n in "qkvo"}
    params.update({f"b_{n}": make.randn(E, dtype=dtype, scale=0.5) for n in "qkvo"})
    return params


def mha_variant(
    query,
    key,
    value,
    params,
    num_heads,
    mask=None,
    *,
    split="contiguous",
    scale="head",
    transpose=True,
    in_bias=True,
    out_proj=True,
    out_bias=True,
    per_head_mask=True,
    average=False,
    zero_full_rows=False,
    **softmax,
):
    """Multi-head attention with the knobs students get wrong (defaults: the contract)."""
    B, L, E = query.shape
    S = key.shape[1]
    h, dh = num_heads, E // num_heads

    def linear(x, name, bias=True):
        W = params[f"W_{name}"]
        y = x @ (W.T if transpose else W)
        return y + params[f"b_{name}"] if bias else y

    def heads(x, n):
        if split == "contiguous":
            return x.reshape(B, n, h, dh).transpose(1, 2)
        return x.reshape(B, n, dh, h).permute(0, 3, 1, 2)  # head i gets features i, i+h, i+2h, ...

    def merge(x):
        if split == "contiguous":
            return x.transpose(1, 2).reshape(B, L, E)
        return x.permute(0, 2, 3, 1).reshape(B, L, E)

    q, k, v = (heads(linear(x, n, in_bias), m) for x, n, m in ((query, "q", L), (key, "k", S), (value, "v", S)))
    m = mask
    if m is not None and m.dim() == 3 and per_head_mask:
        m = m.unsqueeze(1)
    scale_value = {"head": math.sqrt(dh), "model": math.sqrt(E), "none": 1.0}[scale]
    out, weights = attend(q, k, v, m, scale=scale_value, **softmax)
    out = merge(out)
    if out_proj:
        out = linear(out, "o", out_bias)
    if zero_full_rows and mask is not None:
        blocked = ~torch.broadcast_to(mask, (B, L, S)).any(dim=-1, keepdim=True)
        out = out.masked_fill(blocked, 0.0)
    return out, (weights.mean(dim=1) if average else weights)


MHA_MISTAKES = [
    (
        "weights averaged over heads",
        {"average": True},
        "return the weights of every head, (B, num_heads, L, S); nn.MultiheadAttention averages them only "
        "by default (average_attn_weights=True).",
    ),
    (
        "heads interleaved",
        {"split": "interleaved"},
        "head i owns the contiguous features [i*dh, (i+1)*dh): x.view(B, n, num_heads, dh).transpose(1, 2), "
        "not view(B, n, dh, num_heads).",
    ),
    (
        "scaled by sqrt(E)",
        {"scale": "model"},
        "each head is scaled by the square root of its own size, sqrt(E // num_heads), not sqrt(E).",
    ),
    ("no scaling", {"scale": "none"}, "each head's scores must be divided by sqrt(E // num_heads)."),
    (
        "weights not transposed",
        {"transpose": False},
        "weights use PyTorch's layout (out, in): a projection is x @ W.T + b, not x @ W.",
    ),
    (
        "no output projection",
        {"out_proj": False},
        "after concatenating the heads, apply the output projection: concat @ W_o.T + b_o.",
    ),
    ("output bias b_o missing", {"out_bias": False}, "the output projection is concat @ W_o.T + b_o, with its bias."),
    (
        "input projection biases missing",
        {"in_bias": False},
        "Q, K and V are x @ W.T + b with their biases b_q, b_k, b_v.",
    ),
    (
        "mask not expanded for the heads",
        {"per_head_mask": False},
        "a (B, L|1, S) mask must become (B, 1, L|1, S) before it meets the (B, h, L, S) scores; "
        "otherwise batch j's mask lands on head j.",
    ),
    (
        "fully masked output row set to zero",
        {"zero_full_rows": True},
        "a row with no allowed key has zero attention in every head, but the output projection still adds "
        "b_o: that row of the output equals b_o.",
    ),
    *MASK_MISTAKES,
]


def mha_mistakes(query, key, value, params, num_heads, mask=None):
    return [
        Mistake(name, variant_output(mha_variant, query, key, value, params, num_heads, mask, **kw), why)
        for name, kw, why in MHA_MISTAKES
    ]


@grades(
    "attention.multi_head_attention", title="matches nn.MultiheadAttention, self-attention, no mask, per-head weights"
)
@DTYPES
def test_mha_self(grade, make, dtype):
    B, L, E, h = 2, 5, 8, 2
    x = make.randn(B, L, E, dtype=dtype)
    grade.check(
        x,
        x,
        x,
        mha_params(make, E, dtype),
        h,
        case=describe_case(B=B, L=L, E=E, num_heads=h, dtype=dtype),
        mistakes=mha_mistakes,
    )


@grades(
    "attention.multi_head_attention",
    title="cross-attention, L != S, (B, 1, S) padding mask, one batch row fully masked (its output rows equal b_o)",
)
def test_mha_cross_padding(grade, make):
    B, L, S, E, h = 3, 4, 6, 12, 3
    query, memory = make.randn(B, L, E), make.randn(B, S, E)
    value = make.randn(B, S, E)
    mask = padding_mask(make, B, S, empty_row=2).unsqueeze(1)
    grade.check(
        query,
        memory,
        value,
        mha_params(make, E),
        h,
        mask=mask,
        case=describe_case(B=B, L=L, S=S, E=E, num_heads=h, mask="(B, 1, S) padding, batch 2 fully masked"),
        mistakes=mha_mistakes,
    )


@grades("attention.multi_head_attention", title="self-attention with a (L, S) causal mask, 4 heads")
def test_mha_causal(grade, make, ref):
    B, L, E, h = 2, 5, 8, 4
    x = make.randn(B, L, E)
    mask = ref("attention.causal_mask")(L, device=make.device)
    grade.check(
        x,
        x,
        x,
        mha_params(make, E),
        h,
        mask=mask,
        case=describe_case(B=B, L=L, E=E, num_heads=h, mask="(L, L) causal"),
        mistakes=mha_mistakes,
    )


@grades("attention.multi_head_attention", title="(B, L, S) mask with fully masked rows, head size 2")
@DTYPES
def test_mha_full_mask(grade, make, dtype):
    B, L, S, E, h = 2, 3, 4, 6, 3
    query = make.randn(B, L, E, dtype=dtype)
    key, value = make.randn(B, S, E, dtype=dtype), make.randn(B, S, E, dtype=dtype)
    mask = make.mask(B, L, S, p_keep=0.6)
    mask[..., 1] = True
    mask[0, 2] = False
    mask[1, 0] = False
    grade.check(
        query,
        key,
        value,
        mha_params(make, E, dtype),
        h,
        mask=mask,
        case=describe_case(
            B=B, L=L, S=S, E=E, num_heads=h, mask="(B, L, S), rows (0, 2) and (1, 0) fully masked", dtype=dtype
        ),
        mistakes=mha_mistakes,
    )


@grades("attention.multi_head_attention", title="B=1, L=1, S=1, num_heads == E (head size 1)")
def test_mha_single(grade, make):
    E = 4
    grade.check(
        make.randn(1, 1, E),
        make.randn(1, 1, E),
        make.randn(1, 1, E),
        mha_params(make, E),
        E,
        case=describe_case(B=1, L=1, S=1, E=E, num_heads=E),
        mistakes=mha_mistakes,
    )
