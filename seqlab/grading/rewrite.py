"""Naming a mistake by the reference's own structure: the reference is run once with its
operations recorded, then again with one of them changed the way a slip changes a line of code,
and a student's output that matches one such run (and no other kind) is named by that change.

The changes, each at one place in the reference's source (every time it runs, or only the first
or the last time, for a place inside a loop):

* a term of a sum left out (``a + b`` computed as ``a``);
* a factor left out (``a * b``, ``a / b`` or ``a @ W`` computed as ``a``): a scale, a
  normalisation or a correction omitted;
* the same factor applied twice (``a / b / b``): double scaling;
* a nonlinearity left out (``tanh(a)`` as ``a``), or applied before a term is added instead of
  after it (``relu(a) + b`` where ``relu(a + b)`` belongs);
* a slice by position replaced by an index with an integer input (``pe[tokens]`` where
  ``pe[:T]`` belongs): indexing by token where position is meant;
* an operand replaced by another value of the same shape: an input, or a value the reference
  computes elsewhere (the state before its update, the normalised input where the raw one is
  added back, one direction's initial state for the other's).

Why this is safe to say: a change is named only when the student's output matches the changed
run within the check's own tolerance, the changed run differs from the reference, and every
matching change of the cheapest tier that matches says the same thing (two different changes
that both fit name nothing). The tiers go from the most specific change to the least: drops and
doublings, then substitutions with inputs, then substitutions with computed values.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from ..tolerance import Tolerance
from .compare import matches

_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "true_divide": "/", "matmul": "@", "mm": "@", "bmm": "@"}
_TERMS = {"add", "sub"}
_FACTORS = {"mul", "div", "true_divide", "matmul", "mm", "bmm"}
_UNARY = {"tanh", "sigmoid", "relu", "exp", "log", "sqrt", "softplus", "gelu", "silu"}
# (file, line, bytecode offset, whether in the graded function's own code): one operation of the
# reference's source. A callee's operations take only the changes a caller can make to them (a
# scale applied again to what it passes, another input passed): the grader swaps correct callees
# in, so a term dropped inside a callee is never the student's.
Site = tuple[str, int, int, bool]


def _base(func: Any) -> str:
    return getattr(func, "__name__", "").strip("_").removesuffix("_")


@dataclass
class _Edit:
    kind: str  # keep | twice | skip | after | sub | index
    site: Site
    when: str = "all"  # all | first | last
    arg: int = 0  # keep/after: the operand kept (inside); sub: the operand replaced
    source: Any = None  # sub: ("input", name) or ("site", Site); index: the input's name
    text: str = ""


@dataclass
class _Record:
    names: dict[int, str]  # id(tensor) -> its label (inputs by name, results by operation)
    order: list[Site] = field(default_factory=list)
    counts: dict[Site, int] = field(default_factory=dict)
    info: dict[Site, tuple[str, list[Any], tuple[int, ...] | None, str]] = field(default_factory=dict)
    producer: dict[int, Site] = field(default_factory=dict)
    callee: dict[Site, str] = field(default_factory=dict)  # the callee an operation is in ("": the function's own)
    # a callee's operations whose results the graded function's own code uses: what it returns
    returned: set[Site] = field(default_factory=set)
    keep: list[Any] = field(default_factory=list)  # results kept alive: their ids stay theirs


class _Mode(TorchFunctionMode):
    def __init__(
        self, files: set[str], own: str, record: _Record, edit: _Edit | None, inputs: dict[str, torch.Tensor]
    ) -> None:
        super().__init__()
        self.files, self.own, self.record, self.edit, self.inputs = files, own, record, edit, inputs
        self.seen: dict[Site, int] = {}
        self.latest: dict[Site, Any] = {}
        self.made: dict[int, tuple[str, tuple[Any, ...]]] = {}
        self.keep: list[Any] = []

    def _site(self) -> Site | None:
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename not in self.files:
            frame = frame.f_back
        if frame is None:
            return None
        code = frame.f_code
        self.callee = ""
        caller = frame
        while caller is not None and caller.f_code.co_qualname.split(".")[0] != self.own:
            if caller.f_code.co_filename in self.files:
                self.callee = caller.f_code.co_name
            caller = caller.f_back
        return (code.co_filename, frame.f_lineno, frame.f_lasti, code.co_qualname.split(".")[0] == self.own)

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = _base(func)
        if name in ("get", "") or name.startswith("set"):
            return func(*args, **kwargs)
        site = self._site()
        if site is None:
            return func(*args, **kwargs)
        n = self.seen.get(site, 0)
        self.seen[site] = n + 1
        edit = self.edit
        result = None
        if edit is not None and edit.site == site and self._when(edit, site, n):
            result = self._apply(edit, func, name, args, kwargs)
        if result is None:
            result = func(*args, **kwargs)
        if isinstance(result, torch.Tensor):
            self.latest[site] = result
            self.made[id(result)] = (name, args)
            self.keep.append(result)
        if self.edit is None:
            self._note(site, name, args, result)
        return result

    def _when(self, edit: _Edit, site: Site, n: int) -> bool:
        total = self.record.counts.get(site, 1)
        return edit.when == "all" or (edit.when == "first" and n == 0) or (edit.when == "last" and n == total - 1)

    def _apply(self, edit: _Edit, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if edit.kind == "keep":
            full = func(*args, **kwargs)
            kept = args[edit.arg]
            return kept.expand_as(full).clone() if isinstance(kept, torch.Tensor) else torch.full_like(full, kept)
        if edit.kind == "twice":
            return func(func(*args, **kwargs), *args[1:], **kwargs)
        if edit.kind == "skip":
            return args[0].clone()
        if edit.kind == "after":
            made = self.made.get(id(args[0]))
            if made is None or made[0] != "add":
                return None
            inside, outside = made[1][edit.arg], made[1][1 - edit.arg]
            return func(inside, *args[1:], **kwargs) + outside
        if edit.kind == "sub":
            kind, key = edit.source
            value = self.inputs.get(key) if kind == "input" else self.latest.get(key)
            if value is None:
                return None
            new = list(args)
            new[edit.arg] = value
            return func(*new, **kwargs)
        if edit.kind == "index":
            return func(args[0], self.inputs[edit.source], **kwargs)
        return None

    def _note(self, site: Site, name: str, args: tuple[Any, ...], result: Any) -> None:
        record = self.record
        if site not in record.info:
            record.order.append(site)
            shape = tuple(result.shape) if isinstance(result, torch.Tensor) else None
            label = f"the result of {self.callee}" if self.callee else _label(name, args, record.names)
            record.info[site] = (name, list(args), shape, label)
        record.counts[site] = record.counts.get(site, 0) + 1
        record.callee.setdefault(site, self.callee)
        made = [record.producer.get(id(a)) for a in args if isinstance(a, torch.Tensor)]
        record.returned.update(m for m in made if m is not None and record.callee[m] not in ("", self.callee))
        if isinstance(result, torch.Tensor):
            record.producer[id(result)] = site
        if isinstance(result, torch.Tensor) and id(result) not in record.names:
            record.names[id(result)] = record.info[site][3]
            record.keep.append(result)


def _operand(x: Any, names: dict[int, str]) -> str:
    if isinstance(x, torch.Tensor):
        return names.get(id(x), "(…)")
    if isinstance(x, float):
        return f"{x:.6g}"
    return repr(x) if isinstance(x, (int, bool)) else "…"


def _label(name: str, args: tuple[Any, ...], names: dict[int, str]) -> str:
    operands = [_operand(a, names) for a in args if isinstance(a, (torch.Tensor, float, int))]
    short = [o if len(o) <= 40 else "(…)" for o in operands]
    if name in _SYMBOL and len(short) == 2:
        return f"{short[0]} {_SYMBOL[name]} {short[1]}"
    return f"{name}({', '.join(short[:2])})"


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


def _edits(record: _Record, inputs: dict[str, torch.Tensor]) -> Iterator[tuple[int, _Edit]]:
    """(tier, edit) for every change the recorded run allows, cheapest tier first."""
    by_shape: dict[tuple[tuple[int, ...], torch.dtype], list[str]] = {}
    for key, value in inputs.items():
        if value.is_floating_point():
            by_shape.setdefault((tuple(value.shape), value.dtype), []).append(key)
    integer = [k for k, v in inputs.items() if not v.is_floating_point() and v.dtype != torch.bool]
    tiers: dict[int, list[_Edit]] = {1: [], 2: [], 3: []}
    for site in record.order:
        name, args, _, label = record.info[site]
        count, own = record.counts[site], site[3]
        for when in ("all", "first", "last") if count > 1 else ("all",):
            w = _when_text(when, count)
            operands = [_operand(a, record.names) for a in args[:2]]
            if name in _TERMS and len(args) >= 2 and own:
                for keep in (0, 1):
                    text = f"a term is left out of a sum: {operands[1 - keep]} is not added in {label}{w}"
                    tiers[1].append(_Edit("keep", site, when, keep, text=text))
            if name in _FACTORS and len(args) >= 2:
                verb = "division by" if name in ("div", "true_divide") else "multiplication by"
                if own:
                    text = f"a factor is left out: the {verb} {operands[1]} in {label}{w}"
                    tiers[1].append(_Edit("keep", site, when, 0, text=text))
                if name == "mul" and own:
                    text = f"a factor is left out: the multiplication by {operands[0]} in {label}{w}"
                    tiers[1].append(_Edit("keep", site, when, 1, text=text))
                if name in ("mul", "div", "true_divide") and not isinstance(args[1], torch.Tensor):
                    where = f"in {label}" if own else f"that {record.callee[site]} does"
                    text = f"the same factor is applied twice: the {verb} {operands[1]} {where} is done twice{w}"
                    tiers[1].append(_Edit("twice", site, when, text=text))
            if name in _UNARY and args and isinstance(args[0], torch.Tensor) and own:
                tiers[1].append(_Edit("skip", site, when, text=f"{name} is left out: {label} is not applied{w}"))
                for inside in (0, 1):
                    text = (
                        f"a term is added after {name} instead of inside it: {label} must include the whole sum "
                        f"before {name} is applied (one term is added to {name}'s result){w}"
                    )
                    tiers[1].append(_Edit("after", site, when, inside, text=text))
            if name == "getitem" and len(args) == 2 and not isinstance(args[1], torch.Tensor) and own:
                for key in integer:
                    text = f"indexed by {key} where positions are meant: {label} takes rows by position, not {key}{w}"
                    tiers[1].append(_Edit("index", site, when, source=key, text=text))
            if when != "all" or name in ("getitem", "clone", "to", "contiguous"):
                continue
            for i, operand in enumerate(args[:3]):
                if not isinstance(operand, torch.Tensor) or not operand.is_floating_point():
                    continue
                what = _operand(operand, record.names)
                for key in by_shape.get((tuple(operand.shape), operand.dtype), []):
                    if inputs[key] is not operand:
                        text = f"{key} is used where {what} belongs (in {label})"
                        tiers[2].append(_Edit("sub", site, when, i, ("input", key), text))
                for other in record.order if own else ():
                    _, _, o_shape, o_label = record.info[other]
                    useful = other[3] or other in record.returned
                    if useful and other != site and o_shape == tuple(operand.shape) and o_label != what:
                        text = f"{o_label} is used where {what} belongs (in {label})"
                        tiers[3].append(_Edit("sub", site, when, i, ("site", other), text))
    for tier, edits in tiers.items():
        yield from ((tier, e) for e in edits)


def name_by_rewrite(
    call: Callable[[], Any],
    ref: Callable[..., Any],
    inputs: dict[str, torch.Tensor],
    pick: Callable[[Any], Any],
    actual: Any,
    tol: Tolerance,
    budget_s: float = 3.0,
) -> str:
    """The one change of the reference whose output's part (``pick``) ``actual`` matches, said
    as feedback, or "" (none, or two that say different things, or out of time). ``call`` runs
    the reference's computation (``ref`` on the case's arguments, or a chain of its calls);
    ``inputs``: the tensors it is given, by name (see :func:`named_inputs`)."""
    try:
        folder = Path(_source(ref)).parent
        files = {str(p) for p in folder.glob("*.py")}
        record = _Record(names={id(v): k for k, v in inputs.items()})
        own = getattr(inspect.unwrap(ref), "__name__", "")
        with torch.no_grad(), _Mode(files, own, record, None, inputs):
            expected = pick(call())
    except Exception:  # a diagnosis is a courtesy: a reference that cannot be recorded names nothing
        return ""
    start, found, tier_found = time.monotonic(), [], None
    for tier, edit in _edits(record, inputs):
        if tier_found is not None and tier > tier_found:
            break
        if time.monotonic() - start > budget_s:
            return ""  # out of time: a later change might also fit, so naming one would be a guess
        try:
            with torch.no_grad(), _Mode(files, own, record, edit, inputs):
                output = pick(call())
        except Exception:  # a change the reference cannot run with names nothing
            continue
        if output is not None and matches(actual, output, tol) and _decisive(output, expected, tol):
            found.append(edit.text)
            tier_found = tier
    texts = list(dict.fromkeys(found))
    return f"your result equals the reference's computation with one change: {texts[0]}" if len(texts) == 1 else ""


# A change is told from the reference only when it moves the result by this many tolerances: a
# change that moves it by a few (a tiny term dropped from large ones) fits any small error.
DECISIVE = 100.0


def _leaves(x: Any) -> Iterator[Any]:
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, (list, tuple)):
        for item in x:
            yield from _leaves(item)
    else:
        yield x


def _decisive(output: Any, expected: Any, tol: Tolerance) -> bool:
    """Whether ``output`` differs from ``expected`` by far more than the tolerance somewhere."""
    if matches(expected, output, tol):
        return False
    for o, e in zip(_leaves(output), _leaves(expected)):
        if isinstance(o, torch.Tensor) and isinstance(e, torch.Tensor) and o.is_floating_point() and o.shape == e.shape:
            o, e = o.double(), e.double()
            if not bool(torch.isfinite(o).all()):
                return False
            bound = tol.atol + tol.rtol * float(e.abs().max())
            if float((o - e).abs().max()) > DECISIVE * bound:
                return True
    return False


def _source(fn: Callable[..., Any]) -> str:
    return inspect.getsourcefile(inspect.unwrap(fn)) or ""
