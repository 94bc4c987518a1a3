"""Student code imported into the grading process itself.

Fast, and the way to debug a reference or a grader; but it trusts the code it runs (a
submission could read the graders' memory), so ``seqlab grade`` isolates by default.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import Args, Backward, Kwargs, Outcome, Seconds, StudentCode, StudentError
from .budget import time_budget
from .invoke import CallFailed, invoke
from .loader import contract_objects, load_submission, resolve
from .trees import clone_tree

if TYPE_CHECKING:
    from ..subset.modules import Modules


class _Timeout(BaseException):
    pass


class InProcessStudent(StudentCode):
    def __init__(
        self,
        submission: Path,
        reference: Any,
        *,
        tolerances: dict[str, tuple[float, float]],
        call_timeout: float | None = 10.0,
        output_limit: int = 65536,
        skip: dict[str, str] | None = None,
        texts: Modules | None = None,
    ) -> None:
        self.submission = Path(submission)
        self.reference = reference
        self.tolerances = tolerances
        self.call_timeout = call_timeout
        self.output_limit = output_limit
        self.modules, self.load_errors = load_submission(self.submission / "exercises", skip=skip, texts=texts)
        self.functions = contract_objects(self.modules, self.load_errors)

    def cpu_clock(self) -> tuple[object, float]:
        import time

        # Student code runs in this thread: its CPU, not the lab's parent threads' beside it.
        return self, time.thread_time()

    def run(
        self,
        qualname: str,
        args: Args = (),
        kwargs: Kwargs = None,
        *,
        kernels: bool = False,
        timeout: Seconds = None,
        own_callees: bool = False,
        backward: Backward = None,
    ) -> Outcome:
        try:
            fn = resolve(self.modules, self.load_errors, qualname)
        except LookupError as exc:
            raise StudentError("missing", str(exc)) from None
        recording = self.recording(qualname, args, kwargs or {}, own_callees)
        args, kwargs = clone_tree(tuple(args)), clone_tree(dict(kwargs or {}))
        try:
            with time_budget(timeout or self.call_timeout, _Timeout):
                report = invoke(
                    fn,
                    args,
                    kwargs,
                    graded=qualname,
                    modules=self.modules,
                    functions=self.functions,
                    recording=recording,
                    tolerances=self.tolerances,
                    kernels=kernels,
                    output_limit=self.output_limit,
                    backward=backward,
                )
        except CallFailed as exc:
            raise StudentError(exc.kind, exc.message, exc.report.get("ops"), exc.report.get("output", "")) from None
        except _Timeout:
            raise StudentError("timeout", f"did not return within {timeout or self.call_timeout:g} s") from None
        return Outcome(
            report["value"],
            report["args"],
            report["kwargs"],
            report["aliased"],
            report["ops"],
            report["op_count"],
            report["output"],
            report.get("grads", {}),
            report.get("backward_error", ""),
            report["updates"],
        )
