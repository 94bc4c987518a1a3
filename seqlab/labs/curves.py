"""The reference's whole training curve on a lab run's own inputs, for the report's loss figure.

The character lab's trajectory test runs the reference's training on the student's inputs
(``char_rnn.reference_run``), so its run carries the reference's losses. The task labs'
graders (recall, reverser, selective copy) replay only the first steps
(``seqlab.labs.replay``): their runs carried no reference curve, and the report drew the
student's curve alone. Here the same replay runs to the last step: the reference from the same
initial parameters and generator state, so the curve is the one the student's loop would have
drawn had it followed the protocol (its first steps are the replay the grader checks, exactly).

It is started only once the student's losses came back usable (nothing to draw otherwise: a
stub or a crash costs nothing), in a background thread of the parent
(``seqlab.labs.background``), and joined when the run is summarised for the reports, so it runs
while the parent waits for the next lab's child. What it costs: one reference training per task
lab, ``REFERENCE_CPU_S`` (2.3 + 2.4 + 2.7 = 7.4 s of CPU on the standard core per submission
whose three task labs train), counted apart from the lab's own parent time in the run's summary
(``reference_curve_cpu_s``).
"""

from __future__ import annotations

from typing import Any

from .background import Background


class ReferenceCurve:
    """The reference's losses over all of ``child_inputs["steps"]``, computed in the background."""

    def __init__(self, function: str, child_inputs: dict) -> None:
        self.function, self.child_inputs = function, child_inputs
        self.values: list[float] | None = None
        self.background = Background(f"seqlab-curve-{function}", self._compute)

    def _compute(self) -> None:
        from .replay import replay

        try:
            losses = replay(self.function, self.child_inputs, int(self.child_inputs["steps"]))
            self.values = [float(v) for v in losses]
        except Exception:  # a figure without its reference curve, never a grading stopped by one
            self.values = None

    def losses(self) -> list[float] | None:
        """The curve (None when the reference's run failed), once the thread is done."""
        self.background.join()
        return self.values

    @property
    def cpu_s(self) -> float:
        return self.background.cpu_s


def start(function: str, task: Any, child_inputs: dict) -> ReferenceCurve | None:
    """The reference curve of a task lab's run, started now; None for a lab whose own grading
    already runs the reference's training (``reference_run``: the run keeps those losses)."""
    if hasattr(task, "reference_run"):
        return None
    return ReferenceCurve(function, child_inputs)
