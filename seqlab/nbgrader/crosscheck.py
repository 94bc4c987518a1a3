"""Regrade nbgrader submissions on the secure path and compare with the gradebook.

Autograde runs student code in the grading kernel, so a student who knows how can make a test
cell print any number (see docs/nbgrader.md). ``seqlab grade`` runs the same answer cells, exported,
in the isolated child with the course's seed: the points must be equal, function by function. A
difference means the notebook tampered with its grading, or the course was autograded with other
graders or another seed.
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
                report = export_submission([folder], work / student)
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
            topics = sorted(report.modules)
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
