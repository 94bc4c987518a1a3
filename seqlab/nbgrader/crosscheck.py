"""Regrade nbgrader submissions on the secure path and compare with the gradebook.

Autograde runs student code in the grading kernel, so a student who knows how can make a test
cell print any number (see docs/nbgrader.md). ``seqlab grade`` runs the same answer cells, exported,
in the isolated child with the course's seed: the points must be equal, function by function. A
difference means the notebook tampered with its grading, or the course was autograded with other
graders or another seed.

A student's submission is all of their notebooks, as in ``seqlab nbgrader autograde``: a lab runs
the student's functions of other topics (the rnn lab trains with their optimizers' ``adam``), so
the assignment's notebooks are exported with the student's notebooks of the course's other
assignments, and only the assignment's topics are graded.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from ..studentfiles import StudentFileError, links_under, shown
from .course import CourseError, read_seed
from .export import ExportError, export_submission
from .gradebook import function_scores
from .handin import lab_notebooks

TOLERANCE = 1e-4


def crosscheck(course_dir: Path, assignment: str, *, students=None, keep: Path | None = None) -> list[dict]:
    from ..grading import grade_submission, grading_settings

    course_dir = Path(course_dir)
    seed = read_seed(course_dir)
    if seed is None:
        raise CourseError(f"{course_dir}: no seed recorded (was it written by `seqlab nbgrader`?)")
    gradebook = function_scores(course_dir, assignment)
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="seqlab-crosscheck-"))
    rows: list[dict] = []
    settings = grading_settings(seed=seed, protected_dirs=(course_dir.resolve(),))
    graded, others = _assignments(course_dir, assignment)
    try:
        for student, nb_scores in sorted(gradebook.items()):
            if students and student not in students:
                continue
            folder = course_dir / "submitted" / student / assignment
            if not (folder.is_dir() or folder.is_symlink()):
                continue
            try:
                links = links_under(folder)
                if links:
                    raise ExportError(f"symbolic link(s) {', '.join(map(shown, links))}: never followed")
                extra = lab_notebooks(course_dir / "submitted", student, others, graded)
                report = export_submission([folder, *extra], work / student)
            except (
                ExportError,
                StudentFileError,
            ) as exc:  # a notebook no longer readable (or a link): this student's row says so
                rows.append(
                    {
                        "student": student,
                        "nbgrader": sum(sc for sc, _ in nb_scores.values()),
                        "seqlab": 0.0,
                        "same": False,
                        "differences": {},
                        "export": "",
                        "error": str(exc),
                    }
                )
                continue
            # the assignment's topics only: the others were exported for the labs, not graded here
            topics = sorted(set(report.modules) & graded if graded else report.modules)
            result = grade_submission(work / student, replace(settings, only=",".join(topics) or assignment))
            ours = result.by_function()
            differences = {}
            for qualname, (score, _max) in nb_scores.items():
                theirs = ours.get(qualname, (0.0, 0.0))[0]
                if abs(theirs - score) > TOLERANCE:
                    differences[qualname] = (score, theirs)
            rows.append(
                {
                    "student": student,
                    "nbgrader": sum(s for s, _ in nb_scores.values()),
                    "seqlab": sum(ours.get(q, (0.0, 0.0))[0] for q in nb_scores),
                    "same": not differences,
                    "differences": differences,
                    "export": str(work / student),
                }
            )
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return rows


def _assignments(course_dir: Path, assignment: str) -> tuple[set[str], dict[str, dict[str, str]]]:
    """The topics of ``assignment``'s source notebooks, and ``{file: topic}`` of every other
    assignment of the course (where the labs' other notebooks come from); both empty for a
    course whose ``source/`` folder is gone."""
    from .autograde import AutogradeError, _all_assignments, assignment_notebooks

    try:
        graded = set(assignment_notebooks(course_dir, assignment).values())
        others = {a: assignment_notebooks(course_dir, a) for a in _all_assignments(course_dir) if a != assignment}
    except AutogradeError:
        return set(), {}
    return graded, others
