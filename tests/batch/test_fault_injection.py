"""The fault-injection bank of grade-all: generated bad hand-ins (corrupt and
truncated zips, member names in several encodings with and without the UTF-8 flag, links and
FIFOs, deep trees, huge and sparse files, zip bombs, nested zips, names that collide with
grade-all's outputs or with the honest students) mixed into a class of honest ones.

Every time: every honest student is read (and, in the full runs, graded with full marks and
recorded), every hand-in has a row of its own under a name no other has, every bad one that
could not be read is named with a reason any file or terminal takes, and nothing raises.

Grading is the costly part, so most generated classes go through the reading stage
(``hand_ins`` and ``discover``, what grade-all runs before any grading) and the whole class loop
with a stand-in for the grading process; the full grade-all, real grading included, runs on
fewer, larger classes. The small versions run in ``make test``; the bank (1,000+ generated bad
hand-ins) in ``make test-banks``."""

from __future__ import annotations

import csv
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from tests.batch._faults import HONEST, HONEST_FILES, ONLY, classes, remove, write_class

# No example database (no writes into the tree), no deadline (the machine is shared), and the
# health checks that object to large inputs or to capsys off.
GENERATED = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\+[0-9a-f]{12,64})?")
OUTPUTS = {"gradebook.csv", "gradebook.csv.tmp", "class_report.html", "class_report.md", "lms", "_submissions"}
SEEN = {"bad": 0}  # how many bad hand-ins this process generated (the bank's report)


@pytest.fixture(scope="module", autouse=True)
def _count(request):
    """Says, in pytest's own report, how many bad hand-ins the module generated."""
    yield
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if SEEN["bad"] and capture is not None:
        with capture.global_and_fixture_disabled():
            print(f"\nfault injection: {SEEN['bad']} generated bad hand-ins")


def _printable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text)


def _work():
    return Path(tempfile.mkdtemp(prefix="seqlab-faults-"))


def _check_names(klass: Path):
    """The hand-ins of ``klass`` as grade-all names them: each once, none lost, no two names alike
    up to case, none a file grade-all writes, every skipped entry printable."""
    from seqlab.batch import hand_ins
    from seqlab.submission import is_submission

    found = hand_ins(klass)
    entries = sorted(os.fsencode(e) for e in klass.iterdir() if is_submission(e))
    assert sorted(os.fsencode(p) for p in found.named.values()) == entries
    names = list(found.named)
    assert len({n.casefold() for n in names}) == len(names)
    for name in names:
        assert NAME.fullmatch(name) and name.casefold() not in OUTPUTS, name
    for entry, why in found.skipped:
        assert _printable(entry) and _printable(why)
    return found


def _check_rows(rows: list[dict], found, honest: dict[str, Path], out: Path) -> None:
    """One row per hand-in in gradebook.csv; the honest ones read as handed in (the copies grade-all
    grades); every row not graded with a reason any file or terminal takes."""
    from seqlab.batch import WORK_DIR

    assert [r["submission"] for r in rows] == list(found.named)
    book = _gradebook(out)
    assert set(book) == set(found.named) and (out / "class_report.html").is_file()
    honest_names = [n for n, p in found.named.items() if p in honest.values()]
    assert len(honest_names) == len(HONEST)
    for name in honest_names:
        for module, data in HONEST_FILES.items():
            assert (out / WORK_DIR / name / "exercises" / module).read_bytes() == data
    for row in rows:
        assert row["status"] in ("graded", "error"), row
        if row["status"] == "error":
            assert row["reason"] and _printable(row["reason"]) and book[row["submission"]]["reason"], row


def _settings():
    from seqlab.grading import grading_settings
    from seqlab.student.sandbox import Sandbox

    return grading_settings(seed=1, only=ONLY, sandbox=Sandbox("none", "the fault-injection bank"))


def _gradebook(out: Path) -> dict[str, dict]:
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as handle:
        return {row["submission"]: row for row in csv.DictReader(handle)}


class _StandIn:
    """A grading process that grades nothing: the class loop's bookkeeping without the cost."""

    def grade(self, job, timeout):
        return {"status": "error", "reason": "not graded: a stand-in for the grading process"}

    def stop(self):
        pass


def _check_reading(bad, capsys, monkeypatch) -> None:
    """The whole class loop, grading stood in for: reading, naming, rows, gradebook, records."""
    import seqlab.batch as batch

    SEEN["bad"] += len(bad)
    work = _work()
    try:
        klass, out = work / "class", work / "out"
        honest = write_class(klass, bad)
        found = _check_names(klass)
        monkeypatch.setattr(batch, "_Worker", _StandIn)
        recorded = []
        rows = batch.grade_all(klass, out, _settings(), record=recorded.append)
        assert recorded == [rows] and "Traceback" not in capsys.readouterr().err
        _check_rows(rows, found, honest, out)
    finally:
        remove(work)


def _check_grade_all(bad, capsys) -> None:
    """The full grade-all: the honest graded with full marks and recorded, the bad named."""
    from seqlab.batch import ClassRun, grade_all

    SEEN["bad"] += len(bad)
    work = _work()
    try:
        klass, out = work / "class", work / "out"
        honest = write_class(klass, bad)
        found = _check_names(klass)
        recorded = []
        rows = grade_all(klass, out, _settings(), ClassRun(jobs=2, timeout=300), record=recorded.append)
        assert recorded == [rows] and "Traceback" not in capsys.readouterr().err
        _check_rows(rows, found, honest, out)
        book = _gradebook(out)
        for name, path in found.named.items():
            if path in honest.values():
                row = rows[list(found.named).index(name)]
                assert row["status"] == "graded" and row["result"].percent == 100.0, row
                assert book[name]["status"] == "graded" and book[name]["percent"] == "100.0"
    finally:
        remove(work)


# --- in make test: a few seconds ---------------------------------------------------------------


@settings(GENERATED, max_examples=5)
@given(bad=classes(1, 3, cheap=True))
def test_generated_bad_hand_ins_cost_no_one_else(bad, capsys, monkeypatch):
    _check_reading(bad, capsys, monkeypatch)


# --- the bank: make test-banks -----------------------------------------------------------------


@pytest.mark.bank
@pytest.mark.slow
@settings(GENERATED, max_examples=300)
@given(bad=classes(3, 6))
def test_bank_reading_stage_and_class_loop(bad, capsys, monkeypatch):
    """At least 900 generated bad hand-ins (300 classes of 3 to 6) through the reading stage and
    the class loop."""
    _check_reading(bad, capsys, monkeypatch)


@pytest.mark.bank
@pytest.mark.slow
@settings(GENERATED, max_examples=10, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(bad=classes(25, 50))
def test_bank_full_grade_all(bad, capsys):
    """At least 250 generated bad hand-ins (10 classes of 25 to 50) through the whole grade-all,
    the honest graded for real."""
    _check_grade_all(bad, capsys)
