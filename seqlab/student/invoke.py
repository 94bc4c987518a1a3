"""One graded call of student code, the same in-process and in the isolated child.

It puts stand-ins in place of the graded function's declared callees (so a bug is charged
once, seqlab.student.callees), watches the call (operations, kernels, autograd), captures printed output up to a cap, and
reports which outputs alias an argument.
"""

from __future__ import annotations

import contextlib
import io
import sys
import traceback
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch

from .. import contract
from . import gradcheck
from .callees import Answers, CalleeSession, bind_arguments
from .guards import CallWatch, split_scope
from .plain import plain_tree
from .trees import clone_tree
from .updates import UpdateTap, tensors

# A lab's parameters move by the student's own adam (the labs' docstrings): counted in its call.
ADAM = "optimizers.adam"


class CappedText(io.TextIOBase):
    """A stdout/stderr stand-in that keeps the first ``limit`` characters and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit, self.kept, self.dropped = limit, 0, 0
        self.parts: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, text: object) -> int:
        text = str(text)
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def text(self) -> str:
        out = "".join(self.parts)
        return out + (f"\n[... {self.dropped} more characters of output dropped]" if self.dropped else "")


def _tensors(obj: Any, path: str = "") -> Iterator[tuple[str, torch.Tensor]]:
    if isinstance(obj, torch.Tensor):
        yield path or "value", obj
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            yield from _tensors(item, f"{path}[{i}]")
    elif isinstance(obj, dict):
        for key, item in obj.items():
            yield from _tensors(item, f"{path}[{key!r}]")


def _storage_key(t: torch.Tensor) -> tuple[str, int] | None:
    try:
        return (t.device.type, t.untyped_storage().data_ptr())
    except Exception:  # a tensor subclass without storage: nothing to alias
        return None


def aliased_outputs(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    """Paths of returned tensors that are an argument or share its memory (a view)."""
    inputs = {}
    for path, t in _tensors((args, kwargs)):
        key = _storage_key(t)
        if key and t.numel():
            inputs[key] = path
    return [path for path, t in _tensors(value, "output") if t.numel() and _storage_key(t) in inputs]


class CallFailed(Exception):
    """The student's code raised; carries a short, student-facing account."""

    def __init__(self, kind: str, message: str, report: dict[str, Any]):
        super().__init__(message)
        self.kind, self.message, self.report = kind, message, report


def student_traceback(exc: BaseException) -> str:
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if "/exercises/" in (f.filename or "").replace("\\", "/")
    ]
    lines = [
        f"  exercises/{f.filename.replace(chr(92), '/').split('/exercises/')[-1]}, line {f.lineno}, in {f.name}\n    {f.line}"
        for f in frames[-3:]
    ]
    return "\n".join(lines)


def _require_grad(
    graded: str, args: tuple[Any, ...], kwargs: dict[str, Any], backward: dict[str, Any] | None
) -> dict[str, torch.Tensor]:
    """Mark the floating-point tensors of the arguments ``backward["wrt"]`` names as requiring
    grad (they are the student's copies): ``{"name[path]": tensor}``."""
    if backward is None:
        return {}
    arguments = bind_arguments(graded, args, kwargs) or {}
    wrt = tuple(name for name in backward["wrt"] if name in arguments)
    inputs = gradcheck.inputs_of(arguments, wrt)
    for t in inputs.values():
        t.requires_grad_(True)
    return inputs


def _gradients(value: Any, inputs: dict[str, torch.Tensor], seed: int) -> dict[str, Any]:
    """The report's ``grads`` and ``backward_error``, then everything detached for sending."""
    try:
        grads, error = gradcheck.backward(value, inputs, seed), ""
    except (RuntimeError, ValueError) as exc:  # autograd's own refusal: the verdict's words
        grads, error = {}, str(exc)[:2000]
    for t in inputs.values():
        t.requires_grad_(False)
    return {"grads": {key: g.detach() for key, g in grads.items()}, "backward_error": error}


def install_stand_ins(
    modules: dict[str, types.ModuleType], functions: dict[str, Any], graded: str, session: CalleeSession
) -> list[tuple[dict[str, Any], str, Any]]:
    """Point every module-level name bound to a declared callee of ``graded`` at its stand-in.

    Only declared callees get one (seqlab.contract.DECLARED_CALLEES); every other contract
    function keeps the student's own code. Returns what was replaced, to be restored after.
    """
    by_identity = {
        id(functions[name]): name
        for name in contract.declared_callees(graded)
        if name != graded and functions.get(name) is not None
    }
    stand_ins = {name: session.stand_in(name, functions[name]) for name in by_identity.values()}
    replaced: list[tuple[dict[str, Any], str, Any]] = []
    for module in list(modules.values()):
        namespace = module.__dict__
        for key, value in list(namespace.items()):
            callee = by_identity.get(id(value))
            if callee is not None:
                replaced.append((namespace, key, value))
                namespace[key] = stand_ins[callee]
    return replaced


def install_tap(
    modules: dict[str, types.ModuleType],
    functions: dict[str, Any],
    graded: str,
    arguments: dict[str, Any],
    watch: CallWatch,
) -> tuple[UpdateTap | None, list[tuple[dict[str, Any], str, Any]]]:
    """During a lab's call, every module-level name bound to the student's ``adam`` points at a
    tap that counts its steps (seqlab.student.updates); returns it and what was replaced."""
    own = functions.get(ADAM)
    if graded not in contract.LABS or own is None:
        return None, []
    tap = UpdateTap(own, len(tensors(arguments.get("params"))), watch.paused)
    replaced = []
    for module in list(modules.values()):
        namespace = module.__dict__
        for key, value in list(namespace.items()):
            if value is own:
                replaced.append((namespace, key, value))
                namespace[key] = tap.wrapper
    return tap, replaced


def restore(replaced: list[tuple[dict[str, Any], str, Any]]) -> None:
    for namespace, key, value in reversed(replaced):
        namespace[key] = value


def invoke(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    graded: str,
    modules: dict[str, Any],
    functions: dict[str, Any],
    recording: list[dict[str, Any]] | Answers,
    tolerances: dict[str, tuple[float, float]],
    kernels: bool,
    output_limit: int,
    backward: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Call ``fn(*args, **kwargs)``; the arguments must already be the student's own copies.

    ``recording`` is what the reference's declared callees returned on this test's inputs
    (seqlab.student.callees.record_callees), or ``Answers`` to ask for it one call at a time;
    the stand-ins made from it end with this call.
    ``backward`` (``{"wrt": [...], "seed": int}``): the named inputs require grad and the report
    carries the gradients of seqlab.student.gradcheck.backward, or why autograd gave none."""
    watch = CallWatch(kernels=kernels)
    inputs = _require_grad(graded, args, kwargs, backward)
    if backward is not None:  # the grader's own graph, not the student's use of autograd
        watch.autograd.paused += 1
    session = CalleeSession(recording, tolerances, watch)
    replaced = install_stand_ins(modules, functions, graded, session)
    tap, tapped = install_tap(modules, functions, graded, bind_arguments(graded, args, kwargs) or {}, watch)
    replaced += tapped
    captured = CappedText(output_limit)
    saved_streams = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = captured
    try:
        with watch.active(), torch.set_grad_enabled(True if backward is not None else torch.is_grad_enabled()):
            value = fn(*args, **kwargs)
        # Plain data from here on, checked by types alone: the aliasing report, the gradients and
        # the codec below run after the watch, where a subclass's __iter__ would run unseen.
        value = plain_tree(value, "the value it returned")
        args, kwargs = plain_tree(args, "its arguments after the call"), plain_tree(kwargs, "its arguments")
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        report = {**watch.report(), "output": captured.text()}
        if isinstance(exc, NotImplementedError):
            raise CallFailed("not_implemented", "not implemented yet (raises NotImplementedError)", report) from None
        if isinstance(exc, SystemExit):
            raise CallFailed("exception", f"called sys.exit({exc.code!r})", report) from None
        if isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and "alloc" in str(exc).lower()):
            raise CallFailed("memory", f"ran out of memory: {str(exc)[:300]}", report) from None
        where = student_traceback(exc)
        raise CallFailed(
            "exception", f"{type(exc).__name__}: {str(exc)[:500]}" + (f"\n{where}" if where else ""), report
        ) from None
    finally:
        sys.stdout, sys.stderr = saved_streams
        restore(replaced)
        session.close()
    aliased = aliased_outputs(value, args, kwargs)
    gradients = {}
    if backward is not None:
        # Watched: the backward pass runs the student's own code too (tensor hooks, an
        # autograd.Function's backward). Its kernels are charged as the forward's were: to the
        # callees whose own code ran in the call when their rules forbid them, else to the call.
        ran = sorted(
            {c for r in (watch.ops, watch.kernels) if r is not None for k in r.counts for c in split_scope(k)[1]}
        )
        with watch.active(), contextlib.ExitStack() as scope:
            for callee in ran:
                scope.enter_context(watch.inside(callee))
            gradients = _gradients(value, inputs, int(backward["seed"]))
        value = clone_tree(value)  # off the graph: the answer is plain data, as on every call
    return {
        **gradients,
        "value": value,
        "args": args,
        "kwargs": kwargs,
        "aliased": aliased,
        "updates": tap.report() if tap is not None else {},
        **watch.report(),
        "output": captured.text(),
    }
