"""`seqlab nbgrader autograde` end to end with the real nbgrader, one class holding every bad hand-in
of the nbgrader cases that once stopped a class, beside honest students: each honest student graded and recorded in
nbgrader's gradebook, each bad one named, and a failure after the grading (the class report's
histogram) an error in the log, never a lost grade. About a minute on the 2-core machine: slow.
"""

from __future__ import annotations

import json

import nbformat
import pytest

import seqlab.batch
from seqlab.nbgrader.autograde import autograde
from seqlab.nbgrader.course import build_course
from seqlab.nbgrader.export import answer_id
from seqlab.nbgrader.gradebook import function_scores
from seqlab.nbgrader.handin import folder_name
from seqlab.regions import strip_markers
from tests.nbgrader._class import NBGRADER, SEED, TOPICS, run, student_notebook
from tests.nbgrader._faults import link

TOPIC = "optimizers"
HISTOGRAM = "Too many bins for data range. Cannot create 5 finite-sized bins."


# A whole nbgrader course and a real autograde: about 35 s of one worker, so with the banks
# (make test keeps the read-stage tests of tests/nbgrader/test_handin.py, case by case).
@pytest.mark.bank
@pytest.mark.slow
def test_a_class_with_every_bad_hand_in_grades_and_records_every_honest_student(tmp_path, monkeypatch):
    course = build_course(tmp_path / "course", seed=SEED, topics=(TOPIC,)).course_dir
    run([NBGRADER, "generate_assignment", TOPIC], cwd=course)
    release = course / "release" / TOPIC / f"{TOPIC}.ipynb"
    solved = student_notebook(
        release, {answer_id(TOPIC, c.name): strip_markers(c.source) for c in TOPICS[TOPIC].answers}
    )
    stub = student_notebook(release, {})
    victim = "Élève"  # not a plain id: graded under a hashed folder name
    attacker = folder_name(victim)  # an id spelled like the victim's folder
    honest = {"alice": solved, "bob": stub, victim: solved, attacker: stub}
    for student, notebook in honest.items():
        path = course / "submitted" / student / TOPIC / f"{TOPIC}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(notebook, str(path))
    bad = {
        "mallory": b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [1]}',  # a cell that is 1
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "new\nline": None,  # an id nbgrader's path pattern cannot match
        "eve": "link",  # a link to the instructor's source notebook: the reference's full marks
    }
    for student, content in bad.items():
        path = course / "submitted" / student / TOPIC / f"{TOPIC}.ipynb"
        if content == "link":
            link(course / "source" / TOPIC / f"{TOPIC}.ipynb", path)
            continue
        path.parent.mkdir(parents=True)
        path.write_bytes(content if isinstance(content, bytes) else nbformat.writes(solved).encode())

    real = seqlab.batch.grade_all

    def grades_then_fails(*args, **kwargs):  # the char-RNN class: grading done, then the histogram
        real(*args, **kwargs)
        raise ValueError(HISTOGRAM)

    monkeypatch.setattr(seqlab.batch, "grade_all", grades_then_fails)
    report = autograde(course, [TOPIC], jobs=2)

    outcomes = {o.student: o for o in report.outcomes}
    assert {s for s, o in outcomes.items() if o.graded} == set(honest)
    assert any(HISTOGRAM in e for e in report.errors)  # in the log, not a lost grade
    reasons = {s: outcomes[s].reason for s in bad}
    assert "cell 1 is a JSON number" in reasons["mallory"]
    assert "nested too deep" in reasons["deep"]
    assert "cannot be graded" in reasons["new\nline"] and "U+000A" in reasons["new\nline"]
    assert "symbolic link" in reasons["eve"] and "eve/optimizers/optimizers.ipynb" in reasons["eve"]

    gradebook = function_scores(course, TOPIC)
    assert set(gradebook) == set(honest)  # recorded: every honest student, no bad one
    total = {s: sum(score for score, _ in table.values()) for s, table in gradebook.items()}
    maximum = sum(m for _, m in gradebook["alice"].values())
    assert total["alice"] == total[victim] == maximum > 0
    assert total["bob"] == total[attacker] == 0  # the attacker's own stub, not the victim's grade
    assert outcomes[victim].scores[TOPIC] == (maximum, maximum)
    assert not (course / "autograded" / "eve").exists()  # nbgrader never read the link either
    json.dumps([o.reason for o in report.outcomes])  # every reason is text any file takes
