"""What a lab's run gives the graders and the reports: the two graded tests every task lab
(recall, reverser, selective copy) has, written once, and the run as plain data."""

from __future__ import annotations

from typing import Any

import torch

from . import lab_of
from .replay import FIRST_STEPS

# The title starts as it did when only the first three steps were compared: grading_config.yaml
# weighs the test by that pattern ("the first 3 steps follow the protocol*").
FIRST_STEPS_TITLE = (
    f"the first {FIRST_STEPS} steps follow the protocol, and every later step too "
    "(their losses against a replay of the whole run from the same inputs)"
)


def summary(run: Any) -> dict:
    """The run as plain data for the reports: what the figures are drawn from (no parameters)."""
    out: dict = {"seed": run.seed, "metrics": dict(run.metrics), "cpu_s": run.cpu_s}
    lab = lab_of(run.function)
    if lab is not None:
        out["bounds"] = lab.thresholds()
    out.update(parent_cpu_s=run.parent_cpu_s, budget_s=run.budget_s)
    if run.losses is not None:
        out["losses"] = [float(v) for v in run.losses.detach().to(torch.float64)]
    reference = run.reference_losses
    if reference is None and run.curve is not None:
        reference, out["reference_curve_cpu_s"] = run.curve.losses(), run.curve.cpu_s
    elif reference is not None and run.ahead is not None and run.ahead.replayed is not None:
        out["reference_curve_cpu_s"] = run.ahead.cpu_s  # the protocol's replay is the curve
    if reference is not None:
        out["reference_losses"] = list(reference)
    if run.failure is not None:
        out["failure"] = run.failure.message
    return out


def task_lab_tests(function: str, metric: str, title: str) -> dict[str, Any]:
    """The two graded tests of a task lab (recall, reverser, selective copy), by their names
    ``test_<lab>_heldout`` and ``test_<lab>_first_steps``: ``metric`` on the held-out data at
    least its bound (``title``, to which the bound is added from the task's THRESHOLDS, its one
    place), and every step's loss against the protocol's replay (``LabSession.check_first_steps``;
    the name is the one the reports and recorded grades know, from when only the first three
    steps were compared). The held-out test counts only a run that passes the second. Every task lab's grader has the
    same two, so they are written here once and a grader takes them with
    ``globals().update(task_lab_tests(...))``; the markers are what ``@grades`` would write."""
    import pytest

    lab_name = function.split(".", 1)[1]
    lab = lab_of(function)
    assert lab is not None, f"{function} is not a lab"
    title = f"{title} ({metric.replace('_', ' ')} >= {lab.module().THRESHOLDS[metric]:g})"

    def heldout(lab: Any) -> None:
        lab.check_metrics(metric)

    def first_steps(lab: Any) -> None:
        lab.check_first_steps()

    tests = {"heldout": (heldout, title), "first_steps": (first_steps, FIRST_STEPS_TITLE)}
    found: dict[str, Any] = {}
    for part, (test, test_title) in tests.items():
        test.__name__ = test.__qualname__ = f"test_{lab_name}_{part}"
        found[test.__name__] = pytest.mark.grades(function, title=test_title)(test)
    return found
