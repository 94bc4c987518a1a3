"""Locating a mistake nothing names by the inputs it depends on: the student's function and the
reference run again with one input set to zero, and the inputs whose zeroing makes the two agree
are said ("with W_hy = 0 your result is right": the wrong part is in a term W_hy takes part in).

Said only when it narrows things down: one to three inputs out of at least two, and never for an
input whose zeroing makes the expected answer constant (zero everywhere, one token everywhere:
many wrong formulas get that right too). The student's
code runs again here, so the search is cheap to stop: at most MAX_INPUTS calls, within the
function's share of searches (seqlab.grading.checks), and a call that fails just skips its input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..tolerance import Tolerance
from .compare import matches
from .mistakes import zeroed_inputs

MAX_INPUTS = 8


def _constant(x: Any) -> bool:
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, (list, tuple)):
        return all(_constant(item) for item in x)
    return isinstance(x, torch.Tensor) and x.numel() > 0 and bool((x == x.flatten()[0]).all())


def sensitive_inputs(
    student: Callable[..., Any],
    ref: Callable[..., Any],
    names: list[str],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    pick: Callable[[Any], Any],
    tol: Tolerance,
) -> str:
    """ "" or a sentence naming the inputs whose zeroing makes ``student``'s part (``pick``) agree
    with the reference's on these arguments."""
    tried, right = 0, []
    for name, new_args, new_kwargs in zeroed_inputs(names, args, kwargs)[:MAX_INPUTS]:
        try:
            with torch.no_grad():
                expected = pick(ref(*new_args, **new_kwargs))
            if _constant(expected):
                continue  # an answer made constant with its input (zero, one token) tells nothing
            actual = pick(student(*new_args, **new_kwargs))
        except Exception:  # an input the student's code (or the reference) cannot take is skipped
            continue
        tried += 1
        if actual is not None and matches(actual, expected, tol):
            right.append(name)
    if tried < 2 or not 1 <= len(right) <= min(3, tried - 1):
        return ""
    which = " or ".join(f"{n} = 0" for n in right)
    return (
        f"; which inputs change the error: with {which} your result is right, with any other input set to 0 "
        f"it is still wrong, so the wrong part is in a term {' or '.join(right)} takes part in"
    )
