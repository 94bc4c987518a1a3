"""Recorded grades of the test banks: the same submissions graded with the same seed must give
the same results.json, test by test, whatever the graders' code looks like.

``tests/recorded/<bank>.json`` maps each bank submission (a known-wrong variant, an alternative,
an attack, a probe pack) to the part of its Gradescope results.json that is the grade: the total
and every test's name, score, max_score and status. Feedback text is left out on purpose: a
grader may word a message better without changing a grade, but any change to a test's name or
points is a regrade that must be decided, not slipped in by a refactor.

To record (only after deciding that a grade change is right, and saying so in the commit):
``SEQLAB_RECORD=1 .venv/bin/python -m pytest tests/test_graders_mutants.py tests/test_attacks.py``.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from functools import cache
from pathlib import Path

from seqlab.reports.gradescope import to_gradescope
from seqlab.results import GradingResult

RECORDED = Path(__file__).resolve().parent / "recorded"


def grade_of(result: GradingResult, **context) -> dict:
    report = to_gradescope(result)
    return {
        **context,
        "score": report["score"],
        "max_score": report["max_score"],
        "tests": [[t["name"], t["score"], t["max_score"], t["status"]] for t in report["tests"]],
    }


@cache
def _recorded(bank: str) -> dict:
    path = RECORDED / f"{bank}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _record(bank: str, key: str, grade: dict) -> None:
    """Read-modify-write under a lock: pytest-xdist workers record into the same file."""
    RECORDED.mkdir(exist_ok=True)
    path = RECORDED / f"{bank}.json"
    with open(Path(tempfile.gettempdir()) / f"seqlab-recorded-{bank}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entries = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        entries[key] = grade
        path.write_text(
            json.dumps(dict(sorted(entries.items())), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )


def assert_same_grade(bank: str, key: str, result: GradingResult, **context) -> None:
    """``result`` gives the recorded grade of ``key`` (``context``: how it was graded, e.g. the
    sandbox; a grading under another context is not compared)."""
    grade = grade_of(result, **context)
    if os.environ.get("SEQLAB_RECORD"):
        _record(bank, key, grade)
        return
    recorded = _recorded(bank).get(key)
    assert recorded is not None, f"no recorded grade for {key!r} in tests/recorded/{bank}.json (see tests/_recorded.py)"
    if any(recorded.get(k) != v for k, v in context.items()):
        return
    if grade != recorded:
        now = {t[0]: t[1:] for t in grade["tests"]}
        before = {t[0]: t[1:] for t in recorded["tests"]}
        changed = [
            f"{name}: recorded {before.get(name)}, now {now.get(name)}"
            for name in sorted(set(now) | set(before))
            if now.get(name) != before.get(name)
        ]
        raise AssertionError(
            f"{key}: the grade differs from tests/recorded/{bank}.json (score {recorded['score']} -> {grade['score']}):\n  "
            + "\n  ".join(changed[:20])
        )
