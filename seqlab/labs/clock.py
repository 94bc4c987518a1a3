"""The grader's core, measured: a lab's CPU budget is stated for a standard core and stretched on
a slower one, so that no loop fails for the speed of the machine that grades it.

A budget in seconds of CPU is a fact about a machine, not about a training loop. The budgets
(``seqlab.labs.CPU_BUDGET_S``) were set on a core where the references trained in 1.2-2.7 s;
a later machine of the same kind ran the same references, in the same child, 2.7-3.7x slower,
and every reference lab was refused as over its budget. So the parent measures its own core
with a fixed workload shaped like the labs' (small tensors, a Python loop, autograd: the labs
are bound by per-operation dispatch, ~110,000 torch calls for the recall lab) and scales every
budget by how much slower than the standard core it is. The rule a student meets stays the one
the budget was set by: a loop may take about twice the reference's CPU on the machine that
grades it, and never less than the stated budget (a faster core does not shrink it).

The calibration runs in the trusted parent, in a thread started when a grading with labs is
collected, while the parent otherwise waits for its child; CPU time, per thread, as the kernel
counts it, is what is compared (on this 2-core machine it moved by under 5 % between one
process alone and two side by side). It is the fastest of a few short runs, the one least
disturbed, and it is measured once per process.
"""

from __future__ import annotations

import threading
import time

from .background import Background

# The workload's CPU time on the standard core. In a grading on a machine where the references
# trained 3.3x as long as on the core the budgets were set on (the median of the four labs'
# ratios, 2.7-3.7), it took 0.077 s (the fastest of 3): so the standard is 0.077 / 3.3.
STANDARD_CALIBRATION_S = 0.023
# A workload run is ~0.08 s there: long against the clock's resolution, short against a grading.
RUNS = 3
# Above this the machine, not the loop, is the problem: the budget stops stretching (a child
# cannot slow the parent's thread down by much through shared caches, but the bound says how much
# it could gain if it did).
MAX_SLOWDOWN = 6.0

_measured: list[float] = []
_calibration: Background | None = None
_lock = threading.Lock()


def workload() -> None:
    """A fixed stand-in for a lab's training: an RNN of 32 units over 10 steps on 8 sequences,
    its gradient by autograd and a plain update, 40 times (~4,000 torch calls)."""
    import torch

    generator = torch.Generator().manual_seed(0)
    weights = (0.1 * torch.randn(32, 32, generator=generator, dtype=torch.float64)).requires_grad_(True)
    inputs = torch.randn(10, 8, 32, generator=generator, dtype=torch.float64)
    for _ in range(40):
        state = torch.zeros(8, 32, dtype=torch.float64)
        for x_t in inputs:
            state = torch.tanh(x_t @ weights + state @ weights.T)
        (grad,) = torch.autograd.grad((state * state).mean(), weights)
        weights = (weights - 0.01 * grad).detach().requires_grad_(True)


def _calibrate() -> None:
    for _ in range(RUNS):
        started = time.thread_time()
        workload()
        _measured.append(time.thread_time() - started)


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
    return min(MAX_SLOWDOWN, max(1.0, calibration_s() / STANDARD_CALIBRATION_S))
