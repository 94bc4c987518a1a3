"""`seqlab nbgrader autograde`: nbgrader's gradebook filled by the isolated grader, no kernel trusted.

The end-to-end test (marked slow) uses the real nbgrader 0.9 command line, no mocks, on the
optimizers class of ``_class.py`` (shared with the round trip): `nbgrader autograde` graded the
class in one course, `seqlab nbgrader autograde` grades it in a copy taken before, with an
unreadable and a misnamed notebook added and the traps student left out. The gradebooks
must agree on everything nbgrader records for the honest students (points per test cell,
needs_manual_grade, the "No response." comments, the submission's timestamp), the forger gets
the points of its real code (the stubs: zero), an unreadable notebook is named and written
nowhere while everyone else is graded, and `nbgrader export` and `nbgrader generate_feedback`
work on the result. It prints how long each grader took.
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from pathlib import Path

import nbformat
import pytest

from seqlab.nbgrader.autograde import HEADER, _folder_name, autograde
from seqlab.nbgrader.course import build_course
from seqlab.nbgrader.export import grade_cell_id
from seqlab.nbgrader.feedback import function_feedback
from seqlab.nbgrader.gradebook import NoGradebookError, function_scores
from seqlab.nbgrader.record import nbgrader_main, seqlab_grades_class
from seqlab.results import TestResult as GradedTest
from tests.nbgrader._class import (
    BUGGY,
    BUGS_HANDED_IN,
    HONEST,
    NBGRADER,
    NBGRADER_CLASS,
    SEED,
    SEQLAB,
    TOPIC,
    by_grade_id,
    maximum_points,
    outputs,
    run,
)

# --- the pieces, without nbgrader's command line ----------------------------------------------------


def test_feedback_names_each_failed_test_once_with_its_hint():
    functions = {"optimizers.adam": (1.5, 4.0)}
    tests = [
        GradedTest("optimizers.adam: default hyperparameters", 1.5, 1.5),
        GradedTest("optimizers.adam: betas=(0.5, 0.9)", 0.0, 1.25, output="max abs error 0.3", hint="no bias"),
        GradedTest("optimizers.adam: T=1", 0.0, 1.25, output="max abs error 0.3", hint="no bias"),
        GradedTest("optimizers.adam: lr=1", 0.0, 0.25, output="max abs error 0.7", hint="no bias"),
        GradedTest("optimizers.sgd: default", 1.0, 1.0),
    ]
    text, points = function_feedback("optimizers.adam", functions, tests, errors=["import failed"], missing=["adam"])
    assert points == 1.5
    assert text.splitlines() == [
        "adam: its answer cell is missing from the notebook; 0 points",
        "problem: import failed",
        "adam: 1.5 of 4 points from the hidden tests (1 of 4 tests passed)",
        "  - betas=(0.5, 0.9) (0/1.25): max abs error 0.3",
        "    hint: no bias",
        "  - lr=1 (0/0.25): max abs error 0.7",  # its hint was said once already
    ]


def test_student_ids_become_folder_names_that_cannot_collide():
    assert _folder_name("alice.b-2") == "alice.b-2"
    odd = [".hidden", "a b", "a_b ", "élève", "x/y", "gradebook.csv", "Bob", "bob "]
    names = [_folder_name(s) for s in odd]
    assert len(set(names)) == len(odd) and all(n.startswith("student-") for n in names)


def _grade_cell(grade_id: str, points: float):
    cell = nbformat.v4.new_code_cell("hidden_points(...)")
    cell.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "locked": True,
        "grade_id": grade_id,
        "points": points,
        "schema_version": 3,
    }
    return cell


def test_the_preprocessor_writes_what_nbgrader_reads_as_partial_credit(tmp_path):
    from nbgrader.utils import determine_grade

    grades = tmp_path / "grades.json"
    grades.write_text(
        json.dumps(
            {
                "assignments": {TOPIC: []},
                "students": {"ann": {"optimizers.adam": {"text": "adam: 1.5 of 4 points\n", "points": 1.5}}},
            }
        )
    )
    nb = nbformat.v4.new_notebook(cells=[_grade_cell("optimizers-adam-tests", 4), _grade_cell("extra-tests", 2)])
    preprocessor = seqlab_grades_class()(grades_file=str(grades))
    nb, _ = preprocessor.preprocess(nb, {"nbgrader": {"student": "ann"}})
    graded, extra = nb.cells
    assert determine_grade(graded) == (1.5, 4.0) and outputs(graded).startswith("adam: 1.5 of 4 points")
    # a test cell seqlab does not grade is a zero with the reason, never nbgrader's "no output: full marks"
    assert determine_grade(extra) == (0, 2.0) and "extra-tests" in extra.outputs[0].evalue
    with pytest.raises(RuntimeError, match="no grades for student 'bob'"):
        preprocessor.preprocess(nb, {"nbgrader": {"student": "bob"}})


def test_a_course_without_a_gradebook_or_submissions_is_refused_with_the_next_step(tmp_path):
    course = build_course(tmp_path / "course", seed=SEED).course_dir
    with pytest.raises(NoGradebookError, match="generate_assignment"):
        autograde(course, [TOPIC])


def test_reading_or_recording_grades_outside_a_course_creates_no_gradebook(tmp_path, monkeypatch):
    # nbgrader's Gradebook makes a database wherever it is pointed, and its apps take the current
    # folder for the course: that is how a stray gradebook.db once landed in the repository root.
    with pytest.raises(NoGradebookError, match=r"no gradebook\.db"):
        function_scores(tmp_path, TOPIC)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match="not an nbgrader course folder"):
        nbgrader_main([str(tmp_path / "grades.json"), "--force"])
    assert list(tmp_path.iterdir()) == []


# --- end to end with the real nbgrader ----------------------------------------------------------------


def _gradebook_details(course: Path, students) -> dict:
    """Everything nbgrader records per submission that formgrader and export show."""
    from nbgrader.api import Gradebook

    details = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in students:
            submission = gb.find_submission(TOPIC, student)
            notebook = submission.notebooks[0]
            details[student] = {
                "timestamp": submission.timestamp,
                "grades": {
                    g.name: (g.auto_score, g.manual_score, g.needs_manual_grade, g.max_score) for g in notebook.grades
                },
                "comments": {c.name: c.auto_comment for c in notebook.comments},
                "needs_manual_grade": submission.needs_manual_grade,
            }
    return details


@pytest.mark.slow
@pytest.mark.e2e  # nbgrader's own commands on a class: a minute and a half of make test's four
@NBGRADER_CLASS
def test_seqlab_autograde_fills_nbgrader_gradebook_like_nbgrader_and_the_forger_gets_its_real_grade(
    optimizers_class, tmp_path
):
    maximum = maximum_points()
    total = sum(maximum.values())
    honest = HONEST
    # nbgrader autograde graded the class (_class.py); seqlab grades the same hand-ins in a copy
    # taken before, without the traps student and with two notebooks nbgrader never sees.
    nb_course = optimizers_class.course
    sq_course = shutil.copytree(optimizers_class.before_autograde, tmp_path / "seqlab-course")
    shutil.rmtree(sq_course / "submitted" / "traps")
    broken = sq_course / "submitted" / "broken" / TOPIC / f"{TOPIC}.ipynb"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"cells": [')
    # a notebook under another name: nbgrader grades only the assignment's file names
    misnamed = sq_course / "submitted" / "misnamed" / TOPIC / f"{TOPIC} (1).ipynb"
    misnamed.parent.mkdir(parents=True)
    shutil.copyfile(sq_course / "submitted" / "full" / TOPIC / f"{TOPIC}.ipynb", misnamed)
    nbgrader_s = optimizers_class.autograde_s

    started = time.perf_counter()
    out = run(
        [SEQLAB, "nbgrader", "autograde", str(sq_course), TOPIC, "--jobs", "2", "--keep", str(tmp_path / "kept")],
        cwd=tmp_path,
        timeout=900,
        expect=1,
    )
    seqlab_s = time.perf_counter() - started
    assert "NOT GRADED broken: could not be exported" in out.stdout and "not a readable notebook" in out.stdout
    assert "NOT GRADED misnamed: no notebook of the assignment under the expected name" in out.stdout
    assert f"submitted/misnamed/{TOPIC}/ holds none of {TOPIC}.ipynb" in out.stderr
    assert "4 of 6 student(s) graded" in out.stdout

    # The honest students: exactly what nbgrader autograde recorded, field by field.
    theirs = {s: scores for s, scores in function_scores(nb_course, TOPIC).items() if s in honest}
    ours = function_scores(sq_course, TOPIC)
    assert theirs["full"] == {q: (p, p) for q, p in maximum.items()}
    assert theirs["stub"] == {q: (0.0, p) for q, p in maximum.items()}
    bugged = {f"{TOPIC}.{n}" for n in BUGGY}
    assert {q for q, (s, m) in theirs["bugs"].items() if s < m} == bugged
    assert {s: ours[s] for s in honest} == theirs
    assert _gradebook_details(sq_course, honest) == _gradebook_details(nb_course, honest)
    assert str(_gradebook_details(sq_course, ["bugs"])["bugs"]["timestamp"]).startswith(BUGS_HANDED_IN[:19])
    # The forger: the points of the code it handed in, whatever its cell would have printed.
    assert ours["forger"] == {q: (0.0, p) for q, p in maximum.items()}
    # The unreadable notebook: named, and nothing in the gradebook (a zero would be a grade for no work seen).
    assert "broken" not in ours and not (sq_course / "autograded" / "broken").exists()
    assert "misnamed" not in ours and not (sq_course / "autograded" / "misnamed").exists()

    # The feedback in each test cell is the one the kernel prints, without running anything of the student's.
    for student in honest:
        kernel = by_grade_id(nbformat.read(str(nb_course / "autograded" / student / TOPIC / f"{TOPIC}.ipynb"), 4))
        mine = by_grade_id(nbformat.read(str(sq_course / "autograded" / student / TOPIC / f"{TOPIC}.ipynb"), 4))
        for qualname in maximum:
            cell_id = grade_cell_id(TOPIC, qualname.split(".")[1])
            text = outputs(mine[cell_id])
            assert text.startswith(HEADER)
            hidden_feedback = text[len(HEADER) :].strip()
            assert hidden_feedback and hidden_feedback in outputs(kernel[cell_id]), (student, qualname)
        assert not any(
            c.outputs for c in mine.values() if c.cell_type == "code" and not c.metadata["nbgrader"].get("grade")
        ), "no answer or setup cell ran"
    forged = nbformat.read(str(sq_course / "autograded" / "forger" / TOPIC / f"{TOPIC}.ipynb"), 4)
    assert all(not c.outputs for c in forged.cells if c.get("id") == "scratch-0")

    # What formgrader lists (its API, the one its pages call): the same rows; the unreadable notebook
    # shows as submitted and not autograded, as after an nbgrader autograde that failed on it.
    shown = (
        "student",
        "autograded",
        "submitted",
        "score",
        "max_score",
        "code_score",
        "needs_manual_grade",
        "timestamp",
    )
    listed = {
        course: {s["student"]: {k: s[k] for k in shown} for s in _formgrader_submissions(course)}
        for course in (nb_course, sq_course)
    }
    assert {s: listed[sq_course][s] for s in honest} == {s: listed[nb_course][s] for s in honest}
    assert listed[sq_course]["forger"]["score"] == 0 and listed[sq_course]["forger"]["autograded"]
    assert not listed[sq_course]["broken"]["autograded"] and listed[sq_course]["broken"]["submitted"]

    # nbgrader's own commands on the result.
    run([NBGRADER, "export"], cwd=sq_course)
    with open(sq_course / "grades.csv", newline="") as fh:
        csv_scores = {
            row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(fh) if row["assignment"] == TOPIC
        }
    lost = sum(maximum[q] - theirs["bugs"][q][0] for q in bugged)
    assert csv_scores == pytest.approx({"full": total, "stub": 0.0, "bugs": total - lost, "forger": 0.0})
    run([NBGRADER, "generate_feedback", TOPIC], cwd=sq_course)
    for student in [*honest, "forger"]:
        html = (sq_course / "feedback" / student / TOPIC / f"{TOPIC}.html").read_text()
        assert "HIDDEN TESTS" not in html and "adam: " in html and "points from the hidden tests" in html, student
    assert "adam: 0 of" in (sq_course / "feedback" / "forger" / TOPIC / f"{TOPIC}.html").read_text()
    # seqlab's own reports are kept for the instructor
    assert (tmp_path / "kept" / "results" / "bugs" / "report.html").is_file()

    print(f"\nnbgrader autograde of 5 notebooks: {nbgrader_s:.0f} s; seqlab nbgrader autograde of 6: {seqlab_s:.0f} s")


def _formgrader_submissions(course: Path) -> list[dict]:
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    return NbGraderAPI(coursedir=CourseDirectory(root=str(course))).get_submissions(TOPIC)
