"""Student code imported into the grading process itself.

Fast, and the way to debug a reference or a grader; but it trusts the code it runs (a
submission could read the graders' memory), so ``seqlab grade`` isolates by default.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path

from .base import Outcome, StudentCode, StudentError, clone_tree
from .invoke import CallFailed, invoke
from .loader import contract_objects, load_submission, resolve


class _Timeout(BaseException):
    pass


@contextlib.contextmanager
def _alarm(seconds: float | None):
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class InProcessStudent(StudentCode):
    def __init__(self, submission: Path, reference, *, call_timeout: float | None = 10.0, output_limit: int = 65536,
                 skip: dict[str, str] | None = None):
        self.submission = Path(submission)
        self.reference = reference
        self.call_timeout = call_timeout
        self.output_limit = output_limit
        self.modules, self.load_errors = load_submission(self.submission / "exercises", skip=skip)
        self.functions = contract_objects(self.modules, self.load_errors)

    def _substitute(self, qualname, watch):
        correct = self.reference(qualname)

        def callee(*args, **kwargs):
            with watch.paused():
                return correct(*args, **kwargs)

        callee.__name__ = qualname.split(".")[-1]
        return callee

    def run(self, qualname, args=(), kwargs=None, *, substitute=True, kernels=False, timeout=None) -> Outcome:
        try:
            fn = resolve(self.modules, self.load_errors, qualname)
        except LookupError as exc:
            raise StudentError("missing", str(exc)) from None
        args, kwargs = clone_tree(tuple(args)), clone_tree(dict(kwargs or {}))
        try:
            with _alarm(timeout or self.call_timeout):
                report = invoke(fn, args, kwargs, graded=qualname, modules=self.modules, functions=self.functions,
                                substitute=self._substitute if substitute else None, kernels=kernels,
                                output_limit=self.output_limit)
        except CallFailed as exc:
            raise StudentError(exc.kind, exc.message, exc.report.get("ops"), exc.report.get("output", "")) from None
        except _Timeout:
            raise StudentError("timeout", f"did not return within {timeout or self.call_timeout:g} s") from None
        return Outcome(report["value"], report["args"], report["kwargs"], report["aliased"], report["ops"],
                       report["op_count"], report["output"])
