"""The parent's share of a lab that needs only its task instance, computed while the child trains."""

from __future__ import annotations

from typing import Any

import torch

from .background import Background
from .replay import protocol_run


class Ahead:
    """The parent's share of a lab that needs only the task instance, computed on the other core
    while the child trains (``seqlab.labs.background``): the reference's own run on the same
    inputs, where the lab has one (the character lab: 1.7 s of this machine's CPU, cached by the
    task), or else the protocol's replay of the whole run (``replayed``, every step of which the
    lab checks, and the report's reference curve) and the reference's own float32 drift from it
    (``drift``, what widens the check's tolerance where rounding differences grow). Without it the parent computed these after the
    child returned, and the labs added 5 % more wall time than their CPU. Its CPU (``cpu_s``) is
    counted into the lab's parent time."""

    def __init__(self, function: str, task: Any, child_inputs: dict) -> None:
        self.function, self.task, self.child_inputs = function, task, child_inputs
        self.replayed: torch.Tensor | None = None
        self.drift: torch.Tensor | None = None
        self.background = Background(f"seqlab-ahead-{function}", self._compute)

    def _compute(self) -> None:
        try:
            if hasattr(self.task, "reference_run"):
                self.task.reference_run(self.child_inputs)
            else:
                self.replayed, self.drift = protocol_run(self.function, self.child_inputs)
        except Exception:  # the main thread computes it again, and reports what fails
            self.replayed = None

    @property
    def cpu_s(self) -> float:
        return self.background.cpu_s

    def join(self) -> Ahead:
        self.background.join()
        return self
