"""Naming a mistake nobody listed: the student's output held against the reference's by its
structure, on the same inputs.

Every recognised class is a strict match within the check's own tolerance, so a name is a fact
about this output, never a guess: "your output is exactly 0.5 x the expected one" is said only
when ``0.5 * expected`` matches it the way the reference would have to. The classes, tried in
order (cheapest and most specific first):

* a constant factor (named as a ratio of the case's sizes where one fits: B/T, 1/sqrt(d), ...)
  or a constant offset;
* the same values along a permuted axis order (a transpose), or in another memory order (a
  reshape or view where a transpose is needed, or the other way round);
* a shift by one or a reversal along one axis (time steps off by one, a backward pass left
  reversed);
* the reference recomputed with one input changed the way a slip changes it (a term or bias
  left out, a square weight transposed, two inputs swapped, an argument at its default),
  offered by the caller (seqlab.grading.mistakes.without_inputs);
* weights that sum to one along another axis (a softmax over the wrong axis);
* an integer off by one (a step counter).

Where the reference's own re-run names nothing either (seqlab.grading.checks), an update is held
against its start (:func:`step_factor`: the step scaled by a factor of the case's sizes or
settings). Where none fits, :func:`locate` says where the error is: which positions along which axis, and
what the error is inside a block that confines it (a reversed half, a scaled row).
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

import torch

from ..tolerance import Tolerance
from .compare import matches
from .layout import _axes, _close, _sizes_named, _tensor, extra, normalised

CONFINED = "the error is confined to"
# Probes: (the change, the reference's output with it, what it means), built lazily by the caller.
Probes = Callable[[], Iterable[tuple[str, Any, str]]]


_CONSTANTS = {"-1": -1.0, "2": 2.0, "1/2": 0.5}


def _ratios(sizes: dict[str, int]) -> list[tuple[str, float]]:
    """Simple expressions in the case's sizes a student's factor may be: n, 1/n, sqrt(n),
    1/sqrt(n), n/m, and a few plain constants."""
    found = list(_CONSTANTS.items())
    for name, n in sizes.items():
        found += [
            (name, n),
            (f"1/{name}", 1 / n),
            (f"sqrt({name})", math.sqrt(n)),
            (f"1/sqrt({name})", 1 / math.sqrt(n)),
        ]
    for (a, n), (b, m) in itertools.permutations(sizes.items(), 2):
        found += [(f"{a}/{b}", n / m), (f"{a}*{b}", n * m)]
    return found


def _hyper(sizes: dict[str, Any]) -> list[tuple[str, float]]:
    """Expressions in a case's float settings a factor on an update may be (1 + momentum: a
    first step taken with the gradient counted twice, 1 - beta, 1/(1 - beta))."""
    found = []
    for name, v in sizes.items():
        if isinstance(v, float) and v not in (0.0, 1.0):
            found += [(name, v), (f"1/{name}", 1 / v), (f"1 + {name}", 1 + v), (f"1 - {name}", 1 - v)]
            found += [(f"1/(1 - {name})", 1 / (1 - v))]
    return found


def _name_factor(c: float, sizes: dict[str, Any], settings: bool = False) -> tuple[str, bool]:
    """``c`` as said in feedback, and whether it is a simple expression (of the case's sizes, and
    with ``settings`` of its float settings)."""
    exprs = _ratios(_sizes_named(sizes)) + (_hyper(sizes) if settings else [])
    named = [expr for expr, value in exprs if math.isclose(c, value, rel_tol=1e-9)]
    if not named:
        return f"{c:.6g}", False
    symbolic = [expr for expr in dict.fromkeys(named) if expr not in _CONSTANTS]
    if not symbolic:
        return f"{c:g}", True
    used = {k: v for k, v in dict(_hyper(sizes)[::5]).items() if settings and any(k in x for x in symbolic[:3])}
    where = ", ".join(f"{k}={v:g}" for k, v in {**_sizes_named(sizes), **used}.items())
    return f"{c:.6g} = {' = '.join(symbolic[:3])} (here {where})", True


def scale(a: torch.Tensor, e: torch.Tensor, tol: Tolerance, sizes: dict[str, Any]) -> str | None:
    """A constant factor or offset between ``a`` and ``e``."""
    ee = float((e * e).sum())
    if ee > 0:
        c = float((a * e).sum()) / ee
        # One number is always some multiple of another: a factor says something about a single
        # value only when it is a simple expression of the case's sizes.
        factor, simple = _name_factor(c, sizes)
        if (simple or e.numel() > 1) and abs(c - 1) > 1e-6 and abs(c) > 1e-12 and _close(a, c * e, tol):
            return (
                f"your result is exactly {factor} times the expected one: a constant factor "
                f"(a normalisation or scale) is wrong"
            )
    if e.numel() > 1:
        d = float((a - e).mean())
        if abs(d) > tol.atol and not _close(e, e + d, tol) and _close(a, e + d, tol):
            return f"your result is the expected one plus a constant {d:.6g} everywhere: an extra (or missing) constant term"
    return None


def settings_of(fn: Callable[..., Any]) -> dict[str, float]:
    """A function's float settings at their defaults (lr, momentum): what a case that does not
    set them runs with, for :func:`step_factor` to name a factor by."""
    try:
        return {p.name: p.default for p in inspect.signature(fn).parameters.values() if type(p.default) is float}
    except (TypeError, ValueError):
        return {}


def step_factor(actual: Any, expected: Any, before: Any, tol: Tolerance, sizes: dict[str, Any]) -> str:
    """A move from ``before`` (an update's start: an optimizer's w) that is a constant multiple
    of the expected move: the gradient scaled (divided by its numel), a first step with the
    velocity counted twice (1 + momentum). Said only where the expected result moves by more
    than DECISIVE tolerances and the factor is a simple expression of the case's sizes or
    settings: a number nothing names says nothing a student can find in the code."""
    a, e, w = _tensor(actual), _tensor(expected), _tensor(before)
    if a is None or e is None or w is None or not a.shape == e.shape == w.shape:
        return ""
    d = e - w
    if float(d.abs().max()) <= DECISIVE * (tol.atol + tol.rtol * float(e.abs().max())):
        return ""
    c = float(((a - w) * d).sum()) / float((d * d).sum())
    named = {**sizes, "numel": w.numel()}
    factor, simple = _name_factor(c, named, settings=True)
    if not simple or abs(c - 1) < 1e-6 or not _close(a, w + c * d, tol):
        return ""
    return f"your step (the change from the value it starts at) is exactly {factor} times the expected step"


# An update that moves its value by fewer tolerances than this is not told apart from rounding.
DECISIVE = 100.0


def reorder(a: torch.Tensor, e: torch.Tensor, tol: Tolerance, sizes: dict[str, Any]) -> str | None:
    """The same values with the axes permuted, or laid out in another order (a reshape)."""
    if a.numel() != e.numel() or e.dim() < 2 or e.dim() > 5 or e.numel() < 2:
        return None
    for perm in itertools.permutations(range(e.dim())):
        if perm == tuple(range(e.dim())):
            continue
        moved = e.permute(perm)
        if tuple(moved.shape) == tuple(a.shape) and _close(a, moved, tol):
            return (
                f"your values are right but the axes are in another order: your result is the expected one "
                f"permuted to dims {perm} (a transpose where none belongs, or a missing one)"
            )
        if _close(moved.reshape(e.shape), e, tol):
            continue  # it moves only axes of size 1 (or equal values): the same values, nothing reordered
        if tuple(a.shape) != tuple(moved.shape) or tuple(a.shape) == tuple(e.shape):
            if _close(a, moved.reshape(a.shape), tol):
                return (
                    f"your values are right but in another order: they are the expected result permuted to dims "
                    f"{perm} and then reshaped, a reshape (or view) where a transpose/permute is needed"
                )
            back = a.reshape(moved.shape).permute(sorted(range(e.dim()), key=lambda i: perm[i]))
            if tuple(back.shape) == tuple(e.shape) and _close(back.reshape(e.shape), e, tol):
                return (
                    "your values are right but in another order: a transpose/permute where a plain reshape "
                    f"(or view) is needed (dims {perm})"
                )
    return None


def shift(a: torch.Tensor, e: torch.Tensor, tol: Tolerance, sizes: dict[str, Any]) -> str | None:
    """Off by one position, or reversed, along one axis."""
    if tuple(a.shape) != tuple(e.shape):
        return None
    for k in range(e.dim()):
        n = e.shape[k]
        if n < 2:
            continue
        flipped = e.flip(k)
        if not _close(e, flipped, tol) and _close(a, flipped, tol):
            return f"your result is the expected one reversed along {_axes(k, e.shape, sizes)}: an order left reversed"
        if n < 3:
            continue
        late, early = e.narrow(k, 0, n - 1), e.narrow(k, 1, n - 1)
        if _close(late, early, tol):
            continue  # the expected result does not change along this axis: a shift says nothing
        if _close(a.narrow(k, 1, n - 1), late, tol):
            return (
                f"off by one along {_axes(k, e.shape, sizes)}: your position i holds the expected position i-1 "
                f"(one step late)"
            )
        if _close(a.narrow(k, 0, n - 1), early, tol):
            return (
                f"off by one along {_axes(k, e.shape, sizes)}: your position i holds the expected position i+1 "
                f"(one step early)"
            )
    return None


def _ranges(indices: list[int]) -> str:
    runs, start = [], None
    for i, j in itertools.zip_longest(indices, indices[1:]):
        start = i if start is None else start
        if j != i + 1:
            runs.append(f"{start}" if start == i else f"{start}..{i}")
            start = None
    return ", ".join(runs)


def _wrong_along(bad: torch.Tensor, k: int) -> list[int]:
    n = bad.shape[k]
    rows = bad.movedim(k, 0).reshape(n, -1).any(dim=1)
    return [i for i in range(n) if bool(rows[i])]


def locate(a: torch.Tensor, e: torch.Tensor, tol: Tolerance, sizes: dict[str, Any]) -> str | None:
    """Where the error is: the positions along the axes that confine it (at most two axes), and
    what the confined block's error is where a class names it (a reversed half, a scaled row)."""
    if tuple(a.shape) != tuple(e.shape) or e.dim() == 0:
        return None
    bad = ((a - e).abs() > tol.atol + tol.rtol * e.abs()) | ~torch.isfinite(a)
    found = []
    for k in range(e.dim()):
        wrong = _wrong_along(bad, k) if e.shape[k] > 1 else []
        if 0 < len(wrong) < e.shape[k]:
            text = f"{_axes(k, e.shape, sizes)} only at {_ranges(wrong)} of 0..{e.shape[k] - 1}"
            if wrong == list(range(wrong[0], wrong[-1] + 1)):  # one block: say what is wrong in it
                a_block, e_block = (x.narrow(k, wrong[0], len(wrong)) for x in (a, e))
                said = next((s for s in (f(a_block, e_block, tol, sizes) for f in (scale, shift)) if s), None)
                text += f", and there {said}" if said else ""
            found.append((len(wrong) / e.shape[k], text))
    if not found:
        return None
    return CONFINED + " " + "; ".join(text for _, text in sorted(found)[:2]) + " (the rest is right)"


def nonfinite(a: torch.Tensor, e: torch.Tensor) -> str | None:
    """Values that are inf or NaN where every expected value is finite. Exact (no tolerance is
    involved), so it is said for certain; what produced them is only suggested, by the operations
    that can (the cause differs per function and is not inferred)."""
    if a.shape != e.shape or not bool(torch.isfinite(e).all()) or bool(torch.isfinite(a).all()):
        return None
    kinds = [w for w, m in (("nan", a.isnan()), ("inf", a == float("inf")), ("-inf", a == -float("inf"))) if m.any()]
    count = int((~torch.isfinite(a)).sum())
    return (
        f"{count} of {a.numel()} values are {'/'.join(kinds)} where every expected value is finite: a"
        f" division by a quantity that is 0 here, a log of 0 or an exp that overflows ({'0/0, inf - inf or 0 * inf' if 'nan' in kinds else 'x/0, log(0) or exp of a large x'});"
        " look for a quantity that is 0 or extreme only in this case (a step count read before it is"
        " incremented, a maximum subtracted that is not each row's own)"
    )


def counter(actual: Any, expected: Any) -> str | None:
    """An integer off by a small amount (a step counter that starts at 0, or counts twice)."""
    if isinstance(expected, bool) or not isinstance(expected, int) or isinstance(actual, bool):
        return None
    if isinstance(actual, int) and actual != expected and abs(actual - expected) <= 2:
        return (
            f"off by {actual - expected:+d}: got {actual}, expected {expected} (a counter that starts or steps wrongly)"
        )
    return None


def _degenerate(o: torch.Tensor) -> bool:
    """A probe's output that many wrong formulas give too: zero everywhere, or one value repeated
    (with x = 0 a gradient taken over x's one step is 0, and so is that of a loop that skips the
    step): matching it says nothing about which input the student left out."""
    return bool((o == 0).all()) or (o.numel() > 1 and bool((o == o.flatten()[0]).all()))


def diagnose(
    actual: Any, expected: Any, tol: Tolerance, sizes: dict[str, Any], probes: Probes | None = None, name: str = ""
) -> str:
    """The structural class of the difference between ``actual`` and ``expected``, or a place
    that confines it, or "" (nothing to say beyond the numbers)."""
    try:
        return _diagnose(actual, expected, tol, sizes, probes, name)
    except Exception:  # a diagnosis is a courtesy: it never turns a failure into an error
        return ""


def _first_wrong_leaf(
    actual: Any, expected: Any, tol: Tolerance, path: str = ""
) -> tuple[Any, Any, str, tuple[Any, ...]]:
    """The first leaf of ``expected`` that ``actual`` does not match, its path as feedback
    writes it (``[1]``, ``['W_hy']``) and as keys (to pick the same leaf from a probe)."""
    if isinstance(expected, (dict, list, tuple)) and type(actual) is type(expected) and len(actual) == len(expected):
        keys = list(expected) if isinstance(expected, dict) else range(len(expected))
        for key in keys:
            if isinstance(expected, dict) and key not in actual:
                break
            if not matches(actual[key], expected[key], tol):
                a, e, where, at = _first_wrong_leaf(actual[key], expected[key], tol, f"{path}[{key!r}]")
                return a, e, where, (key, *at)
    return actual, expected, path, ()


def _pick(tree: Any, at: tuple[Any, ...]) -> Any:
    try:
        for key in at:
            tree = tree[key]
        return tree
    except (IndexError, KeyError, TypeError):
        return None


def _diagnose(
    actual: Any, expected: Any, tol: Tolerance, sizes: dict[str, Any], probes: Probes | None, name: str
) -> str:
    actual, expected, where, at = _first_wrong_leaf(actual, expected, tol)
    where = f"{name}{where}" if where else ""
    said = _diagnose_leaf(
        actual, expected, tol, sizes, probes and (lambda: [(w, _pick(o, at), m) for w, o, m in probes()])
    )
    if said and where:
        return f"{said} (in {where})" if said.startswith(CONFINED) else f"{where}: {said}"
    return said


def _diagnose_leaf(actual: Any, expected: Any, tol: Tolerance, sizes: dict[str, Any], probes: Probes | None) -> str:
    said = counter(actual, expected)
    if said:
        return said
    a, e = _tensor(actual), _tensor(expected)
    if a is None or e is None:
        if isinstance(actual, torch.Tensor) and isinstance(expected, torch.Tensor) and actual.shape == expected.shape:
            exact = Tolerance(atol=0.0, rtol=0.0)  # integers and booleans: where they differ
            return locate(actual.detach().cpu().double(), expected.detach().cpu().double(), exact, sizes) or ""
        return ""
    if a.shape == e.shape and _close(a, e, tol):
        return ""  # the values are right (the dtype or the device is not, which the check says)
    for recognise in (scale, reorder, shift, normalised) if a.shape == e.shape else (reorder, extra):
        said = recognise(a, e, tol, sizes)
        if said:
            return said
    for what, output, meaning in probes() if probes else ():
        o = _tensor(output)
        if o is not None and o.shape == e.shape and not _close(e, o, tol) and not _degenerate(o) and _close(a, o, tol):
            return f"your result equals the reference's computed with {what}: {meaning}"
    said = nonfinite(a, e)
    return (said or locate(a, e, tol, sizes) or "") if a.shape == e.shape else ""
