"""Correct callees without an oracle: a bug is charged once, and nothing more.

A function built on others (the table ``DECLARED_CALLEES`` in seqlab.contract) should not lose
points for a bug in a callee. The grader never computes a reference on arguments the student
chooses. Instead:

* in the trusted parent, ``record_callees`` runs the reference of the function under test on
  the test's own inputs, with its declared callees wrapped so that each call the reference makes
  is recorded, in order, as (callee, bound arguments, result); the recording stays there;
* in the student's process, ``CalleeSession`` puts stand-ins in place of the declared callees
  only. A stand-in asks for a recorded result when the student makes a call (in the isolated
  child, over the call's channel: the parent's ``Matcher`` answers one call at a time), and gets
  one when the call is one the reference made: same callee, arguments equal within the dtype
  tolerance of grading_config.yaml, and in order (see ``Matcher``); every other call runs the
  student's own callee. Calls between contract functions that are not declared always run the
  student's own code.

So a stand-in can only hand out what an honest caller computing the test's answer the
reference's way receives anyway: a callee's correct result on the inputs of that decomposition,
once the student's code has made that call; nothing recorded is in the child before then.
Stand-ins expire with the call: a stand-in kept somewhere and used in a later call runs the
student's own callee.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
from collections.abc import Callable, Iterator
from functools import cache
from inspect import Signature, signature
from typing import TYPE_CHECKING, Any

import torch

from .. import contract
from .budget import time_budget
from .plain import NotPlain, plain_tree
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
    # The recorders replace the callees in the reference's shared modules, and the parent runs
    # the reference in other threads meanwhile (a lab's replay computed while the child trains,
    # seqlab.labs.ahead, may still run when the next test is recorded): only this thread's calls
    # are recorded. Recording another thread's calls put its arguments in the recording and cut
    # this thread's off (its depth counter), so an honest caller lost a test to a callee of its
    # own under load (tests/student/test_callee_threads.py).
    owner = threading.get_ident()

    def recorder(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*a: Any, **k: Any) -> Any:
            if state["depth"] or threading.get_ident() != owner:
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


class Matcher:
    """The recorded calls of one graded call, matched in order, where the recording is kept.

    For the isolated runner that is the trusted parent: the student's process holds no recorded
    result, and a stand-in asks for one per call with its arguments (seqlab.student.child).
    ``match`` is "in order" per callee: a call is matched against the recorded calls of the same
    callee from a cursor onwards, and a match moves the cursor past it. So a caller that makes
    fewer calls (it skips recorded ones) still gets the later ones, each recorded result is handed
    out for at most one position in the sequence, and an extra call that the reference never made
    is not matched. A repeat of a call already matched gets the same result again (the student
    already holds it; a caller that computes a callee twice is not charged for it).
    """

    def __init__(self, recording: list[dict[str, Any]], tolerances: dict[str, tuple[float, float]]) -> None:
        self.tolerances = tolerances
        self.pending: dict[str, list[dict[str, Any]]] = {}
        for entry in recording:
            self.pending.setdefault(entry["callee"], []).append(entry)
        self.matched: dict[str, list[dict[str, Any]]] = {}

    def callees(self) -> list[str]:
        """The callees the reference called here: a stand-in of any other never asks."""
        return sorted(self.pending)

    def match(self, callee: str, arguments: Any) -> tuple[bool, Any]:
        """``(True, recorded result)`` for bound ``arguments`` the reference passed, else ``(False, None)``."""
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


class Answers:
    """Where a session's stand-ins get correct results from: ``ask(callee, plain bound arguments)
    -> (found, result)``, asked only for ``callees``. In the isolated child ``ask`` is a round trip
    to the parent; in-process it is a ``Matcher`` beside the call."""

    def __init__(self, callees: list[str], ask: Callable[[str, dict[str, Any]], tuple[bool, Any]]) -> None:
        self.callees = frozenset(callees)
        self.ask = ask

    @classmethod
    def local(cls, recording: list[dict[str, Any]], tolerances: dict[str, tuple[float, float]]) -> Answers:
        matcher = Matcher(recording, tolerances)

        def ask(callee: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
            found, result = matcher.match(callee, arguments)
            return found, _clone(result) if found else None

        return cls(matcher.callees(), ask)


@contextlib.contextmanager
def _no_collection() -> Iterator[None]:
    """No garbage collection inside: a collection would run the ``__del__`` of the student's
    objects in a cycle while the recorders are paused."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class CalleeSession:
    """The stand-ins of one graded call (``answers``: a recording, or ``Answers`` to ask).

    A stand-in binds the student's call and checks, by type checks that run none of the student's
    code (seqlab.student.plain), that the arguments are plain data; then, with the call's
    recorders paused, it asks for the recorded result. A call that is not matched, or whose
    arguments are not plain (a ``float`` subclass for ``eps``: said in the call's printed output),
    runs the student's own callee, watched. Only the graded function's own calls are matched:
    inside a callee that runs the student's code, further contract calls run the student's code.
    """

    def __init__(
        self,
        answers: list[dict[str, Any]] | Answers,
        tolerances: dict[str, tuple[float, float]] | None = None,
        watch: CallWatch | None = None,
    ) -> None:
        if not isinstance(answers, Answers):
            answers = Answers.local(answers, tolerances or {})
        self.answers: Answers | None = answers
        self.watch = watch
        self.depth = 0
        self.open = True

    def close(self) -> None:
        """The call is over: a kept stand-in asks for nothing any more."""
        self.open = False
        self.answers = None

    def _ask(self, callee: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bool, Any]:
        answers = self.answers
        if answers is None or callee not in answers.callees:
            return False, None
        arguments = bind_arguments(callee, args, kwargs)
        if arguments is None:
            return False, None
        try:
            plain = {name: plain_tree(value, name) for name, value in arguments.items()}
        except NotPlain as exc:  # before the pause: nothing of the student's runs while it lasts
            sys.stdout.write(f"[seqlab] {callee}: {exc}; your own {callee.split('.')[-1]} ran instead\n")
            return False, None
        paused = self.watch.paused() if self.watch is not None else contextlib.nullcontext()
        with paused, _no_collection():  # asking is the grader's work, not the student's operations
            return answers.ask(callee, plain)

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
            found, result = session._ask(callee, args, kwargs)
            if found:
                return result
            session.depth += 1
            try:
                return run_own(*args, **kwargs)
            finally:
                session.depth -= 1

        stand_in.__name__ = callee.split(".")[-1]
        stand_in.__qualname__ = stand_in.__name__
        return stand_in
