"""The forbidden operations, checked in your own tests as the grader checks them (README.md,
"Forbidden operations"), in the grader's order: first the source of the function (and of the
module-level helpers it calls) is read for a forbidden name, then, while a public test runs the
function, every PyTorch function and kernel it reaches is named. A name that matches one of
that function's forbidden patterns fails the test with the grader's own words, e.g.::

    optimizers.adam called torch.optim.Adam, which this exercise forbids (rule 'torch.optim.*');
    the function scores 0

An operation inside another of your contract functions is charged to that function when its
own rules forbid it (the grader tests each function with correct stand-ins for the others it
calls, so it never charges a caller for its callee's operation). torch.optim's optimizers,
torch.nn.utils' clipping, torch.nn's modules and autograd's entry points are named however your
code reached them (an alias, a partial, a helper module: _apiwatch.py, the grader's own), and
so is a complex tensor made (its dtype: ``torch.complex128 (a complex tensor was made)``). While
a lab trains only those APIs are named (the grader names every torch function there too), and
its source is read.

The rules are data, ``_rules.json`` beside this file, written with the course's tests from the
same table the grader reads.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import json
import sys
from pathlib import Path

import _apiwatch
import torch
from _static_names import referenced_names
from torch.overrides import TorchFunctionMode, resolve_name
from torch.utils._python_dispatch import TorchDispatchMode

HERE = Path(__file__).resolve().parent
EXERCISES = HERE.parent / "exercises"
AUTOGRAD = "autograd.graph (a tensor was saved for backward)"  # the grader's name for a recorded graph
# Wrapped before your modules are imported (this file is imported first, by _check.py), so a name
# your module binds at import time holds the recording wrapper, as in the grader's process.
_apiwatch.install()


@functools.cache
def rules() -> dict:
    """{"functions": [...], "labs": [...], "forbidden": {function: [pattern, ...]}}."""
    shipped = HERE / "_rules.json"
    if not shipped.is_file():
        raise FileNotFoundError(f"{shipped} is missing: it comes with the course's tests (download them again)")
    return json.loads(shipped.read_text(encoding="utf-8"))


@functools.cache
def static_void(qualname: str) -> str | None:
    """The grader's verdict on the source: a forbidden name in the function, or in a module-level
    helper it calls (another contract function's names are charged to that function alone)."""
    module, function = qualname.split(".", 1)
    try:
        source = (EXERCISES / f"{module}.py").read_text(encoding="utf-8", errors="replace")
        siblings = [f.split(".", 1)[1] for f in rules()["functions"] if f.startswith(module + ".") and f != qualname]
        names = referenced_names(source, function, siblings)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None  # a module that does not load fails its tests on its own
    for lineno, name in names:
        pattern = _match(qualname, name)
        if pattern:
            return (
                f"{qualname} uses {name} (exercises/{module}.py, line {lineno}), which this exercise forbids "
                f"(rule {pattern!r}); the function scores 0"
            )
    return None


def _name(func) -> str:
    name = resolve_name(func)
    if name:
        return name
    module = getattr(func, "__module__", None) or ""
    qualname = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    return f"{module}.{qualname}" if module else str(qualname)


class _Watch(TorchFunctionMode):
    def __init__(self, seen: list[tuple[str, tuple[str, ...]]], scope: list[str]):
        super().__init__()
        self.seen, self.scope = seen, scope

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen.append((_name(func), tuple(reversed(self.scope))))
        result = func(*args, **(kwargs or {}))
        made = _apiwatch.complex_name(result)
        if made:
            self.seen.append((made, tuple(reversed(self.scope))))
        return result


class _Kernels(TorchDispatchMode):
    def __init__(self, seen: list[tuple[str, tuple[str, ...]]], scope: list[str]):
        super().__init__()
        self.seen, self.scope = seen, scope

    @classmethod
    def _should_skip_dynamo(cls) -> bool:  # as the grader's recorder: no dynamo import
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        packet = getattr(func, "overloadpacket", func)
        self.seen.append((f"aten.{getattr(packet, '__name__', func)}", tuple(reversed(self.scope))))
        return func(*args, **(kwargs or {}))


def version_checked(tensor):
    """A saved tensor with its version: hooks that only passed the tensor through would switch off
    autograd's check that it was not written in place before backward (the grader keeps it too)."""
    return tensor, tensor._version


def unpack_checked(packed):
    tensor, version = packed
    if tensor._version != version:
        raise RuntimeError(
            f"one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [{tensor.type()} {list(tensor.shape)}] is at version {tensor._version}; expected "
            f"version {version} instead. Hint: a tensor autograd saved was written in place afterwards "
            f"(x[...] = ..., x += ..., or a method ending in _)"
        )
    return tensor


def _match(qualname: str, name: str) -> str | None:
    for pattern in rules()["forbidden"].get(qualname, ()):
        if fnmatch.fnmatchcase(name, pattern):
            return pattern
    return None


@contextlib.contextmanager
def _callees_scoped(graded: str, scope: list[str]):
    """Your other contract functions, as every module of yours sees them, marked while they run."""
    contract = set(rules()["functions"])
    replaced = []
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("exercises.") or module is None:
            continue
        namespace = vars(module)
        for key, value in list(namespace.items()):
            owner = getattr(value, "__module__", "") or ""
            qualname = f"{owner.removeprefix('exercises.')}.{getattr(value, '__name__', '')}"
            if callable(value) and owner.startswith("exercises.") and qualname in contract and qualname != graded:
                namespace[key] = _marked(value, qualname, scope)
                replaced.append((namespace, key, value))
    try:
        yield
    finally:
        for namespace, key, value in reversed(replaced):
            namespace[key] = value


def _marked(fn, qualname: str, scope: list[str]):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        scope.append(qualname)
        try:
            return fn(*args, **kwargs)
        finally:
            scope.pop()

    return run


@contextlib.contextmanager
def watched(qualname: str):
    """Run the body as the grader runs a graded call of ``qualname``; on the way out, fail with
    the grader's message if it reached an operation ``qualname`` may not use."""
    __tracebackhide__ = True
    if not rules()["forbidden"].get(qualname):
        yield
        return
    void = static_void(qualname)  # the grader decides this first, from the text alone
    if void:
        import pytest

        pytest.fail(void, pytrace=False)
    seen: list[tuple[str, tuple[str, ...]]] = []
    scope: list[str] = []
    saved = []

    def pack(tensor):
        saved.append(tuple(reversed(scope)))  # innermost first, as the grader keys them
        return version_checked(tensor)

    def api(name):
        seen.append((name, tuple(reversed(scope))))

    if qualname in rules()["labs"]:  # the APIs alone: the lab's CPU budget is measured around this
        with _callees_scoped(qualname, scope), _apiwatch.recording(api):
            yield
    else:
        with (
            _callees_scoped(qualname, scope),
            torch.autograd.graph.saved_tensors_hooks(pack, unpack_checked),
            _apiwatch.recording(api),
            _Kernels(seen, scope),
            _Watch(seen, scope),
        ):
            yield
    seen += [(AUTOGRAD, inside) for inside in saved]
    # The grader goes through what it saw sorted by "op@callee..." and names the first it charges.
    for name, inside in sorted(set(seen), key=lambda item: "@".join([item[0], *item[1]])):
        pattern = _match(qualname, name)
        if not pattern or any(_match(callee, name) for callee in inside):
            continue  # allowed, or charged to a callee whose own rules forbid it
        where = f" (inside its call to {inside[-1]})" if inside else ""
        import pytest

        pytest.fail(
            f"{qualname} called {name}{where}, which this exercise forbids (rule {pattern!r}); the function scores 0",
            pytrace=False,
        )
