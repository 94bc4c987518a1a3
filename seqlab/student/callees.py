"""Correct callees without an oracle: a bug is charged once, and nothing more.

A function built on others (the table ``DECLARED_CALLEES`` in seqlab.contract) should not lose
points for a bug in a callee. The grader never computes a reference on arguments the student
chooses. Instead:

* in the trusted parent, ``record_callees`` runs the reference of the function under test on
  the test's own inputs, with its declared callees wrapped so that each call the reference makes
  is recorded, in order, as (callee, bound arguments, result); the recording travels with the
  call as plain data;
* in the student's process, ``CalleeSession`` puts stand-ins in place of the declared callees
  only. A stand-in returns a recorded result when the student's call is one the reference made:
  same callee, arguments equal within the dtype tolerance of grading_config.yaml, and in order
  (see ``CalleeSession.match``); every other call runs the student's own callee. Calls between
  contract functions that are not declared always run the student's own code.

So a stand-in can only hand out what an honest caller computing the test's answer the
reference's way receives anyway: a callee's correct result on the inputs of that decomposition.
Stand-ins expire with the call: the session is closed and its recording dropped when the call
returns, and a stand-in kept somewhere and used in a later call runs the student's own callee.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from functools import cache
from inspect import Signature, signature
from types import FrameType
from typing import TYPE_CHECKING, Any

import torch

from .. import contract
from .trees import clone_tree

if TYPE_CHECKING:
    from ..reference import Reference
    from .guards import CallWatch

# Trusted work in the parent runs the reference once more on the test's own (small) inputs: a
# few milliseconds for every graded case. 10 s is the student's own call_timeout_s, so a case
# that took the reference that long is a grader bug, not something to wait for.
RECORD_TIME_BUDGET_S = 10.0
# The recording travels in the call's frame beside the arguments: 16 MB of recorded results
# keeps args + recording well inside the 64 MB frame limit (codec.MAX_FRAME_BYTES), and is
# far above what any graded case records (under 100 kB).
RECORD_SIZE_BUDGET_BYTES = 16 << 20


class _BudgetSpent(BaseException):
    """Raised inside the reference when the recording has used up its time or size budget."""


@cache
def contract_signature(qualname: str) -> Signature:
    """The contract's signature of ``qualname`` as an ``inspect.Signature`` (trusted text)."""
    namespace: dict[str, Any] = {"torch": torch}
    exec(f"def _f{contract.SIGNATURES[qualname]}: pass", namespace)
    return signature(namespace["_f"])


def bind_arguments(qualname: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """``{parameter: value}`` with defaults filled in, or None when the call does not bind."""
    try:
        bound = contract_signature(qualname).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return dict(bound.arguments)


def _tree_bytes(obj: Any) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (list, tuple)):
        return sum(_tree_bytes(x) for x in obj)
    if isinstance(obj, dict):
        return sum(_tree_bytes(x) for x in obj.values())
    return 64


def _clone(obj: Any) -> Any:
    return clone_tree(obj)


# After the budget the alarm repeats at this interval until the block has ended: an exception
# raised while Python runs a weakref or __del__ callback is printed and dropped, so a single
# alarm that lands there would leave the block running with no limit (seen in the mutant bank).
RETRY_S = 0.05


@contextlib.contextmanager
def time_budget(seconds: float | None, exception: type[BaseException]) -> Iterator[None]:
    """Raise ``exception`` in the main thread after ``seconds`` (no limit off the main thread)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return
    active = [True]

    def fire(signum: int, frame: FrameType | None) -> None:
        if active[0]:
            raise exception()

    hook = sys.unraisablehook

    def dropped(unraisable: sys.UnraisableHookArgs) -> None:
        # The alarm landed in a callback and was dropped, as expected (the repeat lands again):
        # not reported, so that no slower hook (pytest's formats a traceback) runs while the
        # repeats keep coming and is cut short by one of them.
        if not isinstance(unraisable.exc_value, exception):
            hook(unraisable)

    previous = signal.signal(signal.SIGALRM, fire)
    sys.unraisablehook = dropped
    signal.setitimer(signal.ITIMER_REAL, seconds, RETRY_S)
    try:
        yield
    finally:
        active[0] = False  # first: a repeat that arrives from here on does nothing
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = hook


def record_callees(
    reference: Reference,
    qualname: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    time_s: float = RECORD_TIME_BUDGET_S,
    size_bytes: int = RECORD_SIZE_BUDGET_BYTES,
) -> list[dict[str, Any]]:
    """The calls the reference of ``qualname`` makes to its declared callees on these inputs.

    Each entry is ``{"callee", "arguments", "result"}``, in the order made. Only the function's
    own calls are recorded (a callee's calls to its own callees are not). The reference runs on
    copies; a failure of the reference, or a spent time or size budget, ends the recording where
    it got to (every entry kept is still a correct result on the reference's own arguments).
    """
    callees = contract.declared_callees(qualname)
    if not callees:
        return []
    originals = {id(reference(name)): name for name in callees}
    recording: list[dict[str, Any]] = []
    state = {"depth": 0, "bytes": 0}

    def recorder(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*a: Any, **k: Any) -> Any:
            if state["depth"]:
                return original(*a, **k)
            arguments = bind_arguments(name, a, k)
            state["depth"] += 1
            try:
                result = original(*a, **k)
            finally:
                state["depth"] -= 1
            if arguments is not None:
                entry = {"callee": name, "arguments": _clone(arguments), "result": _clone(result)}
                state["bytes"] += _tree_bytes(entry["arguments"]) + _tree_bytes(entry["result"])
                if state["bytes"] > size_bytes:
                    raise _BudgetSpent()
                recording.append(entry)
            return result

        return wrapped

    replaced = []
    for module in reference.modules.values():
        namespace = module.__dict__
        for key, value in list(namespace.items()):
            name = originals.get(id(value))
            if name is not None:
                replaced.append((namespace, key, value))
                namespace[key] = recorder(name, value)
    try:
        with time_budget(time_s, _BudgetSpent), torch.no_grad():
            reference(qualname)(*_clone(tuple(args)), **_clone(dict(kwargs)))
    except _BudgetSpent:
        pass  # the budget ends the recording where it got to
    except Exception:  # the reference failing on these inputs: its own call in the grader reports it
        return recording  # what it recorded until then is still right (the docstring)
    finally:
        for namespace, key, value in reversed(replaced):
            namespace[key] = value
    return recording


# --- the student's side ------------------------------------------------------------------------


def _plain(t: torch.Tensor) -> torch.Tensor:
    return torch.Tensor.as_subclass(t, torch.Tensor)


def same_value(actual: Any, recorded: Any, tolerances: dict[str, tuple[float, float]]) -> bool:
    """``actual`` equals ``recorded`` in structure, and in value within the dtype's tolerance
    (floats: |a - r| <= atol + rtol * |r|, the comparison graders use); anything else exactly."""
    if isinstance(recorded, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return False
        a, r = _plain(actual).detach(), _plain(recorded).detach()
        if a.shape != r.shape or a.dtype != r.dtype or a.device.type != r.device.type:
            return False
        if torch.equal(a, r):  # the usual case, one op; NaNs never take it (NaN != NaN)
            return True
        if not r.is_floating_point():
            return False
        rtol, atol = tolerances.get(str(r.dtype).replace("torch.", ""), tolerances["float64"])
        a64, r64 = a.to(torch.float64), r.to(torch.float64)
        same = (a64 == r64) | (torch.isnan(a64) & torch.isnan(r64))
        close = (a64 - r64).abs() <= atol + rtol * r64.abs()
        return bool((same | close).all())
    if isinstance(recorded, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(recorded)
            and all(same_value(a, r, tolerances) for a, r in zip(actual, recorded))
        )
    if isinstance(recorded, dict):
        return (
            isinstance(actual, dict)
            and set(actual) == set(recorded)
            and all(same_value(actual[k], recorded[k], tolerances) for k in recorded)
        )
    if isinstance(recorded, float) and not isinstance(actual, bool) and isinstance(actual, (int, float)):
        rtol, atol = tolerances["float64"]
        return abs(float(actual) - recorded) <= atol + rtol * abs(recorded) or actual == recorded
    if isinstance(recorded, torch.device) or isinstance(actual, torch.device):
        return actual is not None and recorded is not None and torch.device(actual) == torch.device(recorded)
    return type(actual) is type(recorded) and actual == recorded


class CalleeSession:
    """The stand-ins of one graded call.

    ``match`` is "in order" per callee: a student's call is matched against the recorded calls
    of the same callee from a cursor onwards, and a match moves the cursor past it. So a caller
    that makes fewer calls (it skips recorded ones) still gets the later ones, each recorded
    result is handed out for at most one position in the sequence, and an extra call that the
    reference never made runs the student's own callee. A repeat of a call already matched gets
    the same result again (the student already holds it; a caller that computes a callee twice
    is not charged for it). Only the graded function's own calls are matched: inside a callee
    that runs the student's code, further contract calls run the student's code too.
    """

    def __init__(
        self,
        recording: list[dict[str, Any]],
        tolerances: dict[str, tuple[float, float]],
        watch: CallWatch | None = None,
    ) -> None:
        self.tolerances = tolerances
        self.watch = watch
        self.pending: dict[str, list[dict[str, Any]]] = {}
        for entry in recording:
            self.pending.setdefault(entry["callee"], []).append(entry)
        self.matched: dict[str, list[dict[str, Any]]] = {}
        self.depth = 0
        self.open = True

    def close(self) -> None:
        """The call is over: drop the recording, so a kept stand-in has nothing to hand out."""
        self.open = False
        self.pending, self.matched = {}, {}

    def match(self, callee: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bool, Any]:
        """``(True, recorded result)`` for a call the reference made, else ``(False, None)``."""
        arguments = bind_arguments(callee, args, kwargs)
        if arguments is None:
            return False, None
        pending = self.pending.get(callee, [])
        for i, entry in enumerate(pending):
            if same_value(arguments, entry["arguments"], self.tolerances):
                del pending[: i + 1]
                self.matched.setdefault(callee, []).append(entry)
                return True, entry["result"]
        for entry in self.matched.get(callee, []):
            if same_value(arguments, entry["arguments"], self.tolerances):
                return True, entry["result"]
        return False, None

    def stand_in(self, callee: str, own: Callable[..., Any] | None) -> Callable[..., Any]:
        session = self

        def run_own(*args: Any, **kwargs: Any) -> Any:
            if own is None:
                raise NotImplementedError(f"{callee} is missing from the submission")
            inside = session.watch.inside(callee) if session.watch is not None else contextlib.nullcontext()
            with inside:
                return own(*args, **kwargs)

        def stand_in(*args: Any, **kwargs: Any) -> Any:
            if not session.open or session.depth:
                return run_own(*args, **kwargs)
            paused = session.watch.paused() if session.watch is not None else contextlib.nullcontext()
            with paused:  # matching is the grader's work, not the student's operations
                found, result = session.match(callee, args, kwargs)
                if found:
                    return _clone(result)
            session.depth += 1
            try:
                return run_own(*args, **kwargs)
            finally:
                session.depth -= 1

        stand_in.__name__ = callee.split(".")[-1]
        stand_in.__qualname__ = stand_in.__name__
        return stand_in
