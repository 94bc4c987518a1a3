"""More changes seqlab.grading.rewrite tries on the reference, for slips that are not one
operand of one operation:

* a bias correction written wrongly: a division by a number that is ``1 - beta**t`` (or its
  square root) for a setting ``beta`` of the case and a step ``t``, done with ``(1 - beta)**t``,
  ``beta**t``, the step one ahead or behind, or the first step's ``t = 1`` every time; at every
  such division at once (the same slip written for both moments) or at one of them;
* a nonlinearity closed too early: ``tanh(a) + b + c`` where ``tanh(a + b + c)`` belongs, for a
  sum of three or more terms (a sum of two is rewrite's own "after" change);
* a number in a product or a quotient twice or half what it should be (``2 * two_i / d``: an
  index that is already even doubled again);
* a transpose (or permute) done as a reshape to the transposed shape, which keeps the memory
  order (``k.reshape(..., d, S)`` for ``k.transpose(-2, -1)``): at one place, or at every one;
* an operation along one axis done along another (a mean over the batch where the features
  belong, a softmax over the rows, a gather or a flip along the wrong dim): every other axis of
  the operand, once each.

Why this is safe to say: the same rules as every change of rewrite (a strict match within the
check's tolerance, decisively away from the reference, no other change of its tier fitting). A
number is read as a bias correction only where ``1 - beta**t`` gives it to 1e-12 for an integer
step, so a division by any other number never becomes one.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator
from typing import Any

import torch

from .trace import Edit, Record, Site

_DIVISIONS = {"div", "true_divide"}
# (the wrong correction as a function of beta and t, what it says): each against 1 - beta**t
_CORRECTIONS: list[tuple[Callable[[float, int], float], str]] = [
    (lambda b, t: (1 - b) ** t, "(1 - {b})**t where 1 - {b}**t belongs"),
    (lambda b, t: b**t, "{b}**t where 1 - {b}**t belongs"),
    (lambda b, t: 1 - b ** (t + 1), "1 - {b}**(t+1): the step t one ahead"),
    (lambda b, t: 1 - b ** (t - 1), "1 - {b}**(t-1): the step t one behind"),
    (lambda b, t: 1 - b, "1 - {b}**1 at every step: t stays at the first step's 1"),
]
# How far a number may be from 1 - beta**t (or its square root) and still be read as one:
# float rounding of the expression, far below what any other number lands on by chance.
_REL = 1e-12


def _settings(sizes: dict[str, Any], ref: Callable[..., Any]) -> list[tuple[str, float]]:
    """The case's float settings in (0, 1), tuples spread out (``betas[1]``), then the
    reference's defaults of the settings the case does not give."""
    try:
        defaults = {p.name: p.default for p in inspect.signature(ref).parameters.values()}
    except (TypeError, ValueError):
        defaults = {}
    found: list[tuple[str, float]] = []
    for name, value in {**defaults, **sizes}.items():
        items = [(f"{name}[{i}]", v) for i, v in enumerate(value)] if isinstance(value, tuple) else [(name, value)]
        found += [(n, float(v)) for n, v in items if type(v) is float and 0 < v < 1]
    return found


def _step(c: float, b: float, p: float) -> int | None:
    """The integer t >= 1 with ``(1 - b**t)**p == c`` (to _REL), or None."""
    inner = c ** (1 / p) if c > 0 else -1.0
    if not 0 < inner < 1:
        return None
    t = round(math.log(1 - inner) / math.log(b))
    ok = t >= 1 and math.isclose((1 - b**t) ** p, c, rel_tol=_REL)
    return t if ok else None


class Correction:
    """A division's number recomputed with the wrong correction, call by call (each step of a
    chain divides by its own t's number): a callable the trace applies to the operand."""

    def __init__(self, b: float, p: float, wrong: Callable[[float, int], float]) -> None:
        self.b, self.p, self.wrong = b, p, wrong

    def __call__(self, c: Any) -> Any:
        t = _step(float(c), self.b, self.p) if type(c) is float else None
        return c if t is None else self.wrong(self.b, t) ** self.p


def bias_corrections(record: Record, sizes: dict[str, Any], ref: Callable[..., Any]) -> Iterator[Edit]:
    settings = _settings(sizes, ref)
    found: list[tuple[Site, str, float, float]] = []  # (site, beta's name, beta, power)
    for site in record.order:
        name, args, _, _ = record.info[site]
        if name in _DIVISIONS and site[3] and len(args) >= 2 and type(args[1]) is float:
            for b_name, b in settings:
                hits = [p for p in (1.0, 0.5) if _step(args[1], b, p) is not None]
                if hits:
                    found.append((site, b_name, b, hits[0]))
                    break
    if not found:
        return
    for wrong, said in _CORRECTIONS:
        texts = [said.format(b=b_name) for _, b_name, _, _ in found]
        plan = {site: Correction(b, p, wrong) for site, _, b, p in found}
        if len(found) > 1:
            text = "every bias correction is written wrongly: " + "; ".join(dict.fromkeys(texts))
            yield Edit("rescale", found[0][0], "all", 1, plan, text)
        for (site, _, _, _), one in zip(found, texts):
            what = record.said.get(site, record.info[site][3])
            yield Edit("rescale", site, "all", 1, {site: plan[site]}, f"the bias correction in {what} is {one}")


def _leaves(record: Record, value: Any, depth: int = 0) -> list[Any]:
    """The terms of a sum as the reference wrote it, left to right (``a + b + c``)."""
    site = record.producer.get(id(value)) if isinstance(value, torch.Tensor) else None
    if site is None or depth > 8 or not site[3]:
        return [value]
    name, args, _, _ = record.info[site]
    if name != "add" or len(args) != 2 or record.counts.get(site, 1) > 1:
        return [value]
    return _leaves(record, args[0], depth + 1) + _leaves(record, args[1], depth + 1)


def closed_early(record: Record) -> Iterator[Edit]:
    for site in record.order:
        name, args, _, label = record.info[site]
        if name not in ("tanh", "sigmoid", "relu") or not site[3] or not args or record.counts.get(site, 1) > 1:
            continue
        terms = _leaves(record, args[0])
        said = [record.names.get(id(t), "(…)") if isinstance(t, torch.Tensor) else f"{t}" for t in terms]
        for k in range(1, len(terms) - 1):  # k = len - 1 is rewrite's "after" change
            text = (
                f"{name} is closed too early: it is applied to {' + '.join(said[:k])} only, and "
                f"{' + '.join(said[k:])} is added after it, where {label} applies it to the whole sum"
            )
            yield Edit("closed", site, "all", k, tuple(terms), text)


def wrong_axis(record: Record) -> Iterator[Edit]:
    """Each operation along an axis done along every other axis of its operand; and where one
    kind of operation is done along one axis at several places (a flip of the input and a flip of
    the result back), all of them at once (the same slip written at each)."""
    groups: dict[tuple[str, int, int], list[Site]] = {}
    for site, (dim, ndim) in record.dims.items():
        name, _, _, label = record.info[site]
        if not site[3] or ndim < 2 or not -ndim <= dim < ndim:
            continue
        groups.setdefault((name, dim % ndim, ndim), []).append(site)
        what = record.said.get(site, label)
        for other in range(ndim):
            if other != dim % ndim:
                text = f"{name} is taken along dim {other} where dim {dim} belongs (in {what})"
                yield Edit("dim", site, "all", 0, {site: other}, text)
    for (name, dim, ndim), sites in groups.items():
        for other in range(ndim) if len(sites) > 1 else ():
            if other != dim:
                text = f"every {name} is taken along dim {other} where dim {dim} belongs ({len(sites)} places)"
                yield Edit("dim", sites[0], "all", 0, dict.fromkeys(sites, other), text)


def factor_two(record: Record) -> Iterator[Edit]:
    for site in record.order:
        name, args, _, label = record.info[site]
        c: Any = args[1] if len(args) >= 2 else None
        if name not in ("mul", "div", "true_divide") or not site[3] or type(c) not in (int, float) or c in (0, 1, -1):
            continue
        verb = "multiplied" if name == "mul" else "divided"
        what = record.said.get(site, label)
        for new, how in ((c * 2, "twice"), (c / 2, "half")):
            if math.isclose(new, c * c) or math.isclose(new, 1):  # rewrite's "applied twice", "left out"
                continue
            yield Edit(
                "scalar", site, "all", 1, new, f"{what} is {verb} by {new:g}, {how} the {c:g} that belongs there"
            )


_TRANSPOSES = ("transpose", "permute", "swapaxes", "movedim")


def as_reshape(record: Record) -> Iterator[Edit]:
    sites = [s for s in record.order if s[3] and record.info[s][0] in _TRANSPOSES and record.info[s][2]]
    for site in sites:
        what = record.said.get(site, record.info[site][3])
        yield Edit(
            "reshaped",
            site,
            "all",
            0,
            {site: True},
            f"a reshape where a transpose belongs: {what} keeps the memory order",
        )
    if len(sites) > 1:
        text = f"every transpose is done as a reshape ({len(sites)} places): a reshape keeps the memory order"
        yield Edit("reshaped", sites[0], "all", 0, dict.fromkeys(sites, True), text)
