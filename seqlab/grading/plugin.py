"""The pytest plugin that runs the hidden graders and records what each test earned.

Graders are plain pytest modules; this plugin hands them their fixtures (through
graders/conftest.py) and reads each test's outcome from pytest's own reports: no output is
parsed. A test's metadata is data in its marker, read at collection::

    @grades("optimizers.adam", title="matches torch.optim.Adam, 5 steps", weight=2, visibility="hidden")

``title`` names the test in every report (a parametrized test adds ``[its id]``); ``weight``
is its share of the function's points (default 1); ``visibility`` is when Gradescope shows it
(default: the function's, from the config); ``complexity=True`` marks the test that takes the
function's ``complexity_points``.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from ..config import VISIBILITIES
from ..contract import LABS, SIGNATURES
from ..seeds import derive_seed

MARKER_KEYS = {"title", "weight", "visibility", "complexity"}


@dataclass
class TestRecord:
    nodeid: str
    function: str
    title: str
    weight: float
    complexity: bool
    visibility: str = ""  # the marker's; empty: the function's visibility from the config
    passed: bool = False
    fraction: float | None = None
    message: str = ""
    hint: str = ""
    rule: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    grader_error: bool = False


def derived_seed(seed: int, nodeid: str) -> int:
    """Each test's inputs depend on the run's seed and the test alone (not on order or --only)."""
    return derive_seed(seed, nodeid, nbytes=8) & ((1 << 63) - 1)


def marker_problem(marker: pytest.Mark) -> str | None:
    """What is wrong with a ``@grades`` marker's data, or None."""
    if len(marker.args) != 1 or not isinstance(marker.args[0], str):
        return "@grades takes one positional argument, the contract function ('module.function')"
    if marker.args[0] not in SIGNATURES:
        return f"@grades: {marker.args[0]!r} is not a contract function (seqlab/contract.py)"
    unknown = set(marker.kwargs) - MARKER_KEYS
    if unknown:
        return f"@grades: unknown keyword(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(MARKER_KEYS))})"
    title = marker.kwargs.get("title")
    if not isinstance(title, str) or not title.strip():
        return "@grades needs title='what the test checks' (the name every report shows)"
    weight = marker.kwargs.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight > 0:
        return f"@grades: weight must be a positive number, got {weight!r}"
    if marker.kwargs.get("visibility", "visible") not in VISIBILITIES:
        return f"@grades: visibility must be one of {', '.join(VISIBILITIES)}, got {marker.kwargs['visibility']!r}"
    return None


def _title(item: pytest.Item, marker: pytest.Mark) -> str:
    title: str = marker.kwargs["title"].strip()
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.id:
        title += f" [{callspec.id}]"
    return title


class SeqlabPlugin:
    def __init__(
        self,
        *,
        student: Any,
        reference: Any,
        config: Any,
        device: str,
        seed: int,
        only: str | None = None,
        labs: bool = True,
    ) -> None:
        self.student, self.reference, self.config = student, reference, config
        self.device, self.seed, self.only, self.labs = device, seed, only, labs
        self.records: dict[str, TestRecord] = {}
        self.collection_errors: list[str] = []
        self.lab_runs: dict[str, Any] = {}  # function -> seqlab.labs.session.LabRun, one training per grading
        self.rewrite_spent: dict[str, int] = {}  # function -> searches for a name made (Grade.rewrite_spent)
        self.__name__ = "seqlab"  # the name pluggy registers it under; graders/conftest.py looks it up

    # -- collection --------------------------------------------------------------------------
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        keep, drop = [], []
        for item in items:
            marker = item.get_closest_marker("grades")
            if marker is None:
                self.collection_errors.append(f"{item.nodeid}: grader test without @grades marker (not scored)")
                drop.append(item)
                continue
            problem = marker_problem(marker)
            if problem:
                self.collection_errors.append(f"{item.nodeid}: {problem} (not scored)")
                drop.append(item)
                continue
            function = marker.args[0]
            if not self.labs and function in LABS:
                drop.append(item)
                continue
            if self.only and not any(
                fnmatch.fnmatchcase(function, p.strip()) or function.startswith(p.strip() + ".")
                for p in self.only.split(",")
            ):
                drop.append(item)
                continue
            title = _title(item, marker)
            if any(r.function == function and r.title == title for r in self.records.values()):
                # The name "function: title" keys the test in every report and in the recorded grades.
                self.collection_errors.append(f"{item.nodeid}: another test of {function} is titled {title!r}")
            self.records[item.nodeid] = TestRecord(
                item.nodeid,
                function,
                title,
                float(marker.kwargs.get("weight", 1.0)),
                bool(marker.kwargs.get("complexity", False)),
                marker.kwargs.get("visibility", ""),
            )
            keep.append(item)
        # A lab runs the student's own functions and its feedback names those that failed their
        # own tests, so every other test runs first (stable: each file keeps its order).
        keep.sort(key=lambda item: self.records[item.nodeid].function in LABS)
        items[:] = keep
        if drop:
            config.hook.pytest_deselected(items=drop)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """The labs' budgets need this core's speed: it is measured while the exercises run
        (not when the graders are only collected: `seqlab config` imports no torch)."""
        if not session.config.option.collectonly and any(
            self.records[item.nodeid].function in LABS for item in session.items if item.nodeid in self.records
        ):
            from ..labs import clock

            clock.start()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: grader failed to load: {report.longreprtext[-800:]}")

    # -- outcomes ----------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
        """Record the outcome, and build pytest's report ourselves: its default one renders a
        long traceback with source and tensor reprs for every failure (5 s for a class of
        failures), and nothing here reads it."""
        excinfo = call.excinfo
        outcome: Literal["passed", "failed", "skipped"]
        longrepr: str | tuple[str, int, str] | None
        if excinfo is None:
            outcome, longrepr = "passed", None
        elif isinstance(excinfo.value, pytest.skip.Exception):
            outcome, longrepr = "skipped", (str(item.path), 0, str(excinfo.value))
        else:
            outcome, longrepr = "failed", f"{type(excinfo.value).__name__}: {str(excinfo.value)[:500]}"
        self._record(item, call, outcome)
        assert call.when != "collect"  # pytest makes reports of collection elsewhere
        return pytest.TestReport(
            item.nodeid,
            item.location,
            dict.fromkeys(item.keywords, 1),
            outcome,
            longrepr,
            call.when,
            duration=call.duration,
            start=call.start,
            stop=call.stop,
        )

    def _record(self, item: pytest.Item, call: pytest.CallInfo[None], outcome: str) -> None:
        record = self.records.get(item.nodeid)
        if record is None or call.when not in ("setup", "call"):
            return
        if call.when == "setup" and outcome == "passed":
            return
        if outcome == "skipped":
            assert call.excinfo is not None  # a skip is raised
            record.message = f"skipped: {call.excinfo.value}"
            record.rule = "skipped"
            return
        grade = item.funcargs.get("grade") if hasattr(item, "funcargs") else None
        if grade is not None and grade.sizes:
            record.details["sizes"] = dict(grade.sizes)
        if outcome == "passed":
            record.passed = True
            if grade is not None and grade.fraction is not None:
                record.fraction = grade.fraction
                record.message = "; ".join(grade.notes)
            return
        # Imported here, not at the top: the checks bring torch, and collecting the graders
        # (`seqlab config`) must not pay for it; a test that ran has loaded them already.
        from .checks import GradeFailure, NotGradable, Voided

        assert call.excinfo is not None  # not passed, not skipped: it raised
        exc = call.excinfo.value
        if isinstance(exc, GradeFailure):
            record.message, record.hint, record.rule = exc.message, exc.hint, exc.rule
            record.details = {**record.details, **exc.details}
            if isinstance(exc, Voided):
                record.rule = "forbidden"
            elif isinstance(exc, NotGradable):
                record.rule = record.rule or "no value"
            if grade is not None and grade.fraction is not None and not isinstance(exc, (Voided, NotGradable)):
                record.fraction = grade.fraction
        elif isinstance(exc, AssertionError):
            record.message = str(exc) or "assertion failed"
        else:
            record.grader_error = True
            record.message = (
                f"internal grader error ({type(exc).__name__}: {exc}); this is not your fault, tell your instructor"
            )

    # -- fixtures reach the run through this object ------------------------------------------
    def test_seed(self, nodeid: str) -> int:
        return derived_seed(self.seed, nodeid)
