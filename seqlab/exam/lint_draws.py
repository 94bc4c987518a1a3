"""The bank lint's rule on draws: a draw that degenerates, so one student's question is easier.

A numeric question's draw is degenerate when

- a key entry is an exact power of 10 other than 1 (0.1, 10, 100): the arithmetic collapses to a
  shift of the decimal point, and a student who guesses the round number is right;
- a weight the question prints is exactly 0 (a parameter named ``W...`` or ``w...``: ``W_hh``,
  ``W1``, the optimised ``w``): the products it enters are skipped;
- the question's own rule names it (``declare.skips_work``, in its declaration): a branch of the
  work the question asks for is not needed on this draw (``rnn.sample_token`` with u below p_0
  needs no cumulative sum; a pre-activation of exactly 0, tanh(0) = 0; two values equal in the
  entry the output mixes);
- one entry of the key follows from another: two entries equal, or (computed entries) one minus
  the other (a two-class softmax gradient); of a shape, two equal sizes, so an axis swap is not
  seen (the entries of a softmax gradient over three classes sum to 0: such a question asks for
  two of them, ``rnn.bptt_output_grad``; ``rnn.ce_grad``, off the final, still asks for all);
- the tolerance is loose on an entry: its absolute part is more than ``LOOSE`` of the entry
  (0.02 on C_t = 0.076 is +-27%), so work that is wrong by a fifth still scores.

``draws.draw`` refuses such draws (as it refuses an unfair one) and draws again, so the rule is
kept by construction; ``bank_lint.lint_bank_draws`` checks it over many draws of every question and form,
which is what finds a generator whose draws it does not reach (``tests/exam/test_lint_rules.py``).
Exact questions (counts, shapes, indices) are not judged on powers of 10: a count of 10 is a count.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .model import NUMERIC, Question


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


# The most the absolute part of a tolerance may be of a (nonzero) key entry: beyond it a method
# wrong by that share still scores (0.02 on 0.076). 10%: the 3-figure work the wide tolerances
# accept misses by at most 1% + 0.02, so an entry of 0.2 or more keeps its tolerance within 11%.
LOOSE = 0.1


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
    related = _related_entries(entries, exact, "shape" in q.answer_hint)
    if related:
        return related
    if not exact and tol is not None:
        loose = [e for e in entries if e != 0 and tol.atol > LOOSE * abs(e)]
        if loose:
            return f"the tolerance's absolute {tol.atol:g} is more than {LOOSE:.0%} of the key entry {loose[0]:.4g}"
    zero = [name for name, x in _weights(params) if x == 0]
    if zero:
        return f"the weight {zero[0]} has an entry 0"
    skip = q.skips_work
    if skip and skip[1](params, answer if isinstance(answer, list) else entries):
        return skip[0]
    return ""


def _related_entries(entries: list[float], exact: bool, shape: bool) -> str:
    """Why one entry of the key follows from another ("" when none does; module doc). Integers
    other than a shape's sizes may repeat (a decoded token twice)."""
    if exact and not shape:
        return ""
    for i, a in enumerate(entries):
        for j in range(i + 1, len(entries)):
            b = entries[j]
            if _near(a, b) and (a != 0 or exact):
                return f"entries {i + 1} and {j + 1} are equal" + (": an axis swap is not seen" if exact else "")
            if not exact and a != 0 and _near(a, -b):
                return f"entry {j + 1} is minus entry {i + 1}"
    return ""
