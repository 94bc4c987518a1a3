"""Helpers shared by the question generators: parameter drawing and the reference solutions."""

from __future__ import annotations

import importlib
import math
import random
import sys

import torch

from ...paths import COURSE_ROOT
from ..errors import ExamError


def ref(module: str):
    """The reference module ``solutions.<module>`` (the course root goes on ``sys.path``)."""
    root = str(COURSE_ROOT)
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        return importlib.import_module(f"solutions.{module}")
    except ImportError as exc:  # pragma: no cover - only while solutions/ is being written
        raise ExamError(f"the exam needs the reference solutions/{module}.py: {exc}") from exc


def t(x) -> torch.Tensor:
    """Parameters are plain lists; the references get float64 tensors (exact to ~1e-15)."""
    return torch.tensor(x, dtype=torch.float64)


def dec(rng: random.Random, lo: float, hi: float, places: int = 1, nonzero: bool = False) -> float:
    """A decimal with ``places`` digits in [lo, hi]: prints as typed (0.3, never 0.30000000000000004)."""
    scale = 10**places
    while True:
        k = rng.randint(round(lo * scale), round(hi * scale))
        if k or not nonzero:
            return k / scale if places else float(k)


def decs(rng: random.Random, n: int, lo: float, hi: float, places: int = 1, nonzero: bool = False) -> list[float]:
    return [dec(rng, lo, hi, places, nonzero) for _ in range(n)]


def mat(
    rng: random.Random, rows: int, cols: int, lo: float = -1.0, hi: float = 1.0, places: int = 1
) -> list[list[float]]:
    return [decs(rng, cols, lo, hi, places) for _ in range(rows)]


def floats(x) -> list[float]:
    """A tensor (any shape) as a flat list of Python floats."""
    return [float(v) for v in torch.as_tensor(x).reshape(-1).tolist()]


def mha_param_shapes(E: int) -> dict[str, tuple[int, ...]]:
    """The params dict of ``attention.multi_head_attention`` for model width E, as shapes."""
    return {k: (E, E) for k in ("W_q", "W_k", "W_v", "W_o")} | {k: (E,) for k in ("b_q", "b_k", "b_v", "b_o")}


def shape_numel(shapes: dict[str, tuple[int, ...]]) -> int:
    return sum(math.prod(s) for s in shapes.values())
