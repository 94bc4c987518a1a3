"""`seqlab nbgrader autograde` of one assignment exports the student's other notebooks for the labs."""

from __future__ import annotations

import shutil

from seqlab.build import render_stubs
from seqlab.nbgrader.autograde import _all_assignments, _export_class, assignment_notebooks
from seqlab.nbgrader.course import build_course
from seqlab.paths import SOLUTIONS_DIR


def test_the_other_assignments_notebooks_are_exported_beside_the_graded_one(tmp_path):
    course = tmp_path / "course"
    build_course(course, seed=1, topics=("optimizers", "positional"))
    submitted = course / "submitted" / "alice"
    for topic in ("optimizers", "positional"):
        shutil.copytree(course / "source" / topic, submitted / topic)
    assert _all_assignments(course) == ["optimizers", "positional"]
    graded = {"positional": assignment_notebooks(course, "positional")}
    others = {"optimizers": assignment_notebooks(course, "optimizers")}
    outcomes, folders, _ = _export_class(
        course / "submitted", tmp_path / "exports", graded, {"alice": ["positional"]}, {}, others
    )
    exercises = tmp_path / "exports" / folders["alice"] / "exercises"
    stubs = {stub.name: stub.text for stub in render_stubs(SOLUTIONS_DIR)}
    # the source notebooks hold the solutions: exported, not the stub, though not graded here
    assert (exercises / "optimizers.py").read_text() != stubs["optimizers.py"]
    assert (exercises / "rnn.py").read_text() == stubs["rnn.py"]  # no notebook of it anywhere
    assert outcomes["alice"].assignments == ["positional"] and not outcomes["alice"].reason


def test_a_kernel_in_autograded_finds_the_students_other_notebooks(tmp_path):
    from seqlab.nbgrader.server import student_notebooks

    course = tmp_path / "course"
    for folder in ("submitted/alice/rnn", "submitted/alice/optimizers", "submitted/bob/optimizers"):
        (course / folder).mkdir(parents=True)
        (course / folder / f"{folder.rsplit('/', 1)[1]}.ipynb").write_text("{}")
    here = course / "autograded" / "alice" / "rnn"
    here.mkdir(parents=True)
    assert student_notebooks(str(course), str(here)) == [course / "submitted/alice/optimizers/optimizers.ipynb"]
    # a student's own machine (nbgrader validate), or a folder elsewhere: no other notebook
    assert student_notebooks(str(course), str(tmp_path)) == []
    assert student_notebooks(None, str(here)) == []
