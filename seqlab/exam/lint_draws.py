"""The bank lint's rule on draws: a draw that degenerates, so one student's question is easier.

A numeric question's draw is degenerate when

- a key entry is an exact power of 10 other than 1 (0.1, 10, 100): the arithmetic collapses to a
  shift of the decimal point, and a student who guesses the round number is right;
- a weight the question prints is exactly 0 (a parameter named ``W...`` or ``w...``: ``W_hh``,
  ``W1``, the optimised ``w``): the products it enters are skipped;
- the question's own rule in ``SKIPS_WORK`` names it: a branch of the work the question asks
  for is not needed on this draw (``rnn.sample_token`` with u below p_0 needs no cumulative sum).

``draws.draw`` refuses such draws (as it refuses an unfair one) and draws again, so the rule is
kept by construction; ``bank_lint.lint_bank_draws`` checks it over many draws of every question and form,
which is what finds a generator whose draws it does not reach (``tests/exam/test_lint_rules.py``).
Exact questions (counts, shapes, indices) are not judged on powers of 10: a count of 10 is a count.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from .model import NUMERIC, Question

# The work a question asks for and the draws that skip it, per question: (what is skipped, rule).
SKIPS_WORK: dict[str, tuple[str, Callable[[dict, Any], bool]]] = {
    "rnn.sample_token": ("u < p_0: token 0 needs no cumulative sum", lambda p, a: a[0] == 0),
}


def _entries(answer) -> list[float]:
    return [float(x) for x in answer] if isinstance(answer, (list, tuple)) else [float(answer)]


def power_of_ten(x: float) -> bool:
    if x == 0 or not math.isfinite(x):
        return False
    k = round(math.log10(abs(x)))
    return k != 0 and abs(x) == 10.0**k


def _weights(params: dict) -> Iterable[tuple[str, float]]:
    def leaves(value, name):
        if isinstance(value, bool):
            return
        if isinstance(value, (int, float)):
            yield name, float(value)
        elif isinstance(value, (list, tuple)):
            for x in value:
                yield from leaves(x, name)

    for name, value in params.items():
        if name[:1] in ("W", "w") and not name.startswith("width"):
            yield from leaves(value, name)


def degenerate(q: Question, params: dict, answer: Any) -> str:
    """Why this draw of ``q`` is degenerate, or "" (module doc)."""
    if q.kind != NUMERIC:
        return ""
    tol = q.tolerance
    exact = tol is not None and tol.rtol == 0 and tol.atol == 0
    entries = _entries(answer)
    if not exact:
        for e in entries:
            if power_of_ten(e):
                return f"the key entry {e:g} is an exact power of 10"
    zero = [name for name, x in _weights(params) if x == 0]
    if zero:
        return f"the weight {zero[0]} has an entry 0"
    skip = SKIPS_WORK.get(q.id)
    if skip and skip[1](params, answer if isinstance(answer, list) else entries):
        return skip[0]
    return ""
