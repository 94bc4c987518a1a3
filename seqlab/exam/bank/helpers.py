"""Helpers shared by the question generators: parameter drawing and the reference solutions."""

from __future__ import annotations

import importlib
import math
import random
import sys

import torch

from ...paths import COURSE_ROOT
from ...tolerance import Tolerance
from ..errors import ExamError

# The paper's rounding rule lets a question accept intermediates rounded to 3 significant figures
# when its text says so (the audit: a 0.1% tolerance cost one such student 3 of 3 entries and
# another none). Each is measured by simulating that student on 1000 draws
# (tests/exam/test_three_figures.py: every value a torch operation of the key returns, rounded to
# 3 figures, a harsher student than one with a calculator), and the general rule still holds at
# this width: a draw whose key accepts 0 or a named mistake is drawn again.
# Sums of products after a subtraction (1 - h^2, p - y, the log of a softmax, an LSTM cell's gates):
# the rounding errors do not shrink with the key, so an absolute part too (worst miss measured on
# 1000 draws: 0.43 of it for rnn.bptt_param_grads, 0.23 rnn.ce_loss, 0.19 rnn.bptt_output_grad
# and lstm.cell_update; 0.86 over 21 rounding paths, tests/exam/test_rounding_rule.py).
# The third audit: that absolute part was +-8-10% of a small entry on one paper and +-2.5% on
# another, so a transposed projection or d_k for sqrt(d_k) scored on one paper and not on the
# other. Now relative only, the same 2% of every entry on every draw; a draw whose simulated
# 3-figure student misses half of it is drawn again (``three_figures``, ``draws.three_figures_pass``):
# 2%, not 1%, so a student rounding in another order than the simulation (up to twice its miss)
# stays inside; the method slips are named mistakes, kept outside it on every draw.
THREE_FIGURE_WORK = Tolerance(
    2e-2, 0.0, why="accepts every draw computed with intermediates rounded to 3 significant figures"
)
# Recurrences and products whose error stays relative (two optimizer steps, a cache size): 1%
# relative (worst miss measured on 1000 draws with a 0.001 absolute part beside it: 0.91 of it for
# opt.rmsprop_steps, 0.72 opt.momentum_steps, 0.48 ssm.kv_cache); since the third audit relative
# only, as THREE_FIGURE_WORK: an entry near 0, where 3-figure work would miss, is drawn again.
THREE_FIGURES_RELATIVE = Tolerance(
    1e-2, 0.0, why="accepts every draw computed with intermediates rounded to 3 significant figures"
)


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


def slip_scores(slip: float, key: float, tolerance: Tolerance = THREE_FIGURE_WORK) -> bool:
    """Whether a slip no mistake names lands within twice ``tolerance``'s relative part of the key:
    a ``skips_work`` rule then redraws, or the slip keeps the marks on this paper and not on
    another (the margin: 3-figure work on the slip must not score either)."""
    return abs(slip - key) <= 2 * tolerance.rtol * abs(key)


def near(a: float, b: float) -> bool:
    """Equal to float precision (a degenerate draw's test: a pre-activation of 0, two equal values)."""
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
