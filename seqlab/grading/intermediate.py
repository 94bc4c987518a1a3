"""Naming a result that is one of the reference's own values on the way to its answer: the state
one step (or one chunk) early, the cell state where the hidden state belongs, the states of
every step stacked where other ones belong, the last entry taken along the wrong axis.

The reference's run is recorded once (seqlab.grading.trace keeps every value each operation
produces); a student's part is held against each recorded value of the same shape, against the
values of one operation stacked along an axis (a loop that collects the wrong quantity), and
against one entry of a value along an axis (``h[:, :, -1]`` where ``h[:, -1]`` belongs).

Why this is safe to say: a value is named only when the student's part matches it within the
check's own tolerance, it differs from the expected part by DECISIVE tolerances (a value that is
nearly the answer, a copy of it, names nothing), and every value that matches is within twice
the tolerance of the others (one quantity, however many operations hold it: said by the name the
graded function's own code gives it); two different quantities that both fit name nothing. A
buffer as torch.empty makes it is never a candidate (its bytes are whatever memory it reuses), and
the values kept are capped (seqlab.grading.trace.VALUES, VALUE_BYTES), so a long run keeps only
its first ones: a value past the cap names nothing rather than something else.
"""

from __future__ import annotations

import ast
import functools
import linecache
import re
from collections.abc import Iterator
from typing import Any

import torch

from ..tolerance import Tolerance
from .layout import _axes
from .trace import Record, Site, label_of

# a line that assigns one name (or a chain of names): ``c = f * c_prev + ...``, ``h = out = ...``
_ASSIGNED = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")


def _ordinal(i: int) -> str:
    return f"{i}{'th' if 10 <= i % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(i % 10, 'th')}"


def variable(record: Record, site: Site) -> str:
    """The variable an operation's line assigns where the operation is that line's last (its
    value is what the name holds), or ""."""
    file, line, offset, _ = site
    if not record.last_on_line:  # once per recorded run: each line's last operation
        for f, n, o, _ in record.order:
            record.last_on_line[(f, n)] = max(o, record.last_on_line.get((f, n), o))
    last = record.last_on_line[(file, line)]
    text = linecache.getline(file, line)
    found = _ASSIGNED.match(text) if offset == last and _made_by_torch(text) else None
    return found.group(1) if found else ""


def value_name(record: Record, site: Site) -> str:
    """The reference's name for an operation's value (its variable), else its label."""
    callee, name = record.callee.get(site, ""), variable(record, site)
    return f"the reference's {name}" + (f" (in {callee})" if callee else "") if name else record.info[site][3]


def relabel(record: Record) -> None:
    """Every operation's label said with the names the reference's code gives its operands
    (``pos / rpow(two_i / 16, 10000)``, not ``unsqueeze(arange(6), 1) / rpow(...)``), rebuilt
    in the order the run made them, so a label uses its operands' new names."""
    made: dict[Site, list[int]] = {}
    for key, site in record.producer.items():
        made.setdefault(site, []).append(key)
    fixed = record.fixed | (set(record.names) - set(record.producer))
    for site in record.order:
        name, args, shape, label = record.info[site]
        loop = record.counts.get(site, 1) > 1
        label = label if record.callee.get(site) else label_of(name, tuple(args), record.names, loop)
        record.info[site] = (name, args, shape, label)
        record.said[site] = said = (variable(record, site) if site[3] else "") or label
        record.names.update({key: said for key in made.get(site, []) if key not in fixed})


@functools.lru_cache(maxsize=4096)
def _made_by_torch(line: str) -> bool:
    """Whether the line's assigned value is an operation's own result (``a * b``, ``x[:, t]``,
    ``torch.tanh(...)``, ``h.clone()``), not a Python function's result that an operation on
    the line only feeds (``h = rnn_cell(x[:, t], ...)``)."""
    try:
        node = ast.parse(line.strip()).body[0]
    except (SyntaxError, IndexError):  # a statement over several lines: not said by name
        return False
    value = getattr(node, "value", None)
    while isinstance(value, ast.Assign | ast.NamedExpr):
        value = value.value
    return isinstance(value, ast.BinOp | ast.UnaryOp | ast.Subscript | ast.IfExp) or (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
    )


def _candidates(record: Record, shape: tuple[int, ...]) -> Iterator[tuple[Site, str, torch.Tensor]]:
    """(site, how it is taken, value) for every recorded value a part of ``shape`` may be."""
    for site in record.order:
        values = record.values.get(site, [])
        n = len(values)
        for i, value in enumerate(values):
            if tuple(value.shape) == shape:
                when = f" as computed the {_ordinal(i + 1)} of the {n} times" if n > 1 else ""
                yield site, when, value
        final = record.final.get(site)
        if final is not None and final.dim() == len(shape) + 1:
            for k in range(final.dim()):
                for j in (0, -1) if final.shape[k] > 1 else ():
                    taken = final.select(k, j)
                    if tuple(taken.shape) == shape:
                        yield site, f"@{k},{j}", taken
        if n > 1 and all(v.shape == values[0].shape for v in values) and values[0].dim() + 1 == len(shape):
            one = tuple(values[0].shape)
            for k in range(len(shape)):
                if one[:k] + (n,) + one[k:] == shape:
                    yield (
                        site,
                        f" from every one of its {n} computations, stacked along axis {k}",
                        torch.stack(values, k),
                    )


def _close(a: torch.Tensor, b: torch.Tensor, tol: Tolerance) -> bool:
    if a.shape != b.shape:
        return False
    bound = tol.atol + tol.rtol * b.abs()
    return bool(torch.isfinite(a).all()) and bool(((a - b).abs() <= bound).all())


def name_by_value(
    record: Record, actual: Any, expected: Any, tol: Tolerance, sizes: dict[str, Any], decisive: float
) -> str:
    """The one recorded value of the reference that ``actual`` is, said as feedback, or ""."""
    try:
        return _name_by_value(record, actual, expected, tol, sizes, decisive)
    except Exception:  # a diagnosis is a courtesy: it never turns a failure into an error
        return ""


def _name_by_value(
    record: Record, actual: Any, expected: Any, tol: Tolerance, sizes: dict[str, Any], decisive: float
) -> str:
    if not (isinstance(actual, torch.Tensor) and actual.is_floating_point() and isinstance(expected, torch.Tensor)):
        return ""
    a, e = actual.detach().cpu().double(), expected.detach().cpu().double()
    bound = tol.atol + tol.rtol * float(e.abs().max()) if e.numel() else tol.atol
    found: list[tuple[Site, str, torch.Tensor]] = []
    for site, how, value in _candidates(record, tuple(a.shape)):
        v = value.detach().cpu().double()
        if _close(a, v, tol) and (v.shape != e.shape or float((v - e).abs().max()) > decisive * bound):
            found.append((site, how, v))
    # values within the tolerance of one another are one quantity (the state as the full pass and
    # as a chunk's pass computes it): said by the graded function's own name for it, if it has one
    twice = Tolerance(atol=2 * tol.atol, rtol=2 * tol.rtol)
    if not found or any(not _close(v, found[0][2], twice) for _, _, v in found[1:]):
        return ""
    said = [(value_name(record, site), site, how) for site, how, _ in found]
    # a value the reference names, in the graded function's own code before a callee's
    name, site, how = min(said, key=lambda f: (not f[0].startswith("the reference's"), not f[1][3]))
    if how.startswith("@"):
        k, j = (int(x) for x in how[1:].split(","))
        full = record.final[site]
        where = "last" if j == -1 else "first"
        ends = [(m, i) for m in range(full.dim()) for i in (0, -1) if full.shape[m] > 0]
        right = [(m, "last" if i else "first") for m, i in ends if _close(e, full.double().select(m, i), tol)]
        also = f", where the expected one is its {right[0][1]} entry along {_axes(right[0][0], full.shape, sizes)}"
        return (
            f"your result is {name} at its {where} entry along {_axes(k, tuple(full.shape), sizes)}{also if right else ''}: "
            "an entry taken at the wrong end or along the wrong axis"
        )
    return f"your result is {name}{how}: a value the reference computes on the way, not the one asked for here"
