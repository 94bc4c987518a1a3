"""The grader's core, measured: a lab's CPU budget is stated for a standard core and stretched on
a slower one, so that no loop fails for the speed of the machine that grades it.

A budget in seconds of CPU is a fact about a machine, not about a training loop. The budgets
(``seqlab.labs.CPU_BUDGET_S``) were set on a core where the references trained in 1.2-2.7 s;
a later machine of the same kind ran the same references, in the same child, 2.7-3.7x slower,
and every reference lab was refused as over its budget. So the parent measures its own core
with a fixed workload shaped like the labs' (small tensors, a Python loop, autograd: the labs
are bound by per-operation dispatch, ~110,000 torch calls for the recall lab) and scales every
budget by how much slower than the standard core it is. The rule a student meets stays the one
the budget was set by: a loop may take 5.6-12.5x the reference's CPU (the lab's budget over its
reference's time, seqlab.labs.budget) on the machine that grades it, and never less than the
stated budget (a faster core does not shrink it).

The calibration runs in the trusted parent, in a thread started when a grading with labs is
collected, while the parent otherwise waits for its child; CPU time, per thread, as the kernel
counts it, is what is compared (on this 2-core machine it moved by under 5 % between one
process alone and two side by side). It is the fastest of a few short runs, the one least
disturbed, and it is measured once per process. The workload, the standard and the refusal's
words live in ``seqlab.labs.budget``, which the student release ships: a student's own lab
tests measure their core the same way.
"""

from __future__ import annotations

import threading

from .background import Background
from .budget import MAX_SLOWDOWN, RUNS, STANDARD_CALIBRATION_S, measure, slowdown_of, workload

__all__ = ["MAX_SLOWDOWN", "RUNS", "STANDARD_CALIBRATION_S", "calibration_s", "slowdown", "start", "workload"]

_measured: list[float] = []
_calibration: Background | None = None
_lock = threading.Lock()


def _calibrate() -> None:
    _measured.extend(measure(RUNS))


def start() -> None:
    """Measure the core in the background, once per process (a grading that will run labs
    calls this as it is collected)."""
    global _calibration
    with _lock:
        if _calibration is None:
            # On one intra-op thread, as in the graded child (seqlab.labs.background).
            _calibration = Background("seqlab-core-calibration", _calibrate)


def calibration_s() -> float:
    """The workload's CPU time on this core (the fastest run), measured first if need be."""
    start()
    assert _calibration is not None
    _calibration.join()
    return min(_measured)


def slowdown() -> float:
    """How many times slower than the standard core this one is: at least 1, at most MAX_SLOWDOWN."""
    return slowdown_of([calibration_s()])
