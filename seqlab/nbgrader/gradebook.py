"""Scores back out of nbgrader's gradebook, per contract function.

Test cells are named ``<topic>-<function>-tests``, so a grade in the gradebook maps to one
contract function; the comparison with ``seqlab grade`` (``crosscheck``) and the tests read
the gradebook through this module, with nbgrader's own API.
"""

from __future__ import annotations

from pathlib import Path

from .. import contract


def qualname_of(grade_id: str) -> str | None:
    if not grade_id.endswith("-tests"):
        return None
    topic, _, name = grade_id[: -len("-tests")].partition("-")
    qualname = f"{topic}.{name}"
    return qualname if qualname in contract.SIGNATURES else None


def function_scores(course_dir: Path, assignment: str) -> dict[str, dict[str, tuple[float, float]]]:
    """``{student: {qualname: (auto_score, max_score)}}`` for one assignment."""
    from nbgrader.api import Gradebook

    url = f"sqlite:///{Path(course_dir).resolve() / 'gradebook.db'}"
    scores: dict[str, dict[str, tuple[float, float]]] = {}
    with Gradebook(url) as gb:
        assignment_row = gb.find_assignment(assignment)
        for submission in assignment_row.submissions:
            table = scores.setdefault(submission.student.id, {})
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    qualname = qualname_of(grade.name)
                    if qualname is not None:
                        table[qualname] = (float(grade.auto_score or 0.0), float(grade.max_score))
    return scores
