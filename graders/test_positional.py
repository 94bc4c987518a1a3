"""Hidden graders for exercises/positional.py (notes W8 §11.3 sinusoidal encoding, W8 §15.1 the
encoder input; Vaswani et al. 2017 §3.4-§3.5).

``sinusoidal_encoding`` takes no tensors, so its cases vary the arguments themselves: an even and
an odd ``d_model``, a single position, the ``device`` argument given as the test's device (as a
``torch.device`` and as a string) and the ``dtype`` argument given as float64 or left at its
float32 default. ``embed_tokens`` gets random tables so that every position and every token
matters.

Known wrong variants are computed here, on the same inputs, so a failure can say which classic
mistake it looks like.
"""

from __future__ import annotations

import math

import pytest
import torch

from seqlab.grading.autograd import TITLE as AUTOGRAD_TITLE
from seqlab.grading.autograd import check_autograd
from seqlab.grading.checks import Case, Mistake, describe_case, from_table
from seqlab.tolerance import Tolerance

grades = pytest.mark.grades


# --- sinusoidal_encoding: known wrong variants --------------------------------------------------


def table(
    num_positions,
    d_model,
    device=None,
    dtype=torch.float32,
    *,
    swap=False,
    layout="interleaved",
    exponent="2i",
    first_position=0,
    odd_last="sine",
):
    """The encoding with one knob turned; the defaults give the right table (in float64)."""
    P, d = num_positions, d_model
    pos = torch.arange(first_position, first_position + P, dtype=torch.float64).unsqueeze(1)  # (P, 1)
    k = torch.arange((d + 1) // 2, dtype=torch.float64)  # frequency index i = 0, 1, ...
    if exponent == "i":  # 10000^(i/d): the pair index where 2i belongs
        even = odd = pos / 10000.0 ** (k / d)
    elif exponent == "4i":  # 10000^(2*(2i)/d): the even index 2i doubled again
        even = odd = pos / 10000.0 ** (4 * k / d)
    elif exponent == "column":  # each column uses its own index: 2i for sines, 2i+1 for cosines
        even, odd = pos / 10000.0 ** (2 * k / d), pos / 10000.0 ** ((2 * k + 1) / d)
    else:
        even = odd = pos / 10000.0 ** (2 * k / d)
    sines, cosines = torch.sin(even), torch.cos(odd)[:, : d // 2]
    if swap:
        sines, cosines = torch.cos(even), torch.sin(odd)[:, : d // 2]
    pe = torch.zeros(P, d, dtype=torch.float64)
    if layout == "halves":  # [sin ..., cos ...] concatenated instead of interleaved
        pe[:, : sines.shape[1]], pe[:, sines.shape[1] :] = sines, cosines
    else:
        pe[:, 0::2], pe[:, 1::2] = sines, cosines
    if d % 2 and odd_last == "zero":
        pe[:, -1] = 0
    return pe.to(device=device, dtype=dtype)


ENCODING_MISTAKES = [
    (
        "sin and cos swapped",
        dict(swap=True),
        "even columns are sines, odd columns cosines: pe[p, 2i] = sin(p / 10000^(2i/d)), pe[p, 2i+1] = cos(...).",
    ),
    (
        "sines and cosines concatenated in two halves",
        dict(layout="halves"),
        "the table interleaves them, column 2i = sin and column 2i+1 = cos of the same frequency (pe[:, 0::2] "
        "and pe[:, 1::2]), not [all sines, all cosines].",
    ),
    (
        "exponent i/d instead of 2i/d",
        dict(exponent="i"),
        "column pair i uses the frequency 1/10000^(2i/d_model): 2i is the even column's index, so the exponent "
        "runs over 0, 2, 4, ... (torch.arange(0, d, 2)), reaching about 1/10000 at the last pair.",
    ),
    (
        "exponent 2*(2i)/d: 2i doubled again",
        dict(exponent="4i"),
        "the exponent of column pair i is 2i/d_model, where 2i is the even column's index itself (0, 2, 4, "
        "... from torch.arange(0, d, 2)): multiplying that index by 2 again makes the frequencies fall "
        "twice as fast across the columns.",
    ),
    (
        "cosine columns use their own index (2i+1)/d",
        dict(exponent="column"),
        "a sine and the cosine next to it share one frequency: pe[p, 2i+1] = cos(p / 10000^(2i/d)), the "
        "exponent of the EVEN column.",
    ),
    (
        "positions start at 1",
        dict(first_position=1),
        "row p is position p = 0, 1, ..., P-1: the first row is sin(0) = 0, cos(0) = 1.",
    ),
    (
        "last column left at zero (odd d_model)",
        dict(odd_last="zero"),
        "for an odd d_model there are ceil(d/2) sines and floor(d/2) cosines: the last column is the sine of "
        "the last frequency, not zero.",
    ),
]


FLOAT32_ONLY = (
    "computed in float32",
    "the table is right to float32 accuracy only; build the angles in the dtype asked for (e.g. "
    "torch.arange(..., dtype=dtype)) so float64 means float64 all the way.",
)


FLOAT32_ANGLES = (
    "angles computed in float32",
    "p * freq is formed in float32 (the default dtype), whose 24-bit mantissa is off by about p * 6e-8 "
    "radians at position p (1e-4 at p = 2000): compute the angles in float64 and round the finished "
    "table once, pe.to(dtype), as the docstring says.",
)
# The large-position case in float32: a correct table is the float64 formula rounded once to
# float32, so it differs from the reference's by a float32 rounding at most, one unit in the last
# place (ulp) each way: at most 2^-23 = 1.2e-7 relative, a little above float64's rtol of 1e-7
# (an honest exp/log form of the frequencies rounds a few entries the other way). So: float64's
# atol, and rtol 2.5e-7 (two float32 ulps). Angles p * freq formed in float32 are off by about
# p * 6e-8 radians, 3.4e-5 in the table at p = 2000, over a hundred times this tolerance (and about
# 3x float32's own atol of 1e-5 there, which is why the other float32 cases let them pass).
ROUNDED_ONCE = Tolerance(rtol=2.5e-7, atol=1e-9, why="a float64 table rounded once to float32: 2 ulps")


def encoding_mistakes(grade):
    def build(P, d, device=None, dtype=torch.float32):
        found = from_table(ENCODING_MISTAKES, table)(P, d, device=device, dtype=dtype)
        right = grade.ref(P, d, device=device, dtype=dtype)
        if dtype == torch.float64:  # the right table, but only as accurate as float32 angles
            found.append(Mistake(*FLOAT32_ONLY[:1], right, FLOAT32_ONLY[1], tol=grade.tolerances["float32"]))
        else:  # float32 angles: errors no larger than about P * 1e-6 (a few ulps of the angle p * freq)
            found.append(Mistake(FLOAT32_ANGLES[0], right, FLOAT32_ANGLES[1], tol=Tolerance(rtol=0.0, atol=P * 1e-6)))
        return found

    return build


def check_encoding(grade, P, d, tol=None, **kwargs):
    """``sinusoidal_encoding(P, d, **kwargs)`` against the reference (within ``tol`` if given);
    the case says how ``device`` was given and whether ``dtype`` was."""
    device = kwargs["device"]
    case = describe_case(
        num_positions=P,
        d_model=d,
        device=repr(device) if isinstance(device, str) else device.type,
        dtype=kwargs.get("dtype"),
    )
    if "dtype" not in kwargs:
        case += ", dtype not given (float32)"
    grade.check(P, d, **kwargs, case=case, tol=tol, mistakes=encoding_mistakes(grade))


@grades(
    "positional.sinusoidal_encoding", title="matches Vaswani et al.'s table, P=12, d_model=16, dtype=float64", weight=2
)
def test_encoding_float64(grade, device):
    check_encoding(grade, 12, 16, device=device, dtype=torch.float64)


@grades("positional.sinusoidal_encoding", title="default dtype is float32, P=20, d_model=10")
def test_encoding_default_dtype(grade, device):
    check_encoding(grade, 20, 10, device=device)


@grades(
    "positional.sinusoidal_encoding", title="odd d_model=7 ends with a sine, P=9, device given as a string", weight=2
)
def test_encoding_odd_width(grade, device):
    check_encoding(grade, 9, 7, device=str(device), dtype=torch.float64)


@grades("positional.sinusoidal_encoding", title="num_positions=1, d_model=6: sin(0)=0, cos(0)=1")
def test_encoding_one_position(grade, device):
    check_encoding(grade, 1, 6, device=device, dtype=torch.float64)


@grades("positional.sinusoidal_encoding", title="P=300 positions, d_model=8, dtype=float64")
def test_encoding_long(grade, device):
    check_encoding(grade, 300, 8, device=device, dtype=torch.float64)


@grades(
    "positional.sinusoidal_encoding",
    title="float32 table at large positions, P=2001, d_model=16: float64 angles, rounded once",
)
def test_encoding_large_positions_float32(grade, device):
    check_encoding(grade, 2001, 16, tol=ROUNDED_ONCE, device=device)


# --- embed_tokens -----------------------------------------------------------------------------


def embed_variant(tokens, embedding, pe, *, scale="sqrt", scale_pe=False, one_position=False):
    d = embedding.shape[-1]
    factor = {"sqrt": math.sqrt(d), "none": 1.0, "divide": 1 / math.sqrt(d), "d": float(d)}[scale]
    rows = pe[:1].expand(tokens.shape[-1], d) if one_position else pe[: tokens.shape[-1]]
    if scale_pe:
        return (embedding[tokens] + rows) * factor
    return embedding[tokens] * factor + rows


EMBED_MISTAKES = [
    (
        "sqrt(d) scaling missing",
        dict(scale="none"),
        "the embedding is multiplied by sqrt(d) before the encoding is added (Vaswani et al. §3.4): "
        "x = embedding[tokens] * sqrt(d) + pe[:T].",
    ),
    (
        "divided by sqrt(d) instead of multiplied",
        dict(scale="divide"),
        "the embedding is scaled UP by sqrt(d) so it is not drowned by the encoding (entries in [-1, 1]): "
        "multiply, do not divide (dividing by sqrt(d) belongs to attention scores).",
    ),
    (
        "scaled by d instead of sqrt(d)",
        dict(scale="d"),
        "the factor is sqrt(d) = math.sqrt(embedding.shape[-1]), not d.",
    ),
    (
        "positional encoding scaled too",
        dict(scale_pe=True),
        "only the embedding is scaled: embedding[tokens] * sqrt(d) + pe[:T], not (embedding[tokens] + pe[:T]) * sqrt(d).",
    ),
    (
        "the same position added everywhere",
        dict(one_position=True),
        "token t gets row t of the table: add pe[:T] (shape (T, d), broadcast over the batch), not one row.",
    ),
]


def check_embed(grade, make, B, T, V, d, P, dtype=torch.float64, pe_dtype=None):
    case = Case(make, B=B, T=T, V=V, d=d, P=P, dtype=dtype)
    tokens, embedding = case.randint("V", "B", "T"), case.randn("V", "d")
    pe = case.randn("P", "d", dtype=pe_dtype)
    # Mixed dtypes: the result must be float64 (checked exactly), but its values are only as
    # accurate as the float32 embedding: scaling before or after promoting to float64 are both
    # correct and differ by a float32 rounding (~6e-8 of the embedding term), which float64's
    # rtol=1e-7 on the sum would reject. So the values are compared with the float32 tolerance.
    tol = grade.tolerances["float32"] if pe_dtype else None
    if pe_dtype:
        case.note(f"pe {describe_case(dtype=pe_dtype)}")
    grade.check(tokens, embedding, pe, case=case, tol=tol, mistakes=from_table(EMBED_MISTAKES, embed_variant))


@grades(
    "positional.embed_tokens",
    title="matches embedding[tokens] * sqrt(d) + pe[:T], B=3, T=5, d=8, table longer than T",
    weight=2,
)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
def test_embed(grade, make, dtype):
    check_embed(grade, make, 3, 5, 11, 8, 12, dtype)


@grades("positional.embed_tokens", title="B=1, T=1")
def test_embed_one_token(grade, make):
    check_embed(grade, make, 1, 1, 4, 6, 5)


@grades("positional.embed_tokens", title="table of exactly T rows, odd d=7")
def test_embed_exact_table_odd_width(grade, make):
    check_embed(grade, make, 2, 6, 3, 7, 6)


@grades("positional.embed_tokens", title="float32 embedding + float64 table gives float64 (type promotion)", weight=0.5)
def test_embed_promotes_dtype(grade, make):
    check_embed(grade, make, 2, 4, 9, 6, 8, torch.float32, pe_dtype=torch.float64)


@grades("positional.embed_tokens", title="with the sinusoidal table of the notes, B=2, T=10, d=16")
def test_embed_sinusoidal_table(grade, make, ref, device):
    case = Case(make, B=2, T=10, V=50, d=16, P=16, dtype=torch.float64).note("pe = sinusoidal_encoding(16, 16)")
    tokens, embedding = case.randint("V", "B", "T"), case.randn("V", "d", scale=0.1)
    pe = ref("positional.sinusoidal_encoding")(case.P, case.d, device=device, dtype=torch.float64)
    grade.check(tokens, embedding, pe, case=case, mistakes=from_table(EMBED_MISTAKES, embed_variant))


# --- supports autograd (a lab trains through it; the public twin is test_<function>_supports_autograd) ---


@grades("positional.embed_tokens", title=AUTOGRAD_TITLE)
def test_embed_supports_autograd(grade, make):
    case = Case(make, B=2, T=4, V=6, d=5, P=7)
    tokens, embedding, pe = case.randint("V", "B", "T"), case.randn("V", "d"), case.randn("P", "d")
    check_autograd(grade, tokens, embedding, pe, case=case)
