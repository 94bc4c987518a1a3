"""The parent's share of a lab that needs only its task instance, computed while the child trains."""

from __future__ import annotations

import threading
import time
from typing import Any

import torch

from .replay import FIRST_STEPS, replay


class Ahead:
    """The parent's share of a lab that needs only the task instance, computed on the other core
    while the child trains: the reference's own run on the same inputs, where the lab has one
    (the character lab: 1.7 s of this machine's CPU, cached by the task), or else the replay of
    the first steps. Without it the parent computed these after the child returned, and the
    labs added 5 % more wall time than their CPU. Its CPU is counted (per thread) into the
    lab's parent time; torch runs on one intra-op thread in it (OpenMP's setting is per
    thread), so its numbers are those of the main thread."""

    def __init__(self, function: str, task: Any, child_inputs: dict) -> None:
        self.function, self.task, self.child_inputs = function, task, child_inputs
        self.replayed: torch.Tensor | None = None
        self.cpu_s = 0.0
        self.thread = threading.Thread(target=self._compute, name=f"seqlab-ahead-{function}", daemon=True)
        self.thread.start()

    def _compute(self) -> None:
        torch.set_num_threads(1)
        started = time.thread_time()
        try:
            if hasattr(self.task, "reference_run"):
                self.task.reference_run(self.child_inputs)
            else:
                self.replayed = replay(
                    self.function, self.child_inputs, min(FIRST_STEPS, int(self.child_inputs["steps"]))
                )
        except Exception:  # the main thread computes it again, and reports what fails
            self.replayed = None
        self.cpu_s = time.thread_time() - started

    def join(self) -> Ahead:
        self.thread.join()
        return self
