"""Public tests of exercises/positional.py: the sinusoid table and the input embedding.

Sine and cosine are interleaved (even columns sine, odd columns cosine), not two halves.
"""

from __future__ import annotations

import math

import pytest
import torch
from _autograd import check_autograd
from _check import call, check_close, check_tensor

from exercises import positional

checks = pytest.mark.checks
T64 = torch.float64


@checks("positional.sinusoidal_encoding")
def test_sinusoidal_encoding_worked_example():
    # d_model = 4: column pairs (0, 1) and (2, 3) have frequencies 1 / 10000^(0/4) = 1 and
    # 1 / 10000^(2/4) = 1 / 100. Row p = 0 is [sin 0, cos 0, sin 0, cos 0] = [0, 1, 0, 1].
    case = "num_positions=2, d_model=4, dtype=float64"
    pe = call("positional.sinusoidal_encoding", positional.sinusoidal_encoding, 2, 4, dtype=T64, case=case)
    check_tensor("positional.sinusoidal_encoding", pe, case=case, shape=(2, 4), dtype=T64, what="pe")
    check_close(
        "positional.sinusoidal_encoding",
        pe,
        [[0.0, 1.0, 0.0, 1.0], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]],
        case=case,
    )


@checks("positional.sinusoidal_encoding")
def test_sinusoidal_encoding_odd_width_ends_with_a_sine():
    # d_model = 3: frequencies 1 and 1 / 10000^(2/3); the last column (index 2) is a sine with no cosine.
    case = "num_positions=3, d_model=3, dtype=float64"
    pe = call("positional.sinusoidal_encoding", positional.sinusoidal_encoding, 3, 3, dtype=T64, case=case)
    w = 10000 ** (-2 / 3)
    check_close(
        "positional.sinusoidal_encoding", pe, [[math.sin(p), math.cos(p), math.sin(p * w)] for p in range(3)], case=case
    )


@checks("positional.sinusoidal_encoding")
def test_sinusoidal_encoding_is_accurate_at_large_positions():
    # Row p = 19999 of the d_model = 4 table: [sin 19999, cos 19999, sin 199.99, cos 199.99]. An angle
    # formed in float32 is off by up to ~1e-5 there; compute the angles in float64 (at least when
    # dtype=float64 is asked for).
    case = "num_positions=20000, d_model=4, dtype=float64, row 19999"
    pe = call("positional.sinusoidal_encoding", positional.sinusoidal_encoding, 20000, 4, dtype=T64, case=case)
    check_close(
        "positional.sinusoidal_encoding",
        pe[19999],
        [math.sin(19999), math.cos(19999), math.sin(199.99), math.cos(199.99)],
        case=case,
        what="pe[19999]",
    )


@checks("positional.sinusoidal_encoding")
def test_sinusoidal_encoding_float32_is_the_float64_table_rounded():
    # The default float32 table, row p = 2000 of d_model = 16: column pair (2, 3) has frequency
    # 1 / 10000^(2/16) = 0.316227766, so its angle is 2000 * 0.316227766 = 632.455532. float32 keeps
    # 24 bits, about 7 digits: near 632 its spacing is 6.1e-5, so an angle FORMED in float32 is
    # already off by up to 3e-5, and so are its sine and cosine (2.2e-5 in this row). Computed in
    # float64 and rounded once at the end, every entry is within 6e-8 (half a float32 spacing
    # below 1) of the exact value: this test allows 1e-6.
    case = "num_positions=2001, d_model=16, default dtype (float32), row 2000"
    pe = call("positional.sinusoidal_encoding", positional.sinusoidal_encoding, 2001, 16, case=case)
    angles = [2000 / 10000 ** (2 * i / 16) for i in range(8)]
    exact = [f(a) for a in angles for f in (math.sin, math.cos)]
    check_close("positional.sinusoidal_encoding", pe[2000], exact, case=case, what="pe[2000]", atol=1e-6, rtol=0.0)


@checks("positional.sinusoidal_encoding")
def test_sinusoidal_encoding_defaults_to_float32():
    case = "num_positions=5, d_model=6, default dtype"
    pe = call("positional.sinusoidal_encoding", positional.sinusoidal_encoding, 5, 6, case=case)
    check_tensor("positional.sinusoidal_encoding", pe, case=case, shape=(5, 6), dtype=torch.float32, what="pe")


@checks("positional.embed_tokens")
def test_embed_tokens_worked_example():
    # d = 4, so the rows are scaled by sqrt(4) = 2 before the first T = 2 rows of pe are added:
    #   2 * E[1] + pe[0] = 2 * [1, -1, 0.5, 0] + [0, 0, 0, 0] = [2, -2, 1, 0]
    #   2 * E[2] + pe[1] = 2 * [2, 2, 2, 2]    + [1, 1, 1, 1] = [5, 5, 5, 5]
    case = "tokens=[[1, 2]], V=3, d=4, pe with 3 rows"
    embedding = torch.tensor([[0.0, 0.0, 0.0, 0.0], [1.0, -1.0, 0.5, 0.0], [2.0, 2.0, 2.0, 2.0]], dtype=T64)
    pe = torch.tensor([[0.0] * 4, [1.0] * 4, [9.0] * 4], dtype=T64)
    x = call("positional.embed_tokens", positional.embed_tokens, torch.tensor([[1, 2]]), embedding, pe, case=case)
    check_tensor("positional.embed_tokens", x, case=case, shape=(1, 2, 4), dtype=T64, what="x")
    check_close("positional.embed_tokens", x, [[[2.0, -2.0, 1.0, 0.0], [5.0, 5.0, 5.0, 5.0]]], case=case)


@checks("positional.embed_tokens")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_embed_tokens_shape_and_dtype(dtype):
    gen = torch.Generator().manual_seed(0)
    case = f"B=2, T=3, V=7, d=5, pe with 10 rows, {str(dtype)[6:]}"
    x = call(
        "positional.embed_tokens",
        positional.embed_tokens,
        torch.randint(0, 7, (2, 3), generator=gen),
        torch.randn(7, 5, generator=gen).to(dtype),
        torch.randn(10, 5, generator=gen).to(dtype),
        case=case,
    )
    check_tensor("positional.embed_tokens", x, case=case, shape=(2, 3, 5), dtype=dtype, what="x")


# --- autograd through it, as the labs use it (_autograd.py) --------------------------------------


@checks("positional.embed_tokens")
def test_embed_tokens_supports_autograd():
    gen = torch.Generator().manual_seed(10)
    tokens = torch.tensor([[0, 4, 2], [3, 3, 1]])
    embedding, pe = (
        torch.randn(5, 4, generator=gen, dtype=torch.float64),
        torch.randn(6, 4, dtype=torch.float64, generator=gen),
    )
    check_autograd(
        "positional.embed_tokens",
        positional.embed_tokens,
        (tokens, embedding, pe),
        {},
        ("embedding",),
        case="B=2, T=3, V=5, d=4",
    )
