"""A class's handed-in notebooks exported for grading (``seqlab nbgrader autograde``): each
student's notebooks become one submission folder, and whatever one student's notebooks hold
(malformed JSON, a cell that is no cell, a link, an id that would share a folder) costs only
that student, as their outcome's reason.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .export import ExportError, export_submission
from .handin import folder_name, is_plain_file, lab_notebooks, shown


@dataclass
class StudentOutcome:
    student: str
    assignments: list[str]
    graded: bool
    reason: str = ""  # why it was not graded
    warnings: list[str] = field(default_factory=list)  # from the export (missing answer cells, ...)
    scores: dict[str, tuple[float, float]] = field(default_factory=dict)  # assignment -> (score, max), read back


def export_class(
    submitted: Path, exports: Path, notebooks, handed_in, empty, others=None, refused=None
) -> tuple[dict, dict, dict]:
    """Each student's handed-in notebooks exported to ``exports/<folder>`` (with their notebooks
    of ``others``, the course's other assignments, for the labs); returns the outcomes (a reason
    set for those that cannot be graded), the folder names and the missing answer cells.

    Whatever one student's notebooks hold, it costs only that student: a notebook that cannot be
    read or exported (malformed JSON, a cell that is no cell, a link, ...) is that student's
    reason, and two students who would share a results folder are both refused by name."""
    graded = {topic for names in notebooks.values() for topic in names.values()}
    outcomes: dict[str, StudentOutcome] = {}
    folders: dict[str, str] = {}
    missing: dict[str, dict[str, list[str]]] = {}
    for student, why in (refused or {}).items():
        outcomes[student] = StudentOutcome(student, [], graded=False, reason=why)
    for student, nothing in empty.items():
        outcomes[student] = StudentOutcome(
            student,
            [],
            graded=False,
            warnings=[f"submitted/{student}/{a}/ holds none of {', '.join(notebooks[a])}; not graded" for a in nothing],
        )
        if student not in handed_in:
            outcomes[student].reason = "no notebook of the assignment under the expected name"
    sharing: dict[str, list[str]] = {}
    for student in handed_in:
        sharing.setdefault(folder_name(student).casefold(), []).append(student)
    for student, handed in handed_in.items():
        outcome = outcomes.setdefault(student, StudentOutcome(student, [], graded=False))
        outcome.assignments = handed
        folder = folder_name(student)
        same = [s for s in sharing[folder.casefold()] if s != student]
        if same:  # never by construction (handin.folder_name); refused rather than merged if it were
            outcome.reason = f"would share the results folder {folder} with {', '.join(map(shown, same))}"
            continue
        folders[student] = folder
        # exactly the files nbgrader will record (another notebook in the folder is not graded)
        handed_notebooks = [
            submitted / student / a / name
            for a in handed
            for name in notebooks[a]
            if is_plain_file(submitted / student / a / name)
        ]
        extra = lab_notebooks(submitted, student, others or {}, graded)
        try:
            report = export_submission(handed_notebooks + extra, exports / folder)
        except Exception as exc:  # one student's notebook must never stop the class
            detail = str(exc) if isinstance(exc, ExportError) else f"{type(exc).__name__}: {str(exc)[:300]}"
            outcome.reason = f"could not be exported: {detail}"
            shutil.rmtree(exports / folder, ignore_errors=True)
            del folders[student]
            continue
        # what the export says of the labs' other notebooks is not this run's to report
        outcome.warnings += [w for w in report.warnings if not w.startswith(tuple(str(p) for p in extra))]
        missing[student] = {t: m.missing for t, m in report.modules.items()}
    return outcomes, folders, missing
