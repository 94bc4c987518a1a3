"""Which of the case's sizes a wrong length is: a shape that differs along one axis, or a crash
on sizes that do not fit, said with the sizes' names ("2 = B where T = 6 belongs").

A loop over ``x.shape[0]`` where ``x.shape[1]`` belongs, or ``T = len(tokens)`` for (B, T)
tokens, gives a result of the wrong length or a crash whose numbers are the case's sizes. Said
only where each number is a size of the case (by its name in the case, ``B=3, T=5``): a fact
about these numbers, never a guess at the code. Where two sizes share a value both are named.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import torch

# PyTorch's messages that carry two sizes that do not fit, or an index past a size.
_MISMATCH = re.compile(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)")
_OUT_OF_BOUNDS = re.compile(r"index (-?\d+) is out of bounds for dimension (\d+) with size (\d+)")
WRONG_AXIS = "a length taken from the wrong axis"


def size_names(sizes: dict[str, Any], n: int) -> str:
    """The case's sizes equal to ``n``, as ``B`` or ``T or P``; "" where none is."""
    names = [k for k, v in sizes.items() if type(v) is int and v == n]
    return " or ".join(names[:3])


def shape_note(actual: Any, expected: Any, sizes: dict[str, Any]) -> str:
    """For a tensor whose shape differs from the expected one along exactly one axis, by sizes
    that are both the case's: which size it has there and which belongs."""
    if not (isinstance(actual, torch.Tensor) and isinstance(expected, torch.Tensor)) or actual.dim() != expected.dim():
        return ""
    differ = [k for k in range(expected.dim()) if actual.shape[k] != expected.shape[k]]
    if len(differ) != 1:
        return ""
    k = differ[0]
    got, want = size_names(sizes, actual.shape[k]), size_names(sizes, expected.shape[k])
    if not got or not want:
        return ""
    return (
        f"; along axis {k} it has {got} = {actual.shape[k]} entries where {want} = {expected.shape[k]} belongs: "
        f"{WRONG_AXIS} (a loop's range, a slice or a reshape sized by {got} where {want} belongs)"
    )


def crash_note(message: str, sizes: dict[str, Any]) -> str:
    """For a crash on two sizes that do not fit (or an index past a size), the case's sizes they
    are; "" where the numbers are not the case's sizes."""
    found = _MISMATCH.search(message)
    if found:
        a, b = int(found.group(1)), int(found.group(2))
        na, nb = size_names(sizes, a), size_names(sizes, b)
        if na and nb and na != nb:
            return (
                f"(here {a} is {na} and {b} is {nb}: {WRONG_AXIS}, a length of {nb} used where {na} belongs "
                f"or the reverse; len(x) is the size of x's FIRST axis, x.shape[1] its second)"
            )
        return ""
    found = _OUT_OF_BOUNDS.search(message)
    if found:
        index, dim, size = (int(g) for g in found.groups())
        name = size_names(sizes, size)
        if name and index >= size:
            others = [k for k, v in sizes.items() if type(v) is int and v > index and k not in name.split(" or ")]
            bigger = f" (a range sized by {' or '.join(others[:3])}?)" if others else ""
            return (
                f"(dimension {dim} has size {name} = {size} here: the index {index} runs past it, {WRONG_AXIS}"
                f" for a loop or an index{bigger})"
            )
    return ""


@contextlib.contextmanager
def sizes_named(sizes: dict[str, Any]) -> Iterator[None]:
    """Run a call so that a crash on sizes that do not fit says which of the case's sizes they are
    (appended to the failure's message; seqlab.grading.checks.NotGradable)."""
    try:
        yield
    except AssertionError as failure:
        note = crash_note(str(failure), sizes)
        append = getattr(failure, "append", None)
        if note and callable(append):
            append(f"\n{note}")
        raise
