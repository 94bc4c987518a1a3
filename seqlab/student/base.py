"""The one way graders reach student code: ``student.run(name, args, kwargs)``.

Two runners implement it: in-process (fast, for instructors debugging their own code) and an
isolated child process (the default, for untrusted submissions). Graders never know which.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from ..results import clean_text
from .callees import record_callees

# A call's positional and keyword arguments as a grader passes them, and a time limit in seconds.
Args = tuple[Any, ...]
Kwargs = dict[str, Any] | None
Seconds = float | None
Backward = dict[str, Any] | None


class StudentError(Exception):
    """The student's code could not produce a value for this call.

    ``kind`` is one of not_implemented, missing, exception, timeout, crash, memory, protocol;
    ``message`` is what the student reads. Text that came from the student's code is cleaned
    here, at the boundary (seqlab.results.clean_text), whichever runner produced it.
    """

    def __init__(self, kind: str, message: str, ops: dict[str, Any] | None = None, output: str = "") -> None:
        message, output = clean_text(message), clean_text(output)
        super().__init__(message)
        self.kind, self.message, self.ops, self.output = kind, message, dict(ops or {}), output


@dataclass
class Outcome:
    """What one call produced: the value, the arguments as the call left them, and what it did."""

    value: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    aliased: list[str] = field(default_factory=list)
    ops: dict[str, int] = field(default_factory=dict)  # torch functions / kernels seen -> count
    op_count: int = 0  # torch-level calls (the complexity rule)
    output: str = ""
    # a ``backward`` call's (seqlab.student.gradcheck): the gradient by input, or why there is none
    grads: dict[str, Any] = field(default_factory=dict)
    backward_error: str = ""
    # a lab's call: its optimizer steps as counted in the student's process (seqlab.student.updates)
    updates: dict[str, Any] = field(default_factory=dict)


class StudentCode(ABC):
    """A loaded submission. ``load_errors`` maps a module to why it could not be used."""

    load_errors: dict[str, str]
    reference: Any
    tolerances: dict[str, tuple[float, float]]

    @abstractmethod
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
        """Call the student's ``qualname`` on copies of ``args``/``kwargs``.

        The function's declared callees answer from the reference's own calls on these inputs
        (seqlab.student.callees), unless ``own_callees``: then they run the student's own code.
        ``kernels``: also record aten kernels (slower; used when the function has forbidden
        operations). ``backward``: ``{"wrt": [parameter names], "seed": int}``: the inputs named
        require grad, and a random weighting of the outputs is backpropagated to them
        (seqlab.student.gradcheck); the gradients come back in ``Outcome.grads``. Raises
        ``StudentError``.
        """

    def recording(
        self, qualname: str, args: tuple[Any, ...], kwargs: dict[str, Any], own: bool = False
    ) -> list[dict[str, Any]]:
        """The reference's calls to ``qualname``'s declared callees on these inputs (trusted
        side); none when the student's ``own`` callees are to run."""
        return [] if own else record_callees(self.reference, qualname, tuple(args), dict(kwargs or {}))

    def cpu_clock(self) -> tuple[object, float] | None:
        """(whose, seconds): the CPU time the process running student code has used so far, as
        the kernel accounts it, and whose it is (two readings of different processes, a child
        replaced between them, make no difference); None where it cannot be read."""
        return None

    def close(self) -> None:  # noqa: B027 - a hook: only runners that hold a process override it
        """Release what the runner holds (the isolated runner's child); nothing by default."""

    def __enter__(self) -> StudentCode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
