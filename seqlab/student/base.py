"""The one way graders reach student code: ``student.run(name, args, kwargs)``.

Two runners implement it: in-process (fast, for instructors debugging their own code) and an
isolated child process (the default, for untrusted submissions). Graders never know which.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import torch

STUDENT_ERROR_KINDS = ("not_implemented", "missing", "exception", "timeout", "crash", "memory", "protocol")


class StudentError(Exception):
    """The student's code could not produce a value for this call.

    ``kind`` is one of STUDENT_ERROR_KINDS; ``message`` is what the student reads.
    """

    def __init__(self, kind: str, message: str, ops: dict | None = None, output: str = ""):
        super().__init__(message)
        self.kind, self.message, self.ops, self.output = kind, message, dict(ops or {}), output


@dataclass
class Outcome:
    """What one call produced: the value, the arguments as the call left them, and what it did."""

    value: Any
    args: tuple
    kwargs: dict
    aliased: list[str] = field(default_factory=list)
    ops: dict[str, int] = field(default_factory=dict)   # torch functions / kernels seen -> count
    op_count: int = 0                                     # torch-level calls (the complexity rule)
    output: str = ""


def clone_tree(obj: Any) -> Any:
    """A deep copy of plain data: tensors cloned, containers rebuilt."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    if isinstance(obj, list):
        return [clone_tree(x) for x in obj]
    if isinstance(obj, tuple):
        return tuple(clone_tree(x) for x in obj)
    if isinstance(obj, dict):
        return {k: clone_tree(v) for k, v in obj.items()}
    return obj


class StudentCode(ABC):
    """A loaded submission. ``load_errors`` maps a module to why it could not be used."""

    load_errors: dict[str, str]

    @abstractmethod
    def run(self, qualname: str, args: tuple = (), kwargs: dict | None = None, *,
            substitute: bool = True, kernels: bool = False, timeout: float | None = None) -> Outcome:
        """Call the student's ``qualname`` on copies of ``args``/``kwargs``.

        ``substitute``: the student's other contract functions are replaced by correct ones for
        the duration of the call. ``kernels``: also record aten kernels (slower; used when the
        function has forbidden operations). Raises ``StudentError``.
        """

    def call(self, qualname: str, *args, **kwargs) -> Any:
        return self.run(qualname, args, kwargs).value

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
