"""Helpers for the project's own tests (import as ``from tests._helpers import ...``)."""
from __future__ import annotations

import torch

# Tolerances for reference-vs-PyTorch agreement. float64: both sides are exact up to
# reassociation (~1e-15 per op), so 1e-10 is tight and still robust. float32: eps is ~1.2e-7,
# recurrences over tens of steps and sums over hundreds of terms compound that to ~1e-6
# relative; 1e-5 relative / 1e-6 absolute leaves a 10x margin.
TOL = {
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.float32: dict(rtol=1e-5, atol=1e-6),
}


def assert_close(actual, expected, dtype=None, **overrides):
    dtype = dtype or expected.dtype
    torch.testing.assert_close(actual, expected, **{**TOL[dtype], **overrides})
