"""Scores back out of nbgrader's gradebook, per contract function.

Test cells are named ``<topic>-<function>-tests``, so a grade in the gradebook maps to one
contract function; the comparison with ``seqlab grade`` (``crosscheck``) and the tests read
the gradebook through this module, with nbgrader's own API.

Reading never creates a gradebook: nbgrader's ``Gradebook`` makes an empty database wherever it
is pointed (and, without ``alembic`` on PATH, a half-made one), which is how a stray
``gradebook.db`` once landed in the repository root. A folder without one is refused instead.
"""

from __future__ import annotations

from pathlib import Path

from .. import contract
from ..errors import SeqlabError


class NoGradebookError(SeqlabError, FileNotFoundError):
    """The course folder has no gradebook.db yet: nothing has been released or graded there."""


class MissingAssignmentError(SeqlabError, ValueError):
    """The gradebook holds no assignment of that name."""


def gradebook_url(course_dir: Path) -> str:
    """The SQLAlchemy URL of the course's existing gradebook (nbgrader's default place)."""
    database = Path(course_dir).resolve() / "gradebook.db"
    if not database.is_file():
        raise NoGradebookError(f"{course_dir}: no gradebook.db (run `nbgrader generate_assignment` first)")
    return f"sqlite:///{database}"


def qualname_of(grade_id: str) -> str | None:
    if not grade_id.endswith("-tests"):
        return None
    topic, _, name = grade_id[: -len("-tests")].partition("-")
    qualname = f"{topic}.{name}"
    return qualname if qualname in contract.SIGNATURES else None


def function_scores(course_dir: Path, assignment: str) -> dict[str, dict[str, tuple[float, float]]]:
    """``{student: {qualname: (auto_score, max_score)}}`` for one assignment."""
    from nbgrader.api import Gradebook, MissingEntry

    scores: dict[str, dict[str, tuple[float, float]]] = {}
    with Gradebook(gradebook_url(course_dir)) as gb:
        try:
            assignment_row = gb.find_assignment(assignment)
        except MissingEntry:
            raise MissingAssignmentError(f"{course_dir}: no assignment {assignment!r} in gradebook.db") from None
        for submission in assignment_row.submissions:
            table = scores.setdefault(submission.student.id, {})
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    qualname = qualname_of(grade.name)
                    if qualname is not None:
                        table[qualname] = (float(grade.auto_score or 0.0), float(grade.max_score))
    return scores
