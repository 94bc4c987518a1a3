"""Recording the reference's operations, and re-running it with one of them changed: the
machinery under seqlab.grading.rewrite (which decides what to change and what it means).

Every torch operation the reference's own files run is seen through a TorchFunctionMode and
keyed by its place in the source (file, line, bytecode offset), so "the same operation" is the
same line of code however often a loop runs it.
"""

from __future__ import annotations

import functools
import operator
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "true_divide": "/", "matmul": "@", "mm": "@", "bmm": "@"}
# (file, line, bytecode offset, whether in the graded function's own code): one operation of the
# reference's source. A callee's operations take only the changes a caller can make to them (a
# scale applied again to what it passes, another input passed): the grader swaps correct callees
# in, so a term dropped inside a callee is never the student's.
Site = tuple[str, int, int, bool]
# Values kept per operation (a loop over the time steps or chunks of a case's sizes fits), and in
# all: a lab's long training run keeps its first values only, not gigabytes of copies.
VALUES, VALUE_BYTES = 64, 32 * 2**20
# results with no values of their own until written into: never what a student's result "is"
UNSET = {"empty", "empty_like", "new_empty", "empty_strided"}
# the elementwise nonlinearities a student may put in one another's place
OTHERS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "softplus": torch.nn.functional.softplus,
    "gelu": torch.nn.functional.gelu,
    "silu": torch.nn.functional.silu,
}


# operations along one axis given as ``dim`` (or the first argument after the tensor): the axis
# a student may get wrong (a sum over the batch, a softmax over the rows, a flip of the batch)
DIMMED = {
    "sum", "mean", "amax", "amin", "max", "min", "softmax", "log_softmax", "logsumexp", "argmax",
    "argmin", "gather", "cumsum", "cumprod", "flip", "var", "std", "norm", "prod",
}  # fmt: skip


def _dim_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    dim = kwargs.get("dim", kwargs.get("dims", args[1] if len(args) > 1 else None))
    if isinstance(dim, (list, tuple)) and len(dim) == 1:
        dim = dim[0]
    return dim if type(dim) is int else None


def _in_place(func: Any) -> bool:
    raw = getattr(func, "__name__", "")
    dunder = raw.startswith("__") and raw.endswith("__")
    return (raw.endswith("_") and not dunder) or (
        dunder and raw[2:3] == "i" and raw not in ("__index__", "__int__", "__invert__")
    )


def base_name(func: Any) -> str:
    return getattr(func, "__name__", "").strip("_").removesuffix("_")


@dataclass
class Edit:
    # keep | twice | skip | after | other | sub | index | scalar | addcmul | abs | invert | rescale | closed | dim
    # | reshaped
    kind: str
    site: Site
    when: str = "all"  # all | first | last
    arg: int = 0  # keep/after: the operand kept (inside); sub: the operand replaced (-1: both)
    # after: "add" or "mul" (the operation moved out); other: the nonlinearity put in its place;
    # sub: ("input", name) or ("site", Site); index: the integer input's name; scalar: the number;
    # rescale: {site: the operand's new number from its old}; closed: the sum's terms; dim: {site: its axis}
    source: Any = None
    text: str = ""


@dataclass
class Record:
    names: dict[int, str]  # id(tensor) -> its label (inputs by name, results by operation)
    order: list[Site] = field(default_factory=list)
    counts: dict[Site, int] = field(default_factory=dict)
    info: dict[Site, tuple[str, list[Any], tuple[int, ...] | None, str]] = field(default_factory=dict)
    producer: dict[int, Site] = field(default_factory=dict)
    callee: dict[Site, str] = field(default_factory=dict)  # the callee an operation is in ("": the function's own)
    # a callee's operations whose results the graded function's own code uses: what it returns
    returned: set[Site] = field(default_factory=set)
    keep: list[Any] = field(default_factory=list)  # results kept alive: their ids stay theirs
    # every value an operation produced, in order (the first VALUES of them): what a student's
    # output may be instead of the result (seqlab.grading.intermediate)
    values: dict[Site, list[torch.Tensor]] = field(default_factory=dict)
    # each operation's last result as the run left it (an output filled in place after it is made)
    final: dict[Site, torch.Tensor] = field(default_factory=dict)
    kept_bytes: int = 0
    fixed: set[int] = field(default_factory=set)  # tensors named as inputs or arguments: never renamed
    said: dict[Site, str] = field(default_factory=dict)  # an operation's value by its variable, if it has one
    last_on_line: dict[tuple[str, int], int] = field(default_factory=dict)  # (file, line) -> its last offset
    dims: dict[Site, tuple[int, int]] = field(default_factory=dict)  # an axis given (one), its operand's ndim


class Mode(TorchFunctionMode):
    def __init__(
        self, files: set[str], own: str, record: Record, edit: Edit | None, inputs: dict[str, torch.Tensor]
    ) -> None:
        super().__init__()
        self.files, self.own, self.record, self.edit, self.inputs = files, own, record, edit, inputs
        self.seen: dict[Site, int] = {}
        self.latest: dict[Site, Any] = {}
        self.made: dict[int, tuple[str, tuple[Any, ...]]] = {}
        self.keep: list[Any] = []
        self.framed: set[int] = set()

    def _site(self) -> Site | None:
        frame: FrameType | None = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename not in self.files:
            frame = frame.f_back
        if frame is None:
            return None
        code = frame.f_code
        self.callee = ""
        caller: FrameType | None = frame
        while caller is not None and caller.f_code.co_qualname.split(".")[0] != self.own:
            if caller.f_code.co_filename in self.files:
                self.callee = caller.f_code.co_name
            caller = caller.f_back
        own = code.co_qualname.split(".")[0] == self.own
        if own and self.edit is None and id(frame) not in self.framed:
            self._name_arguments(frame)
        return (code.co_filename, frame.f_lineno, frame.f_lasti, own)

    def _name_arguments(self, frame: FrameType) -> None:
        """The graded function's arguments by their parameter names (``dw``, ``state['v']``),
        also where no input was named (a chain of calls the grader built)."""
        self.framed.add(id(frame))
        self.keep.append(frame)  # its id stays its own while the run lasts
        code, names = frame.f_code, self.record.names
        for arg in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
            value = frame.f_locals.get(arg)
            items = value.items() if isinstance(value, dict) else [(None, value)]
            for key, item in items:
                if isinstance(item, torch.Tensor) and id(item) not in names:
                    names[id(item)] = arg if key is None else f"{arg}[{key!r}]"
                    self.record.fixed.add(id(item))
                    self.record.keep.append(item)

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = base_name(func)
        if name in ("get", "") or name.startswith("set"):
            return func(*args, **kwargs)
        site = self._site()
        if site is None:
            return func(*args, **kwargs)
        n = self.seen.get(site, 0)
        self.seen[site] = n + 1
        edit = self.edit
        result = None
        here = edit is not None and (
            edit.site == site or (edit.kind in ("rescale", "dim", "reshaped") and site in edit.source)
        )
        if edit is not None and here and self._when(edit, site, n):
            result = self._apply(edit, func, name, args, kwargs, site)
        if result is None:
            result = func(*args, **kwargs)
        if isinstance(result, torch.Tensor):
            self.latest[site] = result
            self.made[id(result)] = (name, args)
            self.keep.append(result)
        if self.edit is None:
            self._note(site, name, args, result)
            if name in DIMMED and args and isinstance(args[0], torch.Tensor) and site not in self.record.dims:
                dim = _dim_of(args, kwargs)
                self.record.dims.update({site: (dim, args[0].dim())} if dim is not None else {})
        return result

    def _when(self, edit: Edit, site: Site, n: int) -> bool:
        total = self.record.counts.get(site, 1)
        return edit.when == "all" or (edit.when == "first" and n == 0) or (edit.when == "last" and n == total - 1)

    def _apply(
        self, edit: Edit, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], site: Site
    ) -> Any:
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
            if made is None or made[0] != edit.source:
                return None
            inside, outside = made[1][edit.arg], made[1][1 - edit.arg]
            fn = OTHERS.get(name) or getattr(torch, name)  # never in place: ``inside`` may be an input
            return fn(inside) + outside if edit.source == "add" else fn(inside) * outside
        if edit.kind == "other":
            return OTHERS[edit.source](args[0])
        if edit.kind == "sub":
            if edit.arg in (0, -1) and _in_place(func):
                return None  # an input put where an in-place operation writes would be written over
            kind, key = edit.source
            value = self.inputs.get(key) if kind == "input" else self.latest.get(key)
            if value is None:
                return None
            new = list(args)
            for i in (0, 1) if edit.arg == -1 else (edit.arg,):  # -1: both operands of a square
                new[i] = value
            return func(*new, **kwargs)
        if edit.kind == "rescale":  # the operand's number recomputed, call by call (seqlab.grading.edits)
            new = list(args)
            new[edit.arg] = edit.source[site](args[edit.arg])
            return func(*new, **kwargs)
        if edit.kind == "closed":  # func of the first edit.arg terms of the sum, the others added after
            inside = functools.reduce(operator.add, edit.source[: edit.arg])
            return functools.reduce(operator.add, edit.source[edit.arg :], func(inside))
        if edit.kind == "reshaped":  # the transposed shape, in the operand's memory order
            return args[0].reshape(func(*args, **kwargs).shape)
        if edit.kind == "dim":  # the same operation along another axis
            new_dim = edit.source[site]
            if "dim" in kwargs:
                return func(*args, **{**kwargs, "dim": new_dim})
            given = args[1]
            return func(
                args[0],
                type(given)([new_dim]) if isinstance(given, (list, tuple)) else new_dim,
                *args[2:],
                **kwargs,
            )
        if edit.kind == "scalar":  # another number in the operand's place
            new = list(args)
            new[edit.arg] = edit.source
            return func(*new, **kwargs)
        if edit.kind == "addcmul":  # x + value * t1 * t2 without the factor at edit.arg, in place if it was
            kept, value = args[3 - edit.arg], kwargs.get("value", 1)
            return args[0].add_(kept, alpha=value) if _in_place(func) else torch.add(args[0], kept, alpha=value)
        if edit.kind == "invert":  # never in place: the operand written over may be an input
            return torch.div(args[0], args[1]) if name == "mul" else torch.mul(args[0], args[1])
        if edit.kind == "abs":
            return args[0].abs()
        if edit.kind == "index":
            return func(args[0], self.inputs[edit.source], **kwargs)
        return None

    def _note(self, site: Site, name: str, args: tuple[Any, ...], result: Any) -> None:
        record = self.record
        if site not in record.info:
            record.order.append(site)
            shape = tuple(result.shape) if isinstance(result, torch.Tensor) else None
            label = f"the result of {self.callee}" if self.callee else label_of(name, args, record.names)
            record.info[site] = (name, list(args), shape, label)
        record.counts[site] = record.counts.get(site, 0) + 1
        record.callee.setdefault(site, self.callee)
        made = [record.producer.get(id(a)) for a in args if isinstance(a, torch.Tensor)]
        record.returned.update(m for m in made if m is not None and record.callee[m] not in ("", self.callee))
        if isinstance(result, torch.Tensor):
            record.producer.setdefault(id(result), site)  # in place: the result keeps its maker
            seen = record.values.setdefault(site, [])
            size = result.numel() * result.element_size()
            room = len(seen) < VALUES and record.kept_bytes + size <= VALUE_BYTES
            if room and result.is_floating_point() and name not in UNSET:
                seen.append(result.detach().clone())
                record.final[site] = result
                record.kept_bytes += size
        if isinstance(result, torch.Tensor) and id(result) not in record.names:
            record.names[id(result)] = record.info[site][3]
            record.keep.append(result)


def operand(x: Any, names: dict[int, str]) -> str:
    if isinstance(x, torch.Tensor):
        return names.get(id(x), "(…)")
    if isinstance(x, float):
        return f"{x:.6g}"
    return repr(x) if isinstance(x, (int, bool)) else "…"


def _index(key: Any, loop: bool = False) -> str:
    """An index as the code writes it: ``:, 1::2``, ``..., -1``; in a loop (``loop``) a lone
    number is the first time's only, so it is said as ``t`` (``hs[:, t]``)."""
    if isinstance(key, tuple):
        return ", ".join(_index(k, loop) for k in key)
    if isinstance(key, slice):
        parts = ["" if p is None else str(p) for p in (key.start, key.stop, key.step)]
        return ":".join(parts[:2]) + (f":{parts[2]}" if key.step is not None else "")
    if isinstance(key, int) and not isinstance(key, bool):
        return "t" if loop else str(key)
    return {None: "None", Ellipsis: "..."}.get(key, "…") if not isinstance(key, torch.Tensor) else "…"


# copies and casts: the same quantity as their operand, said by its name
_SAME = {"to", "clone", "contiguous", "detach", "float", "double"}


def label_of(name: str, args: tuple[Any, ...], names: dict[int, str], loop: bool = False) -> str:
    operands = [operand(a, names) for a in args if isinstance(a, (torch.Tensor, float, int))]
    short = [o if len(o) <= 40 else "(…)" for o in operands]
    if name in _SAME and args and isinstance(args[0], torch.Tensor):
        return short[0]
    if name == "getitem" and len(args) == 2 and not isinstance(args[1], torch.Tensor):
        return f"{short[0]}[{_index(args[1], loop)}]"
    if name == "addcmul" and len(short) >= 3:
        return f"{short[0]} + {short[1]} * {short[2]}"
    if name in SYMBOL and len(short) == 2:
        return f"{short[0]} {SYMBOL[name]} {short[1]}"
    return f"{name}({', '.join(short[:2])})"
