"""A lab in a grading: one training call in the student's process, judged in the parent.

The graders' ``lab`` fixture is a ``LabSession``. Its first use in a grading draws the task
instance from the grading's seed, runs the student's function once on ``child_inputs`` under
the lab's limits, and keeps the outcome (``LabRun``) for every other test of the lab: the
held-out test, the protocol's test and the report's figures read the same run.

Limits. The budget is CPU time on a standard core, stretched on a slower one (``Lab.budget_s``,
seqlab.labs.clock), read from the kernel before and after the call (``StudentCode.cpu_clock``):
a run over it is not scored. A wall-clock limit (``Lab.wall_limit_s``) stops a hang, and the lab
scores what came back: nothing. Parameters must come back with the keys, shapes and dtype they
were sent with, finite, or every test of the lab fails with the reason.

The protocol. Every returned loss is compared with the protocol's replay of the whole run
(``_departure``), and the held-out result counts only for a run that follows it: parameters the
student's own loop did not train (pasted, or updated by another rule after a few honest steps)
earn nothing.

Feedback. A failed lab names the functions it runs that failed their own tests in the grading
(every other test runs before a lab's); failing that, the slip of the training loop the parent
sees (``seqlab.labs.slips``: it may probe the student's function for a few more steps), or
nothing when no evidence is specific enough.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import torch

from ..grading.checks import SHAPE_RULE, Grade, GradeFailure, NotGradable
from ..grading.compare import first_float_dtype, structure_problem, value_mismatch
from ..seeds import derive_seed
from ..student.callees import contract_signature
from ..student.updates import tensors, update_problem
from ..tolerance import Tolerance
from . import Lab, clock, curves
from .ahead import Ahead
from .budget import over_budget
from .curves import ReferenceCurve
from .differential import Candidate, diagnosis
from .figures import warm_up
from .graded import summary, task_lab_tests  # noqa: F401  (imported from here by the graders and run.py)
from .replay import FIRST_STEPS, departed, first_steps_hint, protocol_run
from .slips import Evidence, crash_hint, name_slip

RETURNS = ("params_out", "losses")
# The reference's trajectory and a correct one differ by float64 reassociation only, ~1e-13
# after 200 Adam steps (Adam divides by sqrt(v): a tiny gradient difference stays tiny); every
# protocol slip we know of moves some step's loss by more than 1e-3.
TRAJECTORY_TOL = Tolerance(rtol=1e-6, atol=1e-8)
MISTAKE_HORIZON = 20


@dataclass
class LabRun:
    function: str
    seed: int
    child_inputs: dict
    heldout: dict
    params: dict | None = None
    losses: torch.Tensor | None = None
    cpu_s: float | None = None  # the student's training, in the child
    budget_s: float | None = None  # the lab's CPU budget on this machine (Lab.budget_s)
    parent_cpu_s: float | None = None  # the evaluation and the replay (the reference's own runs)
    failure: GradeFailure | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    reference_losses: list[float] | None = None
    slip: str | None = None  # the named mistake of a run below its bounds ("": none seen)
    evidence: Evidence | None = None  # what it is named from (probes and replays run once)
    ahead: Ahead | None = None  # the parent's share computed while the child trains
    curve: ReferenceCurve | None = None  # the reference's whole curve, for the report (curves.py)
    departure: GradeFailure | None = None  # where the losses leave the protocol's replay, once
    updates: dict = field(default_factory=dict)  # the student's adam steps, as counted in the child
    checked: bool = False  # whether ``departure`` was computed


def lab_seed(grading_seed: int, function: str) -> int:
    """One task instance per grading and lab, shared by the lab's tests (not per test id)."""
    return derive_seed(grading_seed, "lab", function, nbytes=8) & ((1 << 63) - 1)


def returned_problem(params: Any, losses: Any, child_inputs: dict) -> str | None:
    """Why the returned parameters cannot be evaluated, or None."""
    sent = child_inputs["params"]
    problem = structure_problem(params, sent, "params_out")
    if problem:
        return problem
    bad = next((path for path, t in tensors(params) if not bool(torch.isfinite(t).all())), None)
    if bad:
        return f"{bad} holds NaN or infinite values"
    expected_losses = torch.zeros(child_inputs["steps"], dtype=first_float_dtype(sent) or torch.float64)
    return structure_problem(losses, expected_losses, "losses")


class LabSession:
    """The ``lab`` fixture: bound to one grading (its cache of runs) and one test's ``grade``."""

    def __init__(self, lab: Lab, grade: Grade, runs: dict, grading_seed: int, records: dict):
        self.lab, self.grade, self.runs, self.records = lab, grade, runs, records
        self.seed = lab_seed(grading_seed, lab.function)

    # -- the one run -------------------------------------------------------------------------
    def run(self) -> LabRun:
        if self.lab.function not in self.runs:
            self.runs[self.lab.function] = self._train()
        return self.runs[self.lab.function]

    def _train(self) -> LabRun:
        warm_up()  # while the child trains
        task = self.lab.module()
        child_inputs, heldout = task.draw_task(self.seed)
        run = LabRun(self.lab.function, self.seed, child_inputs, heldout)
        run.ahead = Ahead(self.lab.function, task, child_inputs)
        try:
            return self._trained(task, run)
        finally:
            if hasattr(task, "reference_run"):  # before any other use of the task's cached run
                run.ahead.join()

    def _trained(self, task: Any, run: LabRun) -> LabRun:
        child_inputs = run.child_inputs
        student = self.grade.student
        before = student.cpu_clock()
        self.grade.timeout, kernels = self.lab.wall_limit_s, self.grade.kernels
        self.grade.kernels = self.grade.kernels and self.lab.kernels
        try:
            outcome = self.grade.run(**child_inputs)
            params, losses = self.grade.unpack(outcome.value, RETURNS)
        except GradeFailure as failure:
            failure.hint = failure.hint or crash_hint(failure.message, self.lab.through)
            run.failure = failure
            return run
        finally:
            self.grade.timeout, self.grade.kernels = None, kernels
        after = student.cpu_clock()
        if before is not None and after is not None and before[0] is after[0]:
            run.cpu_s = after[1] - before[1]
        run.budget_s = self.lab.budget_s
        # The refusal's words are seqlab.labs.budget's, which the student's own lab tests use too.
        refusal = (
            None
            if run.cpu_s is None
            else over_budget(self.lab.function, run.cpu_s, self.lab.cpu_budget_s, clock.slowdown())
        )
        if refusal:
            run.failure = GradeFailure(refusal, rule="budget")
            return run
        problem = returned_problem(params, losses, child_inputs)
        if problem:
            run.failure = GradeFailure(f"{self.lab.function}: {problem}", rule=SHAPE_RULE)
            return run
        run.params, run.losses, run.updates = params, losses, outcome.updates
        assert run.ahead is not None  # set by _train
        replayed = run.ahead.join().replayed
        if replayed is not None:  # the whole run replayed: the report's curve too
            run.reference_losses = [float(v) for v in replayed]
        else:
            run.curve = curves.start(self.lab.function, task, child_inputs)
        started = time.thread_time()  # this thread's: the warm-up and calibration threads count apart
        run.metrics = dict(task.evaluate(params, child_inputs, run.heldout))
        run.parent_cpu_s = time.thread_time() - started + run.ahead.cpu_s
        return run

    def _ran(self) -> LabRun:
        run = self.run()
        if run.failure is not None:
            failure = run.failure
            kind = NotGradable if isinstance(failure, NotGradable) else GradeFailure
            culprits = self._culprits()  # named, they are the likely cause: no slip is named then
            hint = "" if culprits else failure.hint
            raise kind(failure.message + culprits, hint=hint, rule=failure.rule, details=failure.details)
        return run

    def _culprits(self) -> str:
        """The used functions that failed a test of their own in this grading, in words."""
        failed = []
        for name in self.lab.uses:
            own = [r for r in self.records.values() if r.function == name and r.rule != "skipped"]
            if any(not r.passed or (r.fraction is not None and r.fraction < 1) for r in own):
                failed.append(name)
        if not failed:
            return ""
        return f" (the lab runs your own {', '.join(failed)}, which failed tests of their own: fix those first)"

    def _slip(self, run: LabRun, behaviour: bool = True) -> str:
        """The named mistake of a run below its bounds (seqlab.labs.slips), its evidence gathered
        once per run; without ``behaviour``, on exact evidence and the replay's alone."""
        if run.evidence is None:
            args = (run.child_inputs, run.heldout, run.params, run.losses)
            run.evidence = Evidence(*args, probe=self._probe, function=self.lab.function)
        if not behaviour:
            return name_slip(getattr(self.lab.module(), "SLIPS", ()), run.evidence, behaviour=False)
        if run.slip is None:
            run.slip = name_slip(getattr(self.lab.module(), "SLIPS", ()), run.evidence)
        return run.slip

    def _probe(self, **overrides: Any) -> tuple[Any, Any] | None:
        """The student's function once more, on the task's inputs with ``overrides``, under the
        lab's limits; None when it fails (a probe only ever adds a name)."""
        run = self.run()
        self.grade.timeout, kernels = self.lab.wall_limit_s, self.grade.kernels
        self.grade.kernels = self.grade.kernels and self.lab.kernels
        try:
            value = self.grade.run(**{**run.child_inputs, **overrides}).value
            return self.grade.unpack(value, RETURNS)
        except GradeFailure:
            return None
        finally:
            self.grade.timeout, self.grade.kernels = None, kernels

    # -- the checks ----------------------------------------------------------------------------
    def check_metrics(self, *names: str) -> dict[str, float]:
        """Each metric at least its bound (the task's THRESHOLDS), on the held-out data."""
        run = self._ran()
        departure = self._departure(run)
        if departure is not None:
            raise GradeFailure(
                f"{self.lab.function}, held-out: not counted, the parameters returned are not the protocol's "
                f"training ({departure.message})",
                hint=departure.hint,
                rule="held-out",
                details={"metrics": run.metrics, "seed": run.seed},
            )
        thresholds = self.lab.module().THRESHOLDS
        for name in names:
            value, bound = run.metrics[name], thresholds[name]
            if not (math.isfinite(value) and value >= bound):
                shown = ", ".join(f"{self.lab.metric_names.get(k, k)} {v:.3f}" for k, v in run.metrics.items())
                culprits = self._culprits()
                raise GradeFailure(
                    f"{self.lab.function}, held-out ({self.lab.module().HELDOUT_WORDS}): "
                    f"{self.lab.metric_names.get(name, name)} is {value:.3f}, below {bound:g} ({shown})" + culprits,
                    hint="" if culprits else self._slip(run),
                    rule="held-out",
                    details={"metrics": run.metrics, "seed": run.seed},
                )
        return run.metrics

    def check_first_steps(self) -> None:
        """Every returned loss against the protocol's replay of the whole run from the same
        initial parameters and generator state (``_departure``)."""
        departure = self._departure(self._ran())
        if departure is not None:
            raise departure

    def _departure(self, run: LabRun) -> GradeFailure | None:
        """Where the run's losses leave the protocol: the replay of every step for a task lab
        (``seqlab.labs.replay.protocol_bounds``), the reference's trajectory for the character
        lab; computed once, for the protocol's test and for the held-out test, which counts only
        parameters the protocol's training gave (pasted weights, or a loop that follows the
        protocol for a few steps and then updates by another rule, learn nothing for the lab)."""
        if run.checked:
            return run.departure
        run.checked = True
        assert run.losses is not None  # _ran refuses a return without them
        task = self.lab.module()
        if hasattr(task, "reference_run"):
            _, expected = task.reference_run(run.child_inputs)
            if value_mismatch(run.losses, expected, TRAJECTORY_TOL, "losses") is None:
                run.departure = self._updates_departure(run)
            else:
                run.departure = GradeFailure(
                    f"{self.lab.function}: the losses depart from the protocol's trajectory (the trajectory test "
                    f"says where; the lab's seed {run.seed} draws the task again){self._culprits()}",
                    rule="trajectory",
                    details={"seed": run.seed},
                )
            return run.departure
        steps = int(run.child_inputs["steps"])
        ahead = run.ahead.join() if run.ahead is not None else None
        want, drift = (ahead.replayed, ahead.drift) if ahead is not None else (None, None)
        if want is None or want.numel() != steps:
            started = time.thread_time()
            want, drift = protocol_run(self.lab.function, run.child_inputs)
            run.parent_cpu_s = (run.parent_cpu_s or 0.0) + time.thread_time() - started  # the lab's own work too
        got = run.losses.detach().to(torch.float64).reshape(-1)
        off = departed(got, want, drift)
        if not bool(off.any()):
            run.departure = self._updates_departure(run)
            return run.departure
        step, shown = int(off.nonzero()[0, 0]), min(FIRST_STEPS, steps)
        culprits, counts = self._culprits(), task.loss_counts(run.child_inputs)
        slip, through = partial(self._slip, run), self.lab.through
        n = FIRST_STEPS if step < FIRST_STEPS else steps  # a departure at once: the first steps' hint as before
        hint = "" if culprits else first_steps_hint(got[:n], want[:n], off[:n], counts, task.BATCH_CALL, slip, through)
        first = " against ".join(", ".join(f"{v:.6g}" for v in t[:shown].tolist()) for t in (got, want))
        run.departure = GradeFailure(
            f"{self.lab.function}: losses[{step}] is {float(got[step]):.6g}; the protocol, replayed from the "
            f"same initial parameters and generator state (the lab's seed {run.seed} draws the task again), "
            f"gives {float(want[step]):.6g} ({int(off.sum())} of {steps} steps differ; losses[0:{shown}]: {first})"
            + culprits,
            hint=hint,
            rule="first-steps" if step < FIRST_STEPS else "trajectory",
            details={"first_step": step, "seed": run.seed, "steps_off": int(off.sum())},
        )
        return run.departure

    def _updates_departure(self, run: LabRun) -> GradeFailure | None:
        """The student's adam steps, counted in their process, against the labs' rule
        (seqlab.student.updates): a late swap inside a chaotic run's widened bounds is seen."""
        inputs = run.child_inputs
        lr = float(inputs.get("lr", contract_signature(self.lab.function).parameters["lr"].default))
        problem = update_problem(self.lab.function, run.updates, run.params, int(inputs["steps"]), lr)
        if problem is None:
            return None
        return GradeFailure(problem + self._culprits(), rule="updates", details={"seed": run.seed})

    def check_trajectory(self, mistakes=()) -> None:
        """The returned losses step by step against the reference's on the same inputs.
        ``mistakes``: ``(name, variant, explain)`` rows (or a function giving them), where
        ``variant(child_inputs, steps)`` is the trajectory of a known slip over ``steps`` steps."""
        run = self._ran()
        _, expected = self.lab.module().reference_run(run.child_inputs)
        run.reference_losses = [float(v) for v in expected.to(torch.float64)]
        if value_mismatch(run.losses, expected, TRAJECTORY_TOL, "losses") is None:
            moved = self._updates_departure(run)
            if moved is not None:
                raise moved
            return
        assert run.losses is not None  # value_mismatch reports a missing trajectory
        got, want = run.losses.detach().to(torch.float64), expected.to(torch.float64)
        off = ~((got - want).abs() <= TRAJECTORY_TOL.atol + TRAJECTORY_TOL.rtol * want.abs())
        step = int(off.nonzero()[0, 0])
        # A known slip (the grader's ``mistakes`` and the lab's catalogue, seqlab.labs.differential)
        # is named when its trajectory alone agrees with the student's from the start to
        # MISTAKE_HORIZON steps past the first departure: enough to tell the slips apart, and
        # a tenth of a full replay for the slips that show at once.
        rows = mistakes() if callable(mistakes) else mistakes

        def trajectory(variant: Any) -> Any:  # a row's variant, on this run's inputs
            return lambda steps: variant(run.child_inputs, steps)

        extra = [Candidate((n,), x, trajectory(v)) for n, v, x in rows]
        hint = diagnosis(self.lab.function, run.child_inputs, run.losses, MISTAKE_HORIZON, extra)
        raise GradeFailure(
            f"{self.lab.function}: the loss of step {step} is {float(got[step]):.6g}, the protocol gives "
            f"{float(want[step]):.6g} on the same inputs ({int(off.sum())} of {off.numel()} steps differ; the lab's "
            f"seed {run.seed} draws the task again)" + self._culprits(),
            hint=hint,
            rule="trajectory",
            details={"first_step": step, "seed": run.seed},
        )
