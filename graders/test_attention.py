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

from seqlab.grading.autograd import TITLE as AUTOGRAD_TITLE
from seqlab.grading.autograd import check_autograd
from seqlab.grading.checks import Case, describe_case, from_table

grades = pytest.mark.grades
DTYPES = pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])


# --- known wrong variants: the masked softmax ------------------------------------------------


def masked_softmax(
    scores, mask=None, *, invert=False, full_rows="zero", after=False, stable=True, dim=-1, fill_zero=False
):
    """Softmax over ``dim`` with ``mask`` (True = may attend) and the usual ways to get it wrong.

    full_rows: "zero" (the contract), "nan" (plain softmax over all -inf), "uniform" (masked
    with a large finite negative number, so a fully masked row spreads evenly over all keys).
    after: multiply the softmax by the mask instead of masking the scores (no renormalization).
    stable: False is exp(s) / sum(exp(s)) without subtracting the max.
    fill_zero: masked scores set to 0 instead of -inf (full_rows "uniform": a fully masked row is
    left as the softmax of zeros).
    """
    if mask is not None and invert:
        mask = ~mask
    if mask is not None and not after:
        fill = 0.0 if fill_zero else -1e9 if full_rows == "uniform" else float("-inf")
        scores = scores.masked_fill(~mask, fill)
    if stable:
        weights = torch.softmax(scores, dim=dim)
    else:
        e = torch.exp(scores)
        weights = e / e.sum(dim=dim, keepdim=True)
    if mask is not None and after:
        weights = weights * mask
    if mask is not None and not after and full_rows == "zero":
        empty = (~mask).all(dim=dim, keepdim=True) if fill_zero else scores.amax(dim=dim, keepdim=True) == float("-inf")
        weights = weights.masked_fill(empty, 0.0)
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
    *[
        (
            "masked scores set to 0 instead of -inf",
            {"fill_zero": True, "full_rows": rows},
            "0 is an ordinary score: exp(0) still gives a masked key weight, so masked positions leak into "
            "the output; fill them with -inf (masked_fill(~mask, float('-inf'))) so the softmax gives them 0.",
        )
        for rows in ("zero", "uniform")
    ],
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


def bahdanau_inputs(case):
    """query (B, Hq), keys (B, S, Hk), W_q (A, Hq), W_k (A, Hk), v (A,): scores of order 1."""
    return (
        case.randn("B", "Hq"),
        case.randn("B", "S", "Hk"),
        case.randn("A", "Hq", scale=1 / math.sqrt(case.Hq)),
        case.randn("A", "Hk", scale=1 / math.sqrt(case.Hk)),
        case.randn("A"),
    )


def padding_mask(case, *, empty_row=0):
    """(B, S) bool: each batch row keeps a prefix of random length >= 1; row ``empty_row`` keeps none."""
    lengths = [case.integer(1, case.S) for _ in range(case.B)]
    if empty_row is not None:
        lengths[empty_row] = 0
    mask = torch.arange(case.S)[None, :] < torch.tensor(lengths)[:, None]
    return mask.to(case.device)


@grades("attention.additive_attention", title="Bahdanau attention, no mask, Hq != Hk != A")
@DTYPES
def test_additive_no_mask(grade, make, dtype):
    case = Case(make, B=3, S=6, Hq=5, Hk=4, A=7, dtype=dtype)
    grade.check(*bahdanau_inputs(case), case=case, mistakes=from_table(ADDITIVE_MISTAKES, additive_variant))


@grades(
    "attention.additive_attention",
    title="Bahdanau attention, (B, S) mask with a fully masked batch row (zero weights, zero context)",
    weight=2,
)
@DTYPES
def test_additive_mask(grade, make, dtype):
    case = Case(make, B=3, S=5, Hq=4, Hk=6, A=6, mask="(B, S), batch row 1 fully masked", dtype=dtype)
    args = bahdanau_inputs(case)
    mask = padding_mask(case, empty_row=1)
    mask[2] = case.mask("S", p_keep=0.6) | (torch.arange(case.S, device=case.device) == 0)  # not only prefixes
    grade.check(*args, mask=mask, case=case, mistakes=from_table(ADDITIVE_MISTAKES, additive_variant))


@grades("attention.additive_attention", title="Bahdanau attention, B=1, S=1, A == Hk")
def test_additive_single(grade, make):
    case = Case(make, B=1, S=1, Hq=3, Hk=4, A=4, mask="all True")
    mask = torch.ones(1, 1, dtype=torch.bool, device=case.device)
    grade.check(*bahdanau_inputs(case), mask=mask, case=case, mistakes=from_table(ADDITIVE_MISTAKES, additive_variant))


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


@grades(
    "attention.scaled_dot_product_attention",
    title="matches F.scaled_dot_product_attention, (B, L, d) inputs, L != S, d != dv, no mask",
)
@DTYPES
def test_sdpa_no_mask(grade, make, dtype):
    case = Case(make, B=2, L=4, S=6, d=8, dv=5, dtype=dtype)
    q, k, v = case.randn("B", "L", "d"), case.randn("B", "S", "d"), case.randn("B", "S", "dv")
    grade.check(q, k, v, case=case, mistakes=from_table(SDPA_MISTAKES, sdpa_variant))


@grades("attention.scaled_dot_product_attention", title="no batch dims at all: q (L, d), k (S, d), v (S, dv)")
def test_sdpa_no_batch(grade, make):
    case = Case(make, L=3, S=5, d=4, dv=6, batch="none")
    grade.check(
        case.randn("L", "d"),
        case.randn("S", "d"),
        case.randn("S", "dv"),
        case=case,
        mistakes=from_table(SDPA_MISTAKES, sdpa_variant),
    )


MASK_SHAPES = ["(L, S)", "(B, 1, 1, S)", "(B, H, L, S)"]


def broadcast_mask(case, shape):
    """A mask of ``shape`` that fully masks some rows (and leaves key 0 open elsewhere)."""
    if shape == "(L, S)":
        mask = case.mask("L", "S", p_keep=0.6)
        mask[:, 0] = True
        mask[2] = False  # query 2 sees nothing, in every batch and head
        return mask, "(L, S), query 2 fully masked"
    if shape == "(B, 1, 1, S)":
        return padding_mask(case, empty_row=1).view(case.B, 1, 1, case.S), "(B, 1, 1, S) padding, batch 1 fully masked"
    mask = case.mask("B", "H", "L", "S", p_keep=0.6)
    mask[..., 0] = True
    mask[0, 1, 3] = False
    mask[1, 2, 0] = False
    return mask, "(B, H, L, S), two rows fully masked"


@grades(
    "attention.scaled_dot_product_attention",
    title="(B, H, L, d) inputs with a broadcasting mask that fully masks some rows",
)
@pytest.mark.parametrize("shape", MASK_SHAPES)
def test_sdpa_masks(grade, make, shape):
    case = Case(make, B=2, H=3, L=4, S=5, d=6, dv=3)
    q, k, v = case.randn("B", "H", "L", "d"), case.randn("B", "H", "S", "d"), case.randn("B", "H", "S", "dv")
    mask, described = broadcast_mask(case, shape)
    grade.check(
        q, k, v, mask=mask, case=case.note(f"mask={described}"), mistakes=from_table(SDPA_MISTAKES, sdpa_variant)
    )


@grades("attention.scaled_dot_product_attention", title="B=1, L=1, S=1 (the one weight is 1), float32")
def test_sdpa_single(grade, make):
    case = Case(make, B=1, L=1, S=1, d=4, dtype=torch.float32)
    q, k, v = (case.randn("B", "L", "d") for _ in range(3))
    grade.check(q, k, v, case=case, mistakes=from_table(SDPA_MISTAKES, sdpa_variant))


@grades("attention.scaled_dot_product_attention", title="scores of magnitude ~1e4 (a naive softmax overflows)")
def test_sdpa_large_logits(grade, make):
    case = Case(make, B=2, L=3, S=5, d=4, scores="~1e4")
    q, k, v = case.randn("B", "L", "d", scale=100.0), case.randn("B", "S", "d", scale=100.0), case.randn("B", "S", 3)
    grade.check(q, k, v, case=case, mistakes=from_table(SDPA_MISTAKES, sdpa_variant))


# --- causal mask -----------------------------------------------------------------------------


def mask_inverted(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu(1)


def mask_without_diagonal(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril(-1)


def mask_upper(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu()


CAUSAL_MISTAKES = [
    (
        "inverted mask",
        mask_inverted,
        "True means 'may attend': position i may see j <= i, so True on and below the diagonal "
        "(nn.Transformer.generate_square_subsequent_mask uses the opposite convention).",
    ),
    (
        "diagonal excluded",
        mask_without_diagonal,
        "a position may attend to itself: keep the diagonal (tril(), not tril(-1)).",
    ),
    (
        "upper triangle",
        mask_upper,
        "rows are queries and columns keys: query i may see keys j <= i, the lower triangle.",
    ),
]


@grades("attention.causal_mask", title="(T, T) bool, True on and below the diagonal, on the requested device")
@pytest.mark.parametrize("T", [1, 5, 12])
def test_causal_mask(grade, device, T):
    grade.check(T, device=device, case=describe_case(T=T, device=device.type), mistakes=from_table(CAUSAL_MISTAKES))


@grades("attention.causal_mask", title="device=None gives a mask on the default device")
def test_causal_mask_default_device(grade):
    grade.check(4, case=describe_case(T=4, device="None"), mistakes=from_table(CAUSAL_MISTAKES))


# --- multi-head attention --------------------------------------------------------------------


def mha_params(case):
    """W_q, W_k, W_v, W_o (E, E) and their biases: every head's scores of order 1."""
    params = {f"W_{n}": case.randn("E", "E", scale=1 / math.sqrt(case.E)) for n in "qkvo"}
    params.update({f"b_{n}": case.randn("E", scale=0.5) for n in "qkvo"})
    return params


def mha_variant(
    query,
    key,
    value,
    params,
    num_heads,
    mask=None,
    *,
    split: str = "contiguous",
    scale: str = "head",
    transpose: bool = True,
    biases: str = "all",
    out_proj: bool = True,
    per_head_mask: bool = True,
    head_weights: str = "per head",
    zero_full_rows: bool = False,
    **softmax,
):
    """Multi-head attention with the knobs students get wrong (defaults: the contract).

    biases: "all", "no input biases" (b_q, b_k, b_v) or "no b_o"; head_weights: "per head" or
    "averaged" (over the heads, as nn.MultiheadAttention does by default)."""
    B, L, E = query.shape
    S = key.shape[1]
    h, dh = num_heads, E // num_heads

    def linear(x, name, bias=True):
        W = params[f"W_{name}"]
        y = x @ (W.T if transpose else W)
        return y + params[f"b_{name}"] if bias else y

    def heads(x, n):
        if split in ("contiguous", "merged by reshape"):
            return x.reshape(B, n, h, dh).transpose(1, 2)
        if split in ("split by reshape", "both by reshape"):  # (B, n, E) read as (B, h, n, dh): tokens mixed
            return x.reshape(B, h, n, dh)
        return x.reshape(B, n, dh, h).permute(0, 3, 1, 2)  # head i gets features i, i+h, i+2h, ...

    def merge(x):
        if split in ("contiguous", "split by reshape"):
            return x.transpose(1, 2).reshape(B, L, E)
        if split in ("merged by reshape", "both by reshape"):
            return x.reshape(B, L, E)
        return x.permute(0, 2, 3, 1).reshape(B, L, E)

    q, k, v = (
        heads(linear(x, n, biases != "no input biases"), m)
        for x, n, m in ((query, "q", L), (key, "k", S), (value, "v", S))
    )
    m = mask
    if m is not None and m.dim() == 3 and per_head_mask:
        m = m.unsqueeze(1)
    scale_value = {"head": math.sqrt(dh), "model": math.sqrt(E), "none": 1.0}[scale]
    out, weights = attend(q, k, v, m, scale=scale_value, **softmax)
    out = merge(out)
    if out_proj:
        out = linear(out, "o", biases != "no b_o")
    if zero_full_rows and mask is not None:
        blocked = ~torch.broadcast_to(mask, (B, L, S)).any(dim=-1, keepdim=True)
        out = out.masked_fill(blocked, 0.0)
    return out, (weights.mean(dim=1) if head_weights == "averaged" else weights)


MHA_MISTAKES = [
    (
        "weights averaged over heads",
        {"head_weights": "averaged"},
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
        "heads split by a reshape, without the transpose",
        {"split": "split by reshape"},
        "x.reshape(B, num_heads, n, dh) keeps the memory order of (B, n, E), so each head gets pieces of "
        "several tokens; split with x.view(B, n, num_heads, dh).transpose(1, 2), merge with the inverse.",
    ),
    (
        "heads merged by a reshape, without the transpose",
        {"split": "merged by reshape"},
        "the heads come out as (B, num_heads, L, dh): transpose(1, 2) before reshape(B, L, E), or the "
        "features of one token are taken from several tokens.",
    ),
    (
        "heads split and merged by a reshape, without the transposes",
        {"split": "both by reshape"},
        "x.reshape(B, num_heads, n, dh) keeps the memory order of (B, n, E), so each head gets pieces of "
        "several tokens, and reshape(B, L, E) on (B, num_heads, L, dh) mixes them back the same way: split "
        "with x.view(B, n, num_heads, dh).transpose(1, 2) and merge with out.transpose(1, 2).reshape(B, L, E).",
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
    ("output bias b_o missing", {"biases": "no b_o"}, "the output projection is concat @ W_o.T + b_o, with its bias."),
    (
        "input projection biases missing",
        {"biases": "no input biases"},
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


def check_mha(grade, case, query, key, value, **mask):
    """``multi_head_attention(query, key, value, params, num_heads[, mask])``, the parameters
    drawn for the case after the inputs."""
    params = mha_params(case)
    grade.check(
        query, key, value, params, case.num_heads, **mask, case=case, mistakes=from_table(MHA_MISTAKES, mha_variant)
    )


@grades(
    "attention.multi_head_attention",
    title="matches nn.MultiheadAttention, self-attention, no mask, per-head weights",
)
@DTYPES
def test_mha_self(grade, make, dtype):
    case = Case(make, B=2, L=5, E=8, num_heads=2, dtype=dtype)
    x = case.randn("B", "L", "E")
    check_mha(grade, case, x, x, x)


@grades(
    "attention.multi_head_attention",
    title="cross-attention, L != S, (B, 1, S) padding mask, one batch row fully masked (its output rows equal b_o)",
)
def test_mha_cross_padding(grade, make):
    case = Case(make, B=3, L=4, S=6, E=12, num_heads=3, mask="(B, 1, S) padding, batch 2 fully masked")
    query, memory, value = case.randn("B", "L", "E"), case.randn("B", "S", "E"), case.randn("B", "S", "E")
    check_mha(grade, case, query, memory, value, mask=padding_mask(case, empty_row=2).unsqueeze(1))


@grades("attention.multi_head_attention", title="self-attention with a (L, S) causal mask, 4 heads")
def test_mha_causal(grade, make, ref):
    case = Case(make, B=2, L=5, E=8, num_heads=4, mask="(L, L) causal")
    x = case.randn("B", "L", "E")
    check_mha(grade, case, x, x, x, mask=ref("attention.causal_mask")(case.L, device=case.device))


@grades("attention.multi_head_attention", title="(B, L, S) mask with fully masked rows, head size 2")
@DTYPES
def test_mha_full_mask(grade, make, dtype):
    rows = "(B, L, S), rows (0, 2) and (1, 0) fully masked"
    case = Case(make, B=2, L=3, S=4, E=6, num_heads=3, mask=rows, dtype=dtype)
    query, key, value = case.randn("B", "L", "E"), case.randn("B", "S", "E"), case.randn("B", "S", "E")
    mask = case.mask("B", "L", "S", p_keep=0.6)
    mask[..., 1] = True
    mask[0, 2] = False
    mask[1, 0] = False
    check_mha(grade, case, query, key, value, mask=mask)


@grades("attention.multi_head_attention", title="B=1, L=1, S=1, num_heads == E (head size 1)")
def test_mha_single(grade, make):
    case = Case(make, B=1, L=1, S=1, E=4, num_heads=4)
    check_mha(grade, case, case.randn("B", "L", "E"), case.randn("B", "S", "E"), case.randn("B", "S", "E"))


# --- supports autograd (a lab trains through it; the public twin is test_<function>_supports_autograd) ---


@grades("attention.scaled_dot_product_attention", title=AUTOGRAD_TITLE)
def test_sdpa_supports_autograd(grade, make):
    case = Case(make, B=2, L=4, S=3, d=5, mask="(L, S) padding")
    q, k, v = case.randn("B", "L", "d"), case.randn("B", "S", "d"), case.randn("B", "S", "d")
    mask = torch.ones(4, 3, dtype=torch.bool, device=case.device)
    mask[:, 2] = False
    check_autograd(grade, q, k, v, mask, case=case)


@grades("attention.multi_head_attention", title=AUTOGRAD_TITLE)
def test_mha_supports_autograd(grade, make):
    case = Case(make, B=2, L=3, S=4, E=6, num_heads=2)
    query, memory = case.randn("B", "L", "E"), case.randn("B", "S", "E")
    check_autograd(grade, query, memory, case.randn("B", "S", "E"), mha_params(case), case.num_heads, case=case)
