"""linear_scan's complexity rule (graders/test_selective_scan.py): the sizes it times at, fresh
inputs every round, a ping that runs no student code, CPU time read from /proc, and the verdicts
on honest scans and on loops (the loops are in the attack bank too: tests/student/test_attacks.py).
"""

from __future__ import annotations

import importlib.util
import textwrap
import time
import warnings

import pytest
import torch

from seqlab.config import load_config
from seqlab.grading import grade_submission, grading_settings
from seqlab.grading.case import Make
from seqlab.reference import load_reference
from seqlab.student import StudentError, open_submission
from seqlab.student.guards import OpRecorder
from seqlab.student.sandbox import resolve as resolve_sandbox
from seqlab.subset import read_modules
from tests.attacks import ATTACKS, Attack, build
from tests.attacks.scan_variants import HONEST, LOOPS
from tests.mutants import ROOT, make_submission


def _grader():
    spec = importlib.util.spec_from_file_location("_seqlab_scan_grader", ROOT / "graders" / "test_selective_scan.py")
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)  # @grades: the graders' own marker
        spec.loader.exec_module(module)
    return module


GRADER = _grader()
REFERENCE = load_reference()("selective_scan.linear_scan")


def _make(seed: int = 0) -> Make:
    return Make(torch.Generator().manual_seed(seed), torch.device("cpu"))


def _function(prelude: str, source: str):
    namespace = {"torch": torch}
    exec(prelude + "\n" + source, namespace)
    return namespace["linear_scan"]


def _least_cpu(fn, args, times: int = 3) -> float:
    best = float("inf")
    for _ in range(times):
        started = time.thread_time()
        with OpRecorder():
            fn(*args)
        best = min(best, time.thread_time() - started)
    return best


def test_the_timing_input_puts_loops_above_the_limit_and_scans_below():
    """The sizes' reason, measured here in one thread (the child adds its codec's work to every
    student call, ~2.5 reference times, on top): the fastest loops we know of, over Python floats
    and over numpy vectors, cost far more than MAX_SLOWDOWN reference scans; the slowest honest
    scan (Hillis-Steele, O(T log T) work) far less."""
    torch.set_num_threads(1)
    _, args = GRADER.timing_inputs(_make())
    numpy_loop = next(a for a in ATTACKS if a.name == "numpy-loop-in-linear-scan")
    contenders = {
        "floats": _function(*LOOPS["loop-over-python-floats"]),
        "numpy": _function("import numpy as np\n", numpy_loop.source),
        "hillis-steele": _function(*HONEST["hillis-steele"]),
    }
    reference = min(_least_cpu(REFERENCE, args), _least_cpu(REFERENCE, args))
    ratios = {name: _least_cpu(fn, args, 2) / reference for name, fn in contenders.items()}
    assert ratios["floats"] > 1.3 * GRADER.MAX_SLOWDOWN and ratios["numpy"] > 1.3 * GRADER.MAX_SLOWDOWN, ratios
    assert ratios["hillis-steele"] < GRADER.MAX_SLOWDOWN / 1.3, ratios


class _RecordingStudent:
    """Stands in for the runner: the reference answers, every call's name and arguments are kept."""

    def __init__(self):
        self.calls, self.load_errors = [], {}

    def cpu_clock(self):
        return self, time.process_time()

    def run(self, name, args, kwargs, *, timeout=None, kernels=False):
        from seqlab.student import Outcome

        self.calls.append((name, args))
        if name != "selective_scan.linear_scan":
            raise StudentError("missing", f"no function {name}")
        return Outcome(REFERENCE(*args), args, {})


class _Grade:
    function = "selective_scan.linear_scan"

    def __init__(self):
        self.student = _RecordingStudent()

    def ref(self, *args):
        return REFERENCE(*args)

    def check(self, *, value, expected, case):
        assert torch.equal(value, expected), case


def test_every_round_draws_fresh_inputs_and_pings_with_them():
    grade = _Grade()
    measured = GRADER.measure_slowdown(grade, _make())
    calls = grade.student.calls
    # The recorded student is the reference itself: clearly log-depth, so the rounds stop early.
    assert [name for name, _ in calls] == [GRADER.PING, grade.function] * GRADER.EARLY_ROUNDS
    assert not GRADER.PING.split(".", 1)[1].isidentifier()
    inputs = [args for name, args in calls if name == grade.function]
    for i, args in enumerate(inputs):
        assert calls[2 * i][1] is args, "the ping carries the round's own arguments"
        assert tuple(args[0].shape) == GRADER.TIMING_SHAPE and args[0].dtype == GRADER.TIMING_DTYPE
        assert all(not torch.equal(args[0], other[0]) for other in inputs[:i]), "a round reused an input"
    assert measured["clock"] == "cpu" and measured["slowdown"] < GRADER.MAX_SLOWDOWN


class _SlowStudent(_RecordingStudent):
    """The reference's answers at a cost of a second of CPU each, as a loop would charge."""

    burnt = 0.0

    def cpu_clock(self):
        return self, time.process_time() + self.burnt

    def run(self, name, args, kwargs, **options):
        self.burnt += 1.0 if name == "selective_scan.linear_scan" else 0.0
        return super().run(name, args, kwargs, **options)


def test_a_slow_scan_is_measured_every_round():
    grade = _Grade()
    grade.student = _SlowStudent()
    measured = GRADER.measure_slowdown(grade, _make())
    assert [name for name, _ in grade.student.calls] == [GRADER.PING, grade.function] * GRADER.TIMING_ROUNDS
    assert measured["slowdown"] > GRADER.MAX_SLOWDOWN


def test_the_ping_runs_no_module_getattr_and_the_childs_cpu_is_read(tmp_path, sandbox_mode, monkeypatch):
    """A module-level __getattr__ that sleeps: the ping is answered at once, and a name only that
    __getattr__ would give is missing. The CPU time read from /proc grows by about what the call
    took, for a forked child and for one started alone."""
    submission = make_submission(tmp_path / "s")
    path = submission / "exercises" / "selective_scan.py"
    path.write_text(
        path.read_text()
        + textwrap.dedent("""
        def __getattr__(name):
            import time
            time.sleep(5)
            return linear_scan
        """)
    )
    _, args = GRADER.timing_inputs(_make())
    box = resolve_sandbox(sandbox_mode)
    for forked in ("1", "0"):
        monkeypatch.setenv("SEQLAB_FORKSERVER", forked)
        # a module-level __getattr__ is outside the language subset: run as plain Python here, the
        # ping must not run it even where the subset is switched off
        texts = read_modules(submission / "exercises", subset=False)
        with open_submission(
            submission, load_reference(), limits=load_config().limits, sandbox=box, texts=texts
        ) as student:
            assert not student.load_errors  # the child started and loaded: only the calls are timed
            for name in (GRADER.PING, "selective_scan.only_via_getattr"):
                started = time.perf_counter()
                with pytest.raises(StudentError) as raised:
                    student.run(name, args, {})
                assert raised.value.kind == "missing" and time.perf_counter() - started < 2.5, name
            before, started = student.cpu_clock(), time.perf_counter()
            student.run("selective_scan.linear_scan", args, {})
            wall, after = time.perf_counter() - started, student.cpu_clock()
            assert after[0] is before[0]
            assert 0.001 < after[1] - before[1] < wall + 0.05, (after[1] - before[1], wall)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_scans_keep_the_complexity_points(tmp_path, name, sandbox_mode):
    prelude, source = HONEST[name]
    attack = Attack(name, "selective_scan.linear_scan", source, prelude=prelude, expect="full")
    submission = build(attack, tmp_path) if source else make_submission(tmp_path / name)
    result = grade_submission(
        submission, grading_settings(seed=5, only="selective_scan.linear_scan", sandbox=sandbox_mode)
    )
    assert result.score == result.max_score, [t.output for t in result.tests if t.score < t.max_score]
