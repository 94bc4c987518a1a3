"""Helpers shared by the question generators: parameter drawing and the reference solutions."""
from __future__ import annotations

import importlib
import math
import random
import sys

import torch

from ...paths import COURSE_ROOT


def ref(module: str):
    """The reference module ``solutions.<module>`` (the course root goes on ``sys.path``)."""
    root = str(COURSE_ROOT)
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        return importlib.import_module(f"solutions.{module}")
    except ImportError as exc:  # pragma: no cover - only while solutions/ is being written
        raise RuntimeError(f"the exam needs the reference solutions/{module}.py: {exc}") from exc


def t(x) -> torch.Tensor:
    """Parameters are plain lists; the references get float64 tensors (exact to ~1e-15)."""
    return torch.tensor(x, dtype=torch.float64)


def dec(rng: random.Random, lo: float, hi: float, places: int = 1, nonzero: bool = False) -> float:
    """A decimal with ``places`` digits in [lo, hi]: prints as typed (0.3, never 0.30000000000000004)."""
    scale = 10 ** places
    while True:
        k = rng.randint(round(lo * scale), round(hi * scale))
        if k or not nonzero:
            return k / scale if places else float(k)


def decs(rng: random.Random, n: int, lo: float, hi: float, places: int = 1, nonzero: bool = False) -> list[float]:
    return [dec(rng, lo, hi, places, nonzero) for _ in range(n)]


def mat(rng: random.Random, rows: int, cols: int, lo: float = -1.0, hi: float = 1.0, places: int = 1) -> list[list[float]]:
    return [decs(rng, cols, lo, hi, places) for _ in range(rows)]


def floats(x) -> list[float]:
    """A tensor (any shape) as a flat list of Python floats."""
    return [float(v) for v in torch.as_tensor(x).reshape(-1).tolist()]


def shape_numel(shapes: dict[str, tuple[int, ...]]) -> int:
    return sum(math.prod(s) for s in shapes.values())


# --------------------------------------------------------------------------- validity of a draw
# (used by the questions appended for issue 12; the same rule as issue 11's: merge with its
# framework when both land)

# A named mistake must miss the key by MISTAKE_MARGIN times the tolerance in some entry, so that a
# student who makes the mistake and rounds to four significant digits (an error of at most 5e-4
# relative, half the usual 1e-3 tolerance) is still not accepted.
MISTAKE_MARGIN = 2.0


def _entries(x) -> list[float]:
    return [float(v) for v in (x if isinstance(x, (list, tuple)) else [x])]


def _apart(a: list[float], b: list[float], tolerance) -> bool:
    """``a`` misses ``b`` by more than MISTAKE_MARGIN tolerances (of ``b``) in some entry."""
    return len(a) != len(b) or any(abs(x - y) > MISTAKE_MARGIN * (tolerance.abs + tolerance.rel * abs(y))
                                   for x, y in zip(a, b))


def valid_draw(key, mistakes: dict, tolerance, *, mistakes_apart: bool = True) -> bool:
    """The general rule for a numeric draw: no nonzero key entry accepts 0 (no entry of the key may
    be so small that 0 is within tolerance), and every named mistake differs from the key by more
    than ``MISTAKE_MARGIN`` tolerances in at least one entry. With ``mistakes_apart`` the mistakes
    also differ from each other, so the feedback names the one the student made."""
    keys = _entries(key)
    if any(k != 0 and tolerance.accepts(0.0, k) for k in keys):
        return False
    values = [_entries(v) for v in mistakes.values()]
    if not all(_apart(v, keys, tolerance) for v in values):
        return False
    if mistakes_apart:
        return all(_apart(a, b, tolerance) and _apart(b, a, tolerance)
                   for i, a in enumerate(values) for b in values[i + 1:])
    return True


def redraw(rng: random.Random, draw, is_valid, limit: int = 1000):
    """Draw parameters until ``is_valid(params)``; a question whose rule almost never holds is a bug."""
    for _ in range(limit):
        params = draw(rng)
        if is_valid(params):
            return params
    raise RuntimeError(f"no valid draw in {limit} tries: the validity rule is too strict")
