"""``seqlab nbgrader autograde``: nbgrader's gradebook filled without trusting a notebook kernel.

``nbgrader autograde`` runs each student's notebook in a kernel and takes the points from what
the test cells print there, so code in the notebook can print any points it likes (docs/nbgrader.md),
and it costs a kernel and a grading server per notebook. Here:

1. every ``submitted/<student>/<assignment>/`` is exported to a submission folder by
   ``export_submission`` (only the answer cells, found by grade_id; nothing the notebook printed);
2. the class is graded by ``grade-all`` (``seqlab.batch.grade_all``): parallel, each submission's
   code in its own isolated child, the course's seed, the course folder out of the students' reach;
3. nbgrader's own ``Autograde`` converter runs (``record.py``, in its own process) with one
   change: its ``Execute`` preprocessor is replaced by ``SeqlabGrades``, which writes each test
   cell's output (the hidden tests' feedback and the points as the cell's value) from step 2
   instead of running a kernel. Everything else is nbgrader's: the sanitizing (outputs cleared,
   test cells restored from the gradebook), the submission and its timestamp, late penalties,
   ``SaveAutoGrades`` (``auto_score`` by nbgrader's ``determine_grade``, ``needs_manual_grade``,
   the "No response." comments) and the ``autograded/`` notebooks that ``generate_feedback`` and
   formgrader read.

So ``nbgrader export``, ``generate_feedback`` and formgrader see exactly what ``nbgrader autograde``
would have written for an honest notebook, and a notebook that forges its own output gets the
points of its code. A submission that could not be graded (the grader failed, not the student) is
left out of the gradebook and named, never given a zero.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .. import contract
from ..defaults import SUBMISSION_TIMEOUT_S
from ..errors import SeqlabError
from .classexport import StudentOutcome
from .classexport import export_class as _export_class  # the tests' name for it
from .course import read_seed
from .export import notebook_topic, read_notebook
from .feedback import function_feedback
from .gradebook import function_scores, gradebook_url
from .handin import (
    folder_name,
    is_plain_file,
    scan_submitted,
)
from .record import write_grades_file

GRADES_FILE = "seqlab_grades.json"
# A whole submission's grading (every topic of the assignments) before grade-all gives it up as
# hung: the same default as `seqlab grade-all` and the course's per-cell timeout.
DEFAULT_TIMEOUT_S = float(SUBMISSION_TIMEOUT_S)
HEADER = "hidden tests graded by seqlab outside the notebook (isolated); the quick check above was not run here"


class AutogradeError(SeqlabError, ValueError):
    """The course or the assignment cannot be autograded (nothing was written to the gradebook)."""


@dataclass
class AutogradeReport:
    course_dir: Path
    assignments: list[str]
    seed: int
    outcomes: list[StudentOutcome]
    work: Path | None  # kept exports and reports (--keep), else None
    # what failed beside the students' grades (a class report, nbgrader's log); never a lost grade
    errors: list[str] = field(default_factory=list)

    @property
    def not_graded(self) -> list[StudentOutcome]:
        return [o for o in self.outcomes if not o.graded]


def course_assignments(course_dir: Path, patterns) -> list[str]:
    """The gradebook's assignments matching any of ``patterns`` (names or globs, as nbgrader's)."""
    from nbgrader.api import Gradebook

    with Gradebook(gradebook_url(course_dir)) as gb:
        known = sorted(a.name for a in gb.assignments)
    chosen = [name for name in known if any(fnmatch.fnmatchcase(name, p) for p in patterns)]
    if not chosen:
        raise AutogradeError(
            f"no assignment in the gradebook matches {' '.join(patterns)} "
            f"(it has: {', '.join(known) or 'none'}; run `nbgrader generate_assignment` first)"
        )
    return chosen


def assignment_notebooks(course_dir: Path, assignment: str) -> dict[str, str]:
    """``{notebook file name: seqlab topic}`` of an assignment's source notebooks: the files nbgrader
    grades in a submission (it skips any other name), and what their test cells grade."""
    notebooks = {}
    for path in sorted((course_dir / "source" / assignment).glob("*.ipynb")):
        topic = notebook_topic(read_notebook(path))
        if topic:
            notebooks[path.name] = topic
    if not notebooks:
        raise AutogradeError(
            f"{course_dir / 'source' / assignment}: no seqlab notebook in it "
            f"(this command grades courses written by `seqlab nbgrader`)"
        )
    return notebooks


def _all_assignments(course_dir: Path) -> list[str]:
    """The course's assignments that hold a seqlab notebook (``source/<assignment>/``)."""
    source = course_dir / "source"
    folders = sorted(p.name for p in source.iterdir() if p.is_dir()) if source.is_dir() else []
    return [a for a in folders if any(notebook_topic(read_notebook(p)) for p in (source / a).glob("*.ipynb"))]


_folder_name = folder_name  # the results folder of a student id (seqlab.nbgrader.handin)


def _cell_grades(result, topics, missing: dict[str, list[str]]) -> dict[str, dict]:
    """``{qualname: {"text", "points"}}`` for every function of ``topics``."""
    functions = result.by_function()
    cells = {}
    for topic in topics:
        for qualname in contract.functions_of(topic):
            if qualname not in functions:
                continue  # no graded test: SeqlabGrades says so in the cell (0 points)
            text, points = function_feedback(
                qualname, functions, result.tests, errors=result.errors, missing=missing.get(topic, ())
            )
            cells[qualname] = {"text": f"{HEADER}\n{text}", "points": points}
    return cells


def _topics_of(notebooks: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """``{assignment: its topics}``; refused when two assignments grade one topic (one export
    holds one module per topic: such assignments are graded in separate runs)."""
    topics = {a: list(dict.fromkeys(nbs.values())) for a, nbs in notebooks.items()}
    owners: dict[str, list[str]] = {}
    for assignment, assignment_topics in topics.items():
        for topic in assignment_topics:
            owners.setdefault(topic, []).append(assignment)
    shared = {t: a for t, a in owners.items() if len(a) > 1}
    if shared:
        raise AutogradeError(
            "; ".join(f"assignments {', '.join(a)} all grade {t}" for t, a in shared.items())
            + ": autograde them one at a time"
        )
    return topics


def _hand_ins(submitted: Path, notebooks: dict[str, dict[str, str]], others=None) -> tuple[dict, dict, dict]:
    """``handin.scan_submitted``, refusing a ``submitted/`` that holds nothing to grade."""
    handed_in, empty, refused = scan_submitted(submitted, notebooks, others)
    if not handed_in and not empty and not refused:
        raise AutogradeError(
            f"nothing under {submitted}/<student>/{{{','.join(notebooks)}}}/ "
            f"(collect the submissions first: `nbgrader collect` or copy them there)"
        )
    return handed_in, empty, refused


def autograde(
    course_dir: Path,
    patterns,
    *,
    jobs: int = 1,
    keep: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    progress=None,
) -> AutogradeReport:
    from ..batch import ClassRun
    from ..grading import grading_settings

    course_dir = Path(course_dir).resolve()
    if not (course_dir / "nbgrader_config.py").is_file():
        raise AutogradeError(f"{course_dir}: no nbgrader_config.py (write the course with `seqlab nbgrader`)")
    seed = read_seed(course_dir)
    if seed is None:
        raise AutogradeError(f"{course_dir}: no seed recorded (was it written by `seqlab nbgrader`?)")
    assignments = course_assignments(course_dir, list(patterns))
    notebooks = {a: assignment_notebooks(course_dir, a) for a in assignments}
    topics = _topics_of(notebooks)
    submitted = course_dir / "submitted"
    others = {a: assignment_notebooks(course_dir, a) for a in _all_assignments(course_dir) if a not in notebooks}
    handed_in, empty, refused = _hand_ins(submitted, notebooks, others)

    work = Path(keep).resolve() if keep else Path(tempfile.mkdtemp(prefix="seqlab-nbgrader-autograde-"))
    if work == course_dir or course_dir in work.parents:
        raise AutogradeError(
            f"{work}: keep the exports outside the course folder (the students' code may not read anything in it)"
        )
    exports, results = work / "submissions", work / "results"
    # A student who resubmitted must not keep an old export, nor an old result: every result read
    # below is one this run wrote.
    shutil.rmtree(exports, ignore_errors=True)
    shutil.rmtree(results, ignore_errors=True)
    exports.mkdir(parents=True)
    errors: list[str] = []
    try:
        outcomes, folders, missing = _export_class(submitted, exports, notebooks, handed_in, empty, others, refused)
        graded_topics = [t for t in contract.MODULES if any(t in ts for ts in topics.values())]
        settings = grading_settings(seed=seed, only=",".join(graded_topics), protected_dirs=(course_dir,))
        rows = _grade_class(
            exports, results, settings, ClassRun(jobs=jobs, force=True, timeout=timeout), progress, errors
        )
        by_folder = {row["submission"]: row for row in rows}
        grades = {}
        for student, outcome in outcomes.items():
            if outcome.reason:
                continue
            row = by_folder.get(folders[student])
            if row is None or row["result"] is None:
                outcome.reason = f"not graded: {row['reason'] if row else 'grade-all did not list it'}"
                continue
            student_topics = [t for a in outcome.assignments for t in topics[a]]
            try:
                grades[student] = _cell_grades(row["result"], student_topics, missing.get(student, {}))
            except Exception as exc:  # a result that cannot be read costs its student only
                outcome.reason = f"its result could not be read: {type(exc).__name__}: {str(exc)[:300]}"
                continue
            outcome.graded = True
        # per assignment, the graded students who handed it in: exactly those nbgrader records
        record = {a: [s for s, o in outcomes.items() if o.graded and a in o.assignments] for a in assignments}
        record = {a: students for a, students in record.items() if students}
        if record:
            grades_file = write_grades_file(work / GRADES_FILE, students=grades, record=record)
            errors += _write_gradebook(course_dir, grades_file, record, notebooks)
            _check_recorded(course_dir, record, notebooks, outcomes)
        for assignment in assignments:
            try:
                table_of = function_scores(course_dir, assignment)
            except Exception as exc:  # the scores are printed, the grades are recorded
                errors.append(f"could not read the scores of {assignment} back from the gradebook: {exc}")
                continue
            for student, table in table_of.items():
                if student in outcomes and outcomes[student].graded and assignment in outcomes[student].assignments:
                    outcomes[student].scores[assignment] = (
                        sum(s for s, _ in table.values()),
                        sum(m for _, m in table.values()),
                    )
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return AutogradeReport(course_dir, assignments, seed, list(outcomes.values()), work if keep else None, errors)


def _grade_class(exports: Path, results: Path, settings, run, progress, errors: list[str]) -> list[dict]:
    """grade-all's rows for the exported class. grade-all writes each student's result as it is
    graded and draws its class report last; whatever fails after the grading (the report, a
    figure, similarity) is an error in the log, and the results it wrote are read back from
    ``results`` (``gradebook.collect``) and recorded: a report never costs a grade."""
    from ..batch import grade_all
    from ..gradebook import collect

    try:
        return grade_all(exports, results, settings, run, progress)
    except Exception as exc:  # see above: the grades are on disk, the report is not ours to lose them
        errors.append(
            f"grade-all stopped after grading ({type(exc).__name__}: {str(exc)[:500]}); its results are recorded"
        )
        if progress is not None and hasattr(progress, "stop"):
            with contextlib.suppress(Exception):  # the progress display is not a grade: nothing to record
                progress.stop()
    names = sorted(p.name for p in exports.iterdir() if p.is_dir()) if exports.is_dir() else []
    return collect(results, names)


def _write_gradebook(course_dir: Path, grades_file: Path, record: dict, notebooks: dict) -> list[str]:
    """nbgrader's Autograde converter, with SeqlabGrades in place of Execute (``record.py``), in its
    own process started in the course folder (so nbgrader reads its config as `nbgrader autograde`).
    It records exactly the students of ``record``; their ``autograded/`` folders are removed first
    (as ``--force`` does), so a folder there afterwards is this run's (``_check_recorded``).
    Returns what went wrong, for the log."""
    for assignment, students in record.items():
        for student in students:
            shutil.rmtree(course_dir / "autograded" / student / assignment, ignore_errors=True)
    args = [sys.executable, "-m", "seqlab.nbgrader.record", str(grades_file), "--force"]
    # nbgrader runs alembic from PATH when it creates or upgrades a gradebook
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("NBGRADER_EXECUTION", None)
    done = subprocess.run(args, cwd=course_dir, env=env, capture_output=True, text=True, errors="replace")
    if done.returncode != 0:
        return [f"nbgrader could not record every grade (exit {done.returncode}):\n{done.stderr[-4000:]}"]
    return []


def _check_recorded(course_dir: Path, record: dict, notebooks: dict, outcomes: dict) -> None:
    """A student nbgrader did not record (its ``autograded/<student>/<assignment>/`` notebook is not
    there after the run) is not graded, with the reason: the gradebook holds nothing new of theirs."""
    for assignment, students in record.items():
        for student in students:
            folder = course_dir / "autograded" / student / assignment
            handed = [
                n for n in notebooks[assignment] if is_plain_file(course_dir / "submitted" / student / assignment / n)
            ]
            if not handed or not all(is_plain_file(folder / name) for name in handed):
                outcome = outcomes[student]
                outcome.graded = False
                outcome.reason = f"nbgrader did not record {assignment} (see its log above)"
