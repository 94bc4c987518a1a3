"""Naming a mistake by the reference's own structure: the reference is run once with its
operations recorded, then again with one of them changed the way a slip changes a line of code,
and a student's output that matches one such run (and no other kind) is named by that change.

The changes, each at one place in the reference's source (every time it runs, or only the first
or the last time, for a place inside a loop):

* a term of a sum left out (``a + b`` computed as ``a``);
* a factor left out (``a * b``, ``a / b`` or ``a @ W`` computed as ``a``): a scale, a
  normalisation or a correction omitted (one tensor left out of a line's product is one change,
  whichever of its multiplications drops it: ``(1 - b) * g * g`` without one ``g``);
* the same factor applied twice (``a / b / b``): double scaling;
* a nonlinearity left out (``tanh(a)`` as ``a``), another in its place (``relu`` for ``tanh``),
  or applied to one operand of a sum or product instead of all of it (``relu(a) + b`` where
  ``relu(a + b)`` belongs, ``exp(a) * b`` where ``exp(a * b)`` does);
* a slice by position replaced by an index with an integer input (``pe[tokens]`` where
  ``pe[:T]`` belongs): indexing by token where position is meant;
* a scale that is a size of the case (``/ math.sqrt(d)``) by another size's (``sqrt(S)``, ``d``):
  only the one-size expressions n, 1/n, sqrt(n), 1/sqrt(n), so a scale is said the way the code
  writes it; two sizes of one value are one change (said together);
* one factor of a fused ``x + a * b`` (``addcmul``) left out; a division done as a product or
  the reverse (``pos * 10000 ** (2i/d)`` where ``pos / 10000 ** (2i/d)`` belongs);
* a masked fill with 0 where ``-inf`` (or another value) belongs: a mask multiplied in;
* a square computed as an absolute value (``|g|`` where ``g * g`` belongs); both operands of a
  square replaced by an input (``x * x`` where ``centered * centered``
  belongs: a raw second moment for a variance);
* an operand replaced by another value of the same shape: an input, or a value the reference
  computes elsewhere (the state before its update, the normalised input where the raw one is
  added back, one direction's initial state for the other's);
* a bias correction written wrongly, a nonlinearity closed too early, an axis mistaken, a
  number doubled or halved (seqlab.grading.edits).

Before any change is tried, the student's part is held against the reference's own recorded
values (seqlab.grading.intermediate): a result that is a value on the way needs no change.

Why this is safe to say: a change is named only when the student's output matches the changed
run within the check's own tolerance, the changed run differs from the reference, and every
matching change of the cheapest tier that matches says the same thing (two different changes
that both fit name nothing). The tiers go from the most specific change to the least: drops and
doublings, then substitutions with inputs, then substitutions with computed values.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from ..tolerance import Tolerance
from .compare import matches
from .diagnose import _CONSTANTS, _ratios
from .edits import as_reshape, bias_corrections, closed_early, factor_two, wrong_axis
from .intermediate import name_by_value, relabel
from .layout import _sizes_named
from .trace import OTHERS, Edit, Mode, Record
from .trace import operand as said_of

_TERMS = {"add", "sub"}
_FACTORS = {"mul", "div", "true_divide", "matmul", "mm", "bmm"}
_UNARY = {"tanh", "sigmoid", "relu", "exp", "log", "sqrt", "softplus", "gelu", "silu"}


def named_inputs(names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, torch.Tensor]:
    """The tensors of a call's arguments by the name feedback gives them (``params['W_o']``)."""
    found: dict[str, torch.Tensor] = {}
    named = [(names[i] if i < len(names) else f"argument {i}", v) for i, v in enumerate(args)] + list(kwargs.items())
    for name, value in named:
        for key, item in value.items() if isinstance(value, dict) else [(None, value)]:
            label = name if key is None else f"{name}[{key!r}]"
            if isinstance(item, torch.Tensor):
                found[label] = item
            elif isinstance(item, dict):
                found.update({f"{label}[{k!r}]": v for k, v in item.items() if isinstance(v, torch.Tensor)})
    return found


def _when_text(when: str, count: int) -> str:
    return "" if when == "all" else f" (only the {when} of the {count} times it is computed)"


def _size_exprs(sizes: dict[str, Any]) -> dict[float, str]:
    """The one-size expressions a scale in the code may be (n, 1/n, sqrt(n), 1/sqrt(n)), by
    value: two sizes of one value are one scale (said ``sqrt(S) = sqrt(L)``)."""
    found: dict[float, list[str]] = {}
    for expr, value in _ratios(_sizes_named(sizes)):
        one_size = "*" not in expr and ("/" not in expr or (expr.startswith("1/") and expr.count("/") == 1))
        if expr not in _CONSTANTS and one_size:
            found.setdefault(value, []).append(expr)
    return {value: " = ".join(dict.fromkeys(exprs)) for value, exprs in found.items()}


def _number(x: Any, exprs: dict[float, str]) -> str:
    """A scale as a teacher writes it: sqrt(d) (2.82843), not just the number."""
    # an int too: ``two_i / d_model`` and ``/ B`` divide by a size as written, not a float
    number = isinstance(x, (int, float)) and not isinstance(x, bool)
    named = [e for v, e in exprs.items() if number and math.isclose(x, v, rel_tol=1e-9)]
    return f"{named[0]} ({x:.6g})" if named else ""


def _dropped(operand: Any) -> Any:
    """What a factor left out is, to tell one change from another: the tensor itself."""
    return ("factor", id(operand)) if isinstance(operand, torch.Tensor) else None


def _edits(
    record: Record, inputs: dict[str, torch.Tensor], sizes: dict[str, Any] | None = None, ref: Any = None
) -> Iterator[tuple[int, Edit]]:
    """(tier, edit) for every change the recorded run allows, cheapest tier first."""
    exprs = _size_exprs(sizes or {})
    by_shape: dict[tuple[tuple[int, ...], torch.dtype], list[str]] = {}
    for key, value in inputs.items():
        if value.is_floating_point():
            by_shape.setdefault((tuple(value.shape), value.dtype), []).append(key)
    integer = [k for k, v in inputs.items() if not v.is_floating_point() and v.dtype != torch.bool]
    tiers: dict[int, list[Edit]] = {1: [], 2: [], 3: []}
    for site in record.order:
        name, args, _, label = record.info[site]
        count, own = record.counts[site], site[3]
        for when in ("all", "first", "last") if count > 1 else ("all",):
            w = _when_text(when, count)
            operands = [_number(a, exprs) or said_of(a, record.names) for a in args[:2]]
            if name in _TERMS and len(args) >= 2 and own:
                for keep in (0, 1):
                    text = f"a term is left out of a sum: {operands[1 - keep]} is not added in {label}{w}"
                    tiers[1].append(Edit("keep", site, when, keep, text=text))
            if name in _FACTORS and len(args) >= 2:
                verb = "division by" if name in ("div", "true_divide") else "multiplication by"
                if own:
                    text = f"a factor is left out: the {verb} {operands[1]} in {label}{w}"
                    tiers[1].append(Edit("keep", site, when, 0, _dropped(args[1]), text))
                if name == "mul" and own:
                    text = f"a factor is left out: the multiplication by {operands[0]} in {label}{w}"
                    tiers[1].append(Edit("keep", site, when, 1, _dropped(args[0]), text))
                if name in ("mul", "div", "true_divide") and not isinstance(args[1], torch.Tensor):
                    where = f"in {label}" if own else f"that {record.callee[site]} does"
                    text = f"the same factor is applied twice: the {verb} {operands[1]} {where} is done twice{w}"
                    tiers[1].append(Edit("twice", site, when, text=text))
            scale = _number(args[1], exprs) if name in ("mul", "div", "true_divide") and len(args) >= 2 else ""
            for size_value, other in exprs.items() if scale and own else ():
                if not math.isclose(size_value, args[1], rel_tol=1e-9):
                    verb = "divided" if name != "mul" else "multiplied"
                    what = record.said.get(site, label)  # scores, not q @ transpose(k, -2) / 2.82843
                    text = f"the scale is another size's: {what} is {verb} by {other} ({size_value:.6g}) where {scale} belongs{w}"
                    tiers[1].append(Edit("scalar", site, when, 1, size_value, text))
            if name in ("mul", "div", "true_divide") and len(args) >= 2 and own and when == "all":
                wrong = "division" if name == "mul" else "multiplication"
                sign = "/" if name == "mul" else "*"
                text = (
                    f"a {wrong} where a {'division' if name != 'mul' else 'multiplication'} belongs: {label} is "
                    f"computed as {operands[0]} {sign} {operands[1]} (a factor inverted, or an exponent's sign flipped)"
                )
                tiers[1].append(Edit("invert", site, when, text=text))
            if name == "masked_fill" and len(args) >= 3 and isinstance(args[2], float) and args[2] != 0 and own:
                fill = said_of(args[2], record.names)
                text = f"masked positions are set to 0 where {fill} belongs (in {label}): the mask multiplied in{w}"
                tiers[1].append(Edit("scalar", site, when, 2, 0.0, text))
            if name == "addcmul" and len(args) >= 3 and own:  # x + t1 * t2 with one factor left out
                for drop in (1, 2):
                    dropped, kept = said_of(args[drop], record.names), said_of(args[3 - drop], record.names)
                    text = f"a factor is left out: {label} adds {kept} without the factor {dropped}{w}"
                    tiers[1].append(Edit("addcmul", site, when, drop, text=text))
            if name in _UNARY and args and isinstance(args[0], torch.Tensor) and own:
                tiers[1].append(Edit("skip", site, when, text=f"{name} is left out: {label} is not applied{w}"))
                made = record.producer.get(id(args[0]))
                inner = record.info[made][0] if made is not None else ""
                what = {"add": "a term is added", "mul": "a factor is multiplied"}.get(inner, "")
                for inside in (0, 1) if what else ():
                    text = (
                        f"{what} after {name} instead of inside it: {label} must apply {name} to the whole "
                        f"{'sum' if inner == 'add' else 'product'} (one operand is combined with {name}'s result){w}"
                    )
                    tiers[1].append(Edit("after", site, when, inside, inner, text=text))
                for other in OTHERS if name in OTHERS else ():
                    if other != name:
                        text = f"{other} is used where {name} belongs: {label} is computed with {other}{w}"
                        tiers[1].append(Edit("other", site, when, source=other, text=text))
            if name == "getitem" and len(args) == 2 and not isinstance(args[1], torch.Tensor) and own:
                for key in integer:
                    text = f"indexed by {key} where positions are meant: {label} takes rows by position, not {key}{w}"
                    tiers[1].append(Edit("index", site, when, source=key, text=text))
            if when != "all" or name in ("getitem", "clone", "to", "contiguous"):
                continue
            square = name == "mul" and len(args) >= 2 and isinstance(args[0], torch.Tensor) and args[0] is args[1]
            if square and own:  # |x| for x * x: another even function put in its place
                text = f"the absolute value is used where the square belongs: {label} is computed as |{operands[0]}|"
                tiers[1].append(Edit("abs", site, when, text=text))
            for key in by_shape.get((tuple(args[0].shape), args[0].dtype), []) if square and own else ():
                if inputs[key] is not args[0]:  # a square of the raw input where a computed value's belongs
                    text = f"{key} is used where {operands[0]} belongs (in the square {label})"
                    tiers[2].append(Edit("sub", site, when, -1, ("input", key), text))
            for i, operand in enumerate(args[:3]):
                if not isinstance(operand, torch.Tensor) or not operand.is_floating_point():
                    continue
                what = said_of(operand, record.names)
                for key in by_shape.get((tuple(operand.shape), operand.dtype), []):
                    if inputs[key] is not operand:
                        text = f"{key} is used where {what} belongs (in {label})"
                        tiers[2].append(Edit("sub", site, when, i, ("input", key), text))
                for other_site in record.order if own else ():
                    _, _, o_shape, o_label = record.info[other_site]
                    useful = other_site[3] or other_site in record.returned
                    if useful and other_site != site and o_shape == tuple(operand.shape) and o_label != what:
                        text = f"{record.said.get(other_site, o_label)} is used where {what} belongs (in {label})"
                        tiers[3].append(Edit("sub", site, when, i, ("site", other_site), text))
    more = [
        *bias_corrections(record, sizes or {}, ref),
        *closed_early(record),
        *wrong_axis(record),
        *factor_two(record),
        *as_reshape(record),
    ]
    tiers[1] += more if ref else []
    for tier, edits in tiers.items():
        yield from ((tier, e) for e in edits)


def name_by_rewrite(
    call: Callable[[], Any],
    ref: Callable[..., Any],
    inputs: dict[str, torch.Tensor],
    pick: Callable[[Any], Any],
    actual: Any,
    tol: Tolerance,
    max_runs: int = 400,
    sizes: dict[str, Any] | None = None,
) -> str:
    """The one change of the reference whose output's part (``pick``) ``actual`` matches, said
    as feedback, or "" (none, or two that say different things, or more than ``max_runs`` changes
    to try: a count, not a time, so that the feedback does not depend on the machine's load, with
    DEADLINE_S as a last guard). ``call`` runs
    the reference's computation (``ref`` on the case's arguments, or a chain of its calls);
    ``inputs``: the tensors it is given, by name (see :func:`named_inputs`)."""
    try:
        folder = Path(_source(ref)).parent
        files = {str(p) for p in folder.glob("*.py")}
        record = Record(names={id(v): k for k, v in inputs.items()}, fixed={id(v) for v in inputs.values()})
        own = getattr(inspect.unwrap(ref), "__name__", "")
        with torch.no_grad(), Mode(files, own, record, None, inputs):
            expected = pick(call())
    except Exception:  # a diagnosis is a courtesy: a reference that cannot be recorded names nothing
        return ""
    relabel(record)
    said = name_by_value(record, actual, expected, tol, sizes or {}, DECISIVE)
    if said:  # the student's part is a value the reference holds: no change needs to be guessed
        return said
    start, found, tier_found = time.monotonic(), [], None
    for runs, (tier, edit) in enumerate(_edits(record, inputs, sizes, ref)):
        if tier_found is not None and tier > tier_found:
            break
        if runs >= max_runs or time.monotonic() - start > DEADLINE_S:
            return ""  # a change left untried might also fit, so naming one would be a guess
        try:
            with torch.no_grad(), Mode(files, own, record, edit, inputs):
                output = pick(call())
        except Exception:  # a change the reference cannot run with names nothing
            continue
        if output is not None and _near(actual, output, expected, tol) and _decisive(output, expected, tol):
            # one tensor left out of one line's product, whichever of its multiplications drops it
            # (``(1 - b) * g * g`` without one ``g``), is one change, however it is said
            same = (edit.site[:2], edit.when, edit.source) if edit.kind == "keep" and edit.source else edit.text
            found.append((same, edit.text))
            tier_found = tier
    texts = list(dict(found).values())  # one change said at its last multiplication: the whole product
    return f"your result equals the reference's computation with one change: {texts[0]}" if len(texts) == 1 else ""


DEADLINE_S = 20.0
# A change is told from the reference only when it moves the result by this many tolerances: a
# change that moves it by a few (a tiny term dropped from large ones) fits any small error.
DECISIVE = 100.0
# A change that makes the values this many times larger than the right ones is not told apart
# from any other that does: their later differences are below the rounding at that size.
SWAMPED = 1e4


def _leaves(x: Any) -> Iterator[Any]:
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, (list, tuple)):
        for item in x:
            yield from _leaves(item)
    else:
        yield x


def _near(actual: Any, output: Any, expected: Any, tol: Tolerance) -> bool:
    """``actual`` matches ``output`` within the tolerance the right answer is held to: a change
    that makes the values huge (a division by eps) must not match whatever is as huge, within a
    tolerance relative to them (every later step of a chain is lost in it)."""
    if not matches(actual, output, tol):
        return False
    for a, o, e in zip(_leaves(actual), _leaves(output), _leaves(expected)):
        if (
            all(isinstance(x, torch.Tensor) and x.is_floating_point() for x in (a, o, e))
            and a.shape == o.shape == e.shape
        ):
            a, o, e = a.double(), o.double(), e.double()
            if float(o.abs().max()) > SWAMPED * (float(e.abs().max()) + tol.atol):
                return False  # float32 rounding at that size hides whatever comes after the change
            if bool(((a - o).abs() > tol.atol + tol.rtol * e.abs() + 1e-12 * o.abs()).any()):
                return False
    return True


def _decisive(output: Any, expected: Any, tol: Tolerance) -> bool:
    """Whether ``output`` differs from ``expected`` by far more than the tolerance somewhere."""
    if matches(expected, output, tol):
        return False
    for o, e in zip(_leaves(output), _leaves(expected)):
        if isinstance(o, torch.Tensor) and isinstance(e, torch.Tensor) and o.is_floating_point() and o.shape == e.shape:
            o, e = o.double(), e.double()
            # Only finite values count as evidence: a NaN (a square root of a negative) is matched
            # where the student's is (seqlab.grading.compare), but tells no change from another.
            finite = torch.isfinite(o) & torch.isfinite(e)
            if not bool(finite.any()):
                return False
            bound = tol.atol + tol.rtol * float(e[finite].abs().max())
            if float((o - e)[finite].abs().max()) > DECISIVE * bound:
                return True
    return False


def _source(fn: Callable[..., Any]) -> str:
    return inspect.getsourcefile(inspect.unwrap(fn)) or ""
