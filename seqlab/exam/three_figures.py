"""The 3-significant-figure student, simulated on a draw: every value a torch operation of the
key's computation returns is rounded to 3 significant figures, as a student with a calculator who
writes each intermediate down to 3 figures and keys it back in; the final answer too.

A question whose tolerance promises to accept such work (``promises_three_figures``) is graded
with a relative tolerance only, the same share of every entry on every draw (the third audit: an
absolute part made it +-8-10% of a small entry on one paper and +-2.5% on another, so a transposed
projection scored on one and not the other). A draw on which the simulated student misses more
than ``THREE_FIGURE_SHARE`` of that tolerance (an entry small after a cancellation, where 3-figure
intermediates lose their digits) is drawn again (``draws.three_figures_pass``).

The simulation is harsher than a student: it rounds inside a softmax or a sigmoid too, where a
calculator keeps full precision. A draw it passes, an honest student passes.
"""

from __future__ import annotations

import json
import math
import random
import zlib
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from .model import NUMERIC, Question

# A question whose worked solution is written out in plain Python (``declare.by_hand``) is followed to
# nearest and along HAND_PATHS more rounding paths, each value landing anywhere within half a unit
# of its 3rd figure (another order of the operations, rounding up where another rounds down:
# tests/exam/test_rounding_rule.py's model); a draw is kept when every path stays within
# THREE_FIGURE_SHARE of the tolerance. 0.6, not 1: the paths a student takes are not these (at
# 0.7 the test's 21 other paths missed by 1.07 tolerances on one of its 1000 draws). Another question runs its reference under
# the torch simulation, to nearest only (PATHS: each path is a reference call, milliseconds a try),
# and is kept within NEAREST_SHARE: half, for the other orders of work one path does not follow
# (the record in bank/helpers.py: one path's worst miss 0.43 of a tolerance, 21 paths' 0.86).
THREE_FIGURE_SHARE = 0.6
NEAREST_SHARE = 0.5
PATHS = 0
HAND_PATHS = 40


def three_figures(t: torch.Tensor) -> torch.Tensor:
    if not t.is_floating_point():
        return t
    with torch._C.DisableTorchFunction():
        size = t.abs()
        exponent = torch.floor(torch.log10(torch.where(size > 0, size, torch.ones_like(size))))
        unit = 10.0 ** (exponent - 2)
        return torch.where(size > 0, torch.round(t / unit) * unit, t)


def any_three_figures(t: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """``t`` moved anywhere within half a unit of its 3rd significant figure: one rounding path."""
    if not t.is_floating_point():
        return t
    with torch._C.DisableTorchFunction():
        size = t.abs()
        exponent = torch.floor(torch.log10(torch.where(size > 0, size, torch.ones_like(size))))
        half = 0.5 * 10.0 ** (exponent - 2)
        shift = (torch.rand(t.shape, generator=generator, dtype=t.dtype) * 2 - 1) * half
        return torch.where(size > 0, t + shift, t)


class ThreeFigureStudent(TorchFunctionMode):
    """Every tensor a torch function returns, rounded to 3 significant figures (to nearest, or
    along a random rounding path when ``generator`` is given)."""

    def __init__(self, generator: torch.Generator | None = None):
        super().__init__()
        self.generator = generator

    def _round(self, t: torch.Tensor) -> torch.Tensor:
        return three_figures(t) if self.generator is None else any_three_figures(t, self.generator)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor):
            return self._round(out)
        if type(out) is tuple and all(isinstance(x, torch.Tensor) for x in out):
            return tuple(self._round(x) for x in out)
        return out  # max/min's (values, indices) hold entries of their input, already rounded


def promises_three_figures(q: Question) -> bool:
    return q.kind == NUMERIC and q.tolerance is not None and "3 significant figures" in q.tolerance.why


def has_hand(q: Question) -> bool:
    """The question's worked solution is written out in plain Python with a rounding hook (``r``,
    ``declare.by_hand``): its paths cost microseconds, where the torch simulation costs a
    reference call each."""
    return q.by_hand is not None


def hand_key(q: Question, params: dict) -> Any:
    """The key by the hand-written solution (exact arithmetic), or None where there is none."""
    return q.by_hand(params, lambda x: x) if q.by_hand else None


def _path(rng: random.Random) -> Callable[[float], float]:
    def rounded(x: float) -> float:
        if not x:
            return 0.0
        half = 0.5 * 10 ** (math.floor(math.log10(abs(x))) - 2)
        return x + rng.uniform(-half, half)

    return rounded


def _nearest(x: float) -> float:
    return float(f"{x:.3g}") if x else 0.0


def three_figure_miss(q: Question, params: dict, key: Any, paths: int = PATHS) -> float:
    """The simulated student's worst miss on this draw over the nearest path and ``paths`` more
    (seeded from the draw: the same verdict on every machine), in units of the tolerance; a
    question with a hand-written solution (``declare.by_hand``) is followed along HAND_PATHS."""
    tol = q.tolerance
    assert tol is not None
    hand = q.by_hand
    if key is None:  # before the reference is called: the hand solution's exact value
        key = hand(params, lambda x: x) if hand else q.answer(params)
    want = key if isinstance(key, list) else [key]
    seed = zlib.crc32(json.dumps(params, sort_keys=True).encode())
    generator = torch.Generator().manual_seed(seed)
    rng = random.Random(seed)
    worst = 0.0
    for path in range(HAND_PATHS + 1 if hand else paths + 1):
        if hand:
            work = hand(params, _path(rng) if path else _nearest)
        else:
            with ThreeFigureStudent(generator if path else None):
                work = q.answer(params)
        got = [float(f"{float(x):.3g}") for x in (work if isinstance(work, list) else [work])]
        worst = max(worst, max(abs(g - k) / max(tol.atol + tol.rtol * abs(k), 1e-300) for g, k in zip(got, want)))
        if worst > THREE_FIGURE_SHARE:
            break  # refused already: the other paths cannot take it back
    # in units of THREE_FIGURE_SHARE's kind: a nearest-only miss counts as its share of NEAREST_SHARE
    return worst if hand else worst * THREE_FIGURE_SHARE / NEAREST_SHARE
