"""What a graded call is watched with, inside the student's process: operation recorders, an
autograd detector and (in the isolated child) an audit hook.

Everything here runs where the student's code runs, so the student can tamper with it: what it
reports is feedback (which call was forbidden, how many operations ran). The verdicts that cost
points are also decided in the trusted parent (``seqlab.subset`` on the source,
the grader's own timing of linear_scan, values compared there).

Each layer catches what the one before can miss: the TorchFunctionMode sees every torch-level
call by its public name, including an alias bound at import time and ``torch.ops.aten.*``;
the TorchDispatchMode sees the aten kernels underneath, however they were reached; saved-tensor
hooks fire whenever autograd records a graph; the API recorder (seqlab.student.apiwatch) names
the plain-Python APIs neither mode sees (torch.optim, torch.nn.utils' clipping, the torch.nn
module classes, autograd entry points), however the student's code reached them.
"""

from __future__ import annotations

import contextlib
import types
from collections import Counter
from collections.abc import Iterator
from typing import Any

import torch
from torch.overrides import TorchFunctionMode, resolve_name
from torch.utils._python_dispatch import TorchDispatchMode

from . import apiwatch

# The forbidden Python-level APIs are wrapped on this module's import: both runners import it
# before they load a submission (the child in prepare(), before a fork server forks it; the
# in-process runner through seqlab.student.invoke), so an alias the student binds at import time
# holds the wrapper.
apiwatch.install()

# An operation seen while the student's own code of a declared callee runs (a call the reference
# never made, seqlab.student.callees) is reported as "op@callee": the grader charges it to that
# callee when the callee's own rules forbid it, so a caller is not voided a second time for its
# callee's forbidden operation (the callee's own grading and static scan already charge it).
SCOPE_MARK = "@"


def scoped(name: str, scope: list[str]) -> str:
    return SCOPE_MARK.join([name, *reversed(scope)]) if scope else name


def split_scope(key: str) -> tuple[str, tuple[str, ...]]:
    """``"op@inner@outer"`` -> ``("op", ("inner", "outer"))``: the op and the callees it ran inside."""
    name, *scope = key.split(SCOPE_MARK)
    return name, tuple(scope)


# torch's name for a function, by the identity of what it is: the function itself, or for a
# property's getter (``Tensor.shape.__get__``, a new method-wrapper on each access) the property.
# resolve_name sets up a warnings filter on every call, about 15% of an in-process grading's CPU
# (every torch op is named). Keyed on identity, not on the object's own __eq__/__hash__, so no
# object can answer for another; the entry holds the object, so its id stays its own.
_NAMES: dict[tuple[int, str], tuple[object, str]] = {}
_NAMES_KEPT = 4096  # torch's public API is ~2,000 functions and properties; a flood just starts over
_GETTER = type(torch.Tensor.shape.__get__)  # type: ignore[attr-defined]  # a getset descriptor at run time, a Size in the stubs


def torch_function_name(func: Any) -> str:
    getter = type(func) is _GETTER and isinstance(func.__self__, types.GetSetDescriptorType)
    owner = func.__self__ if getter else func
    key = (id(owner), getattr(func, "__name__", ""))
    known = _NAMES.get(key)
    if known is not None and known[0] is owner:
        return known[1]
    name: str | None = resolve_name(func)
    if not name:  # not torch's own: named afresh each time (its attributes may change)
        module = getattr(func, "__module__", None) or ""
        qualname = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
        return f"{module}.{qualname}" if module else str(qualname)
    if len(_NAMES) >= _NAMES_KEPT:
        _NAMES.clear()
    _NAMES[key] = (owner, name)
    return name


class _Counter:
    """What both recorders keep: counts by (scoped) name, a pause depth, the callee scope."""

    def _start_counting(self, scope: list[str] | None) -> None:
        self.counts: Counter[str] = Counter()
        self.paused = 0
        self.scope = [] if scope is None else scope  # shared with CallWatch.inside

    def _count(self, name: str) -> None:
        if not self.paused:
            self.counts[scoped(name, self.scope)] += 1


class OpRecorder(TorchFunctionMode, _Counter):
    """Counts every torch function called while active (the complexity rule counts these)."""

    def __init__(self, scope: list[str] | None = None) -> None:
        super().__init__()
        self._start_counting(scope)

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        if not self.paused:  # paused: trusted work (callee matching), not named at all
            self._count(torch_function_name(func))
        result = func(*args, **(kwargs or {}))
        # A complex tensor made: complex-step differentiation computes exact gradients with no
        # autograd and no derivative written, so the functions that forbid autograd forbid
        # complex tensors too (grading_config.yaml); every complex result is named, the rules judge.
        if not self.paused and isinstance(result, torch.Tensor):
            complex_op = apiwatch.complex_name(result)
            if complex_op:
                self._count(complex_op)
        return result


class KernelRecorder(TorchDispatchMode, _Counter):
    """Records the aten kernels reached, whatever Python path led there."""

    def __init__(self, scope: list[str] | None = None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # torch leaves TorchDispatchMode unannotated
        self._start_counting(scope)

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Otherwise torch wraps __torch_dispatch__ in torch._disable_dynamo, whose first call
        # imports all of dynamo (~4 s, 800 modules). Nothing here is ever compiled.
        return False

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        if not self.paused:
            packet = getattr(func, "overloadpacket", func)
            self._count(f"aten.{getattr(packet, '__name__', func)}")
        return func(*args, **(kwargs or {}))


class ApiRecorder(_Counter):
    """Counts the watched Python-level APIs called (seqlab.student.apiwatch): the sink of one call."""

    def __init__(self, scope: list[str] | None = None) -> None:
        self._start_counting(scope)

    def __call__(self, name: str) -> None:
        self._count(name)


def inplace_message(tensor: torch.Tensor, saved: int) -> str:
    """Autograd's own error for a saved tensor written in place before backward (its words, so the
    hints that know them name the mistake)."""
    return (
        f"one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{tensor.type()} {list(tensor.shape)}] is at version {tensor._version}; expected "
        f"version {saved} instead. Hint: a tensor autograd saved was written in place afterwards "
        f"(x[...] = ..., x += ..., or a method ending in _)"
    )


class AutogradDetector:
    """Fires when autograd records a graph: ``saved_tensors_hooks`` are called on every save.

    A pack hook takes over how a tensor is saved, and with it autograd's check that a saved tensor
    was not written in place before backward: the hooks keep each tensor's version and check it
    on unpacking, so a graded call raises where plain PyTorch (and the student's own tests) would,
    instead of training on wrong gradients."""

    def __init__(self) -> None:
        self.used = False
        self.paused = 0

    def _pack(self, tensor: torch.Tensor) -> tuple[torch.Tensor, int]:
        if not self.paused:
            self.used = True
        return tensor, tensor._version

    @staticmethod
    def _unpack(packed: tuple[torch.Tensor, int]) -> torch.Tensor:
        tensor, version = packed
        if tensor._version != version:
            raise RuntimeError(inplace_message(tensor, version))
        return tensor

    def context(self) -> torch.autograd.graph.saved_tensors_hooks:
        return torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)


class CallWatch:
    """All recorders of one graded call, entered and paused together."""

    def __init__(self, *, kernels: bool) -> None:
        self.scope: list[str] = []  # the declared callees whose student code is running, outermost first
        self.ops = OpRecorder(self.scope)
        self.kernels = KernelRecorder(self.scope) if kernels else None
        self.apis = ApiRecorder(self.scope)
        self.autograd = AutogradDetector()

    @contextlib.contextmanager
    def active(self) -> Iterator[CallWatch]:
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.autograd.context())
            stack.enter_context(apiwatch.recording(self.apis))
            if self.kernels is not None:
                stack.enter_context(self.kernels)
            stack.enter_context(self.ops)
            yield self

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Trusted work inside a watched call (a correct callee) is not charged to the student."""
        recorders = [r for r in (self.ops, self.kernels, self.apis, self.autograd) if r is not None]
        for r in recorders:
            r.paused += 1
        try:
            yield
        finally:
            for r in recorders:
                r.paused -= 1

    @contextlib.contextmanager
    def inside(self, callee: str) -> Iterator[None]:
        """The student's own code of ``callee`` runs (see SCOPE_MARK)."""
        self.scope.append(callee)
        try:
            yield
        finally:
            self.scope.pop()

    def report(self) -> dict[str, Any]:
        names = Counter(self.ops.counts)
        if self.kernels is not None:
            names.update({k: v for k, v in self.kernels.counts.items()})
        names.update(self.apis.counts)  # named, not counted in op_count (the complexity rule's)
        if self.autograd.used:
            names["autograd.graph (a tensor was saved for backward)"] += 1
        return {"ops": dict(names), "op_count": int(sum(self.ops.counts.values()))}


# --- audit hook (isolated child only) -------------------------------------------------------


class AuditRefusal(PermissionError):
    pass


def install_audit_hook(protected_dirs: list[str], writable_dir: str) -> None:
    """Refuse, for the rest of this process, what ``policy.install_audit_hook`` refuses, with
    every write confined to ``writable_dir`` (the scratch directory)."""
    from .policy import install_audit_hook as install

    install(protected_dirs, writable=writable_dir, refusal=AuditRefusal)
