"""solutions/positional.py against the formula of Vaswani et al. written out directly and
against F.embedding for the lookup."""

from __future__ import annotations

import math
from fnmatch import fnmatch

import pytest
import torch
import torch.nn.functional as F

from solutions import positional
from tests._helpers import assert_close, call_pure, ops_called

# --- helpers (purity, op recording) -------------------------------------------------------------


def direct_encoding(P, d):
    """pe[p, 2i] = sin(p / 10000^(2i/d)), pe[p, 2i+1] = cos(p / 10000^(2i/d)), with Python's math."""
    rows = []
    for p in range(P):
        row = []
        for j in range(d):
            two_i = j - j % 2
            angle = p / 10000 ** (two_i / d)
            row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float64).reshape(P, d)


# --- sinusoidal encoding ------------------------------------------------------------------------


@pytest.mark.parametrize("P,d", [(1, 1), (1, 4), (3, 1), (7, 5), (50, 16), (20, 7), (200, 6)])
def test_sinusoidal_encoding_matches_formula(device, dtype, P, d):
    pe = positional.sinusoidal_encoding(P, d, device=device, dtype=dtype)
    assert pe.shape == (P, d) and pe.dtype == dtype and pe.device.type == device.type
    assert_close(pe, direct_encoding(P, d).to(device=device, dtype=dtype))


@pytest.mark.parametrize("d", [1, 3, 5, 9])
def test_sinusoidal_encoding_odd_width_ends_with_a_sine(d):
    P = 6
    pe = positional.sinusoidal_encoding(P, d, dtype=torch.float64)
    last = torch.sin(torch.arange(P, dtype=torch.float64) / 10000 ** ((d - 1) / d))
    assert_close(pe[:, -1], last)
    assert_close(pe, direct_encoding(P, d))


def test_sinusoidal_encoding_is_interleaved():
    pe = positional.sinusoidal_encoding(4, 8, dtype=torch.float64)
    assert torch.equal(pe[0], torch.tensor([0.0, 1.0] * 4, dtype=torch.float64))
    assert_close(pe[3, 0:2], torch.tensor([math.sin(3.0), math.cos(3.0)], dtype=torch.float64))
    assert_close(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(4, 4, dtype=torch.float64))


def test_sinusoidal_encoding_defaults():
    pe = positional.sinusoidal_encoding(5, 4)
    assert pe.dtype == torch.float32 and pe.device == torch.empty(0).device


def test_sinusoidal_float32_is_the_rounded_float64_table():
    """Large positions: the float32 table is the float64 one rounded, not a float32 angle computation."""
    pe32 = positional.sinusoidal_encoding(5000, 6)
    pe64 = positional.sinusoidal_encoding(5000, 6, dtype=torch.float64)
    assert torch.equal(pe32, pe64.float())


# --- embed_tokens -------------------------------------------------------------------------------


@pytest.mark.parametrize("B,T,V,d", [(1, 1, 3, 2), (2, 1, 5, 1), (3, 6, 11, 8), (2, 9, 4, 5)])
def test_embed_tokens_matches_lookup_plus_encoding(device, dtype, gen, B, T, V, d):
    tokens = torch.randint(V, (B, T), generator=gen).to(device)
    embedding = torch.randn(V, d, generator=gen, dtype=torch.float64).to(device=device, dtype=dtype)
    pe = positional.sinusoidal_encoding(T + 3, d, device=device, dtype=dtype)
    x = call_pure(positional.embed_tokens, tokens, embedding, pe)
    assert x.shape == (B, T, d) and x.dtype == dtype and x.device.type == device.type
    assert_close(x, F.embedding(tokens, embedding) * math.sqrt(d) + pe[:T])


def test_embed_tokens_promotes_dtype(gen):
    tokens = torch.randint(4, (2, 3), generator=gen)
    embedding = torch.randn(4, 6, generator=gen, dtype=torch.float32)
    pe = positional.sinusoidal_encoding(3, 6, dtype=torch.float64)
    x = positional.embed_tokens(tokens, embedding, pe)
    assert x.dtype == torch.float64
    assert_close(x, embedding.double()[tokens] * math.sqrt(6) + pe, dtype=torch.float32)  # float32 lookup


def test_embed_tokens_does_not_call_f_embedding(gen):
    tokens = torch.randint(4, (2, 3), generator=gen)
    embedding = torch.randn(4, 6, generator=gen, dtype=torch.float64)
    pe = positional.sinusoidal_encoding(3, 6, dtype=torch.float64)
    names = ops_called(lambda: positional.embed_tokens(tokens, embedding, pe))
    assert names
    assert not [n for n in names if fnmatch(n, "*embedding*")]
