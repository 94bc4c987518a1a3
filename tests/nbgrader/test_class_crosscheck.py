"""A whole class through `seqlab nbgrader autograde`, then `crosscheck` on every assignment.

Ten students hand in every topic's notebook (``_class.hand_in_class``: one answers everything from
solutions/, one hands in the stubs, eight a seeded mix of correct answers, known-wrong variants and
stubs). Autograde must record a grade for every student and function, full marks for the honest
student and zero for the stubs; crosscheck, which regrades each assignment's notebooks with the
student's other notebooks beside them (a lab trains with the student's own ``adam``), must find
no difference on any assignment. It once flagged honest students "train_char_rnn: nbgrader 8,
seqlab grade 0": it graded the rnn notebook alone, its lab training with a stub ``adam``.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from seqlab import contract
from seqlab.nbgrader.course import build_course
from seqlab.nbgrader.gradebook import function_scores
from tests.nbgrader._class import NBGRADER, SEQLAB, hand_in_class, run

STUDENTS = 10
CLASS_SEED = 7
COURSE_SEED = 20261207


def _failures(results: Path, qualname: str) -> list[str]:
    """The lost tests of ``qualname`` in a student's Gradescope-style results.json, with output."""
    tests = json.loads(results.read_text())["tests"]
    return [
        f"{t['name']}: {t['score']}/{t['max_score']} {t.get('output', '')[:800]}"
        for t in tests
        if t["name"].startswith(f"{qualname}:") and t["score"] < t["max_score"]
    ]


@pytest.mark.bank
@pytest.mark.slow
# Autograde of the class (about 3-4 minutes at load 12) and 70 crosscheck gradings, one isolated
# child each, labs included: 540 s in all at load 12, near the suite's 600 s for one test on the
# 2-core machine. About three times the measured total (docs/nbgrader.md) still stops a hang.
@pytest.mark.timeout(1800)
def test_a_class_of_ten_autograded_and_crosschecked_agrees(tmp_path, monkeypatch):
    from seqlab.config import load_config

    # The suite leaves the labs out of its gradings (tests/conftest.py); here they are the point:
    # without them crosscheck would agree by grading no lab on either side.
    monkeypatch.setenv("SEQLAB_LABS", "1")

    course = build_course(tmp_path / "course", seed=COURSE_SEED).course_dir
    run([NBGRADER, "generate_assignment", "*"], cwd=course)
    plan = hand_in_class(course, list(contract.MODULES), STUDENTS, CLASS_SEED)
    started = time.perf_counter()
    keep = tmp_path / "keep"  # seqlab's reports: what a failure below quotes
    run([SEQLAB, "nbgrader", "autograde", str(course), "*", "--jobs", "2", "--keep", str(keep)], cwd=tmp_path)
    autograde_s = time.perf_counter() - started
    config = load_config()
    for topic in contract.MODULES:
        scores = function_scores(course, topic)
        assert set(scores) == set(plan), f"{topic}: not every student recorded"
        for student, functions in scores.items():
            assert set(functions) == set(contract.functions_of(topic)), f"{student} {topic}: a grade missing"
        for qualname in contract.functions_of(topic):
            full = scores["student00"][qualname][0] == pytest.approx(config.rules(qualname).points)
            assert full, f"{qualname}: {_failures(keep / 'results' / 'student00' / 'results.json', qualname)}"
            assert scores["student01"][qualname][0] == 0, qualname
        bugged = [(s, q) for s, kinds in plan.items() for q, kind in kinds.items() if kind.startswith("bug")]
        bugged = [(s, q) for s, q in bugged if q.startswith(f"{topic}.")]
        assert not bugged or any(scores[s][q][0] < config.rules(q).points for s, q in bugged), topic
    started = time.perf_counter()
    for topic in contract.MODULES:
        out = run([SEQLAB, "nbgrader", "crosscheck", str(course), topic], cwd=tmp_path, expect=None)
        assert re.search(rf"^{STUDENTS} submission\(s\), 0 different$", out.stdout, re.M), out.stdout[-3000:]
        assert out.returncode == 0
    crosscheck_s = time.perf_counter() - started
    print(
        f"autograde of {STUDENTS} x {len(contract.MODULES)} notebooks {autograde_s:.0f} s; crosscheck {crosscheck_s:.0f} s"
    )
