"""Grading a class's exam: every answers file of a hand-in folder, and the gradebook.

The layers below, along the data flow: ``answers`` reads and checks a file, ``marking`` marks
one answer per kind, ``paper`` grades one student's paper; callers import each from its layer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..gradebook import csv_text, read_csv
from ..results import GradingResult
from ..studentfiles import StudentFileError, shown
from .answers import load_answers
from .draws import StudentIdError, check_student_id
from .errors import AnswersError
from .examfile import Exam
from .paper import grade_answers


@dataclass
class BatchRow:
    """One answers file of a batch: graded (``result``) or not (``status`` error, ``reason``)."""

    file: str
    student: str
    status: str  # "graded" | "error"
    reason: str = ""
    result: GradingResult | None = None
    flag: str = ""  # e.g. the file's content claims another student's id


ANSWER_SUFFIXES = (".yaml", ".yml", ".json")
# What `exam grade-all` writes into its output folder beside the students' folders (``OUT/<id>/``):
# a student id equal to one of these, or starting with one and a dot (``gradebook.csv.yaml`` is
# student ``gradebook.csv``; ``write_text_atomic`` writes ``gradebook.csv.tmp`` first), would put
# a student's folder where an output is written. Such an id is refused by name (compared without
# case: a case-insensitive disk holds one of ``LMS`` and ``lms``).
OUTPUT_NAMES = ("gradebook", "item_analysis", "class_report", "lms")
# A hand-in folder with more entries than this is not a class's (and listing it costs the run).
MAX_FOLDER_ENTRIES = 10_000


def output_clash(student: str) -> str:
    """The output of grade-all that a student's folder ``OUT/<student>`` would collide with, or ""."""
    folded = student.casefold()
    for name in OUTPUT_NAMES:
        if folded == name or folded.startswith(name + "."):
            return name
    return ""


def _is_answers_name(name: str) -> bool:
    return Path(name).suffix.lower() in ANSWER_SUFFIXES


def scan_folder(folder: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """``(answers files, [(name, why refused)])`` of a hand-in folder: ``ID.yaml`` at the top, or
    one file per ``ID/`` folder. Nothing is followed: an answers file or an ``ID/`` folder that is
    a symbolic link (to the key, say, which would score 100) is refused by name, as is any entry
    with an answers suffix that is not a regular file (a FIFO would block the read)."""
    folder = Path(folder)
    found: list[Path] = []
    refused: list[tuple[str, str]] = []
    count = 0

    def visit(directory: Path, prefix: str, top: bool) -> None:
        nonlocal count
        inside = 0  # one student's ID/ folder is bounded on its own: a crowded one costs only its owner
        for entry in sorted(os.scandir(directory), key=lambda e: e.name):
            count += top
            inside += not top
            if count > MAX_FOLDER_ENTRIES:
                raise AnswersError(
                    f"{shown(str(folder))}: more than {MAX_FOLDER_ENTRIES} entries; not a hand-in folder"
                )
            if inside > MAX_FOLDER_ENTRIES:
                refused.append((prefix.rstrip("/"), f"more than {MAX_FOLDER_ENTRIES} entries; not a hand-in"))
                found[:] = [p for p in found if not p.is_relative_to(directory)]
                return
            name = prefix + entry.name
            if entry.is_symlink():
                if _is_answers_name(entry.name) or top:
                    refused.append(
                        (name, "a symbolic link, not a file: a link is never followed (hand in the file itself)")
                    )
            elif entry.is_dir(follow_symlinks=False):
                if top:
                    visit(Path(entry.path), name + "/", False)
            elif _is_answers_name(entry.name):
                if entry.is_file(follow_symlinks=False):
                    found.append(Path(entry.path))
                else:
                    refused.append((name, "not a regular file"))

    visit(folder, "", True)
    return found, refused


def answer_files(folder: Path) -> list[Path]:
    """The answers files of a hand-in folder (``scan_folder``; the refused entries left out)."""
    return scan_folder(folder)[0]


HANDED_IN_PREFIX = "answers-"  # `seqlab exam render` hands each student answers-ID.yaml to fill in


def owner_from_name(folder: Path, path: Path) -> str:
    """Whose file this is, from where it was handed in: ``ID.yaml``, ``answers-ID.yaml`` (the file
    render writes) or ``ID/<any name>.yaml``."""
    rel = path.relative_to(folder)
    if len(rel.parts) > 1:
        return rel.parts[0]
    return path.stem.removeprefix(HANDED_IN_PREFIX)


def load_roster(path: str | Path) -> dict[str, str]:
    """A roster CSV with columns ``file`` (as under the hand-in folder) and ``student``."""
    path = Path(path)
    reader = read_csv(path, AnswersError)
    if not reader.fieldnames or not {"file", "student"} <= set(reader.fieldnames):
        raise AnswersError(f"{path}: the roster needs the columns 'file' and 'student'")
    roster: dict[str, str] = {}
    for line, row in enumerate(reader, start=2):
        name, sid = (row.get("file") or "").strip(), (row.get("student") or "").strip()
        try:
            roster[name] = check_student_id(sid)
        except StudentIdError as exc:
            raise AnswersError(f"{path}: line {line}: {exc}") from None
    return roster


def grade_folder(exam: Exam, folder: str | Path, roster: dict[str, str] | None = None) -> list[BatchRow]:
    """Grade every answers file in ``folder``; a bad file becomes an error row, never a stop.

    Whose file it is comes from the roster (file name -> id) or else the file or folder name,
    never from the content: a file that claims another id is graded as its owner's and flagged.
    Two files for the same student are both refused (which one counts is the instructor's call).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise AnswersError(f"{folder}: not a folder")
    rows: list[BatchRow] = []
    loaded: list[tuple[Path, str, str | None, dict[str, Any]]] = []
    files, refused = scan_folder(folder)
    for name, why in refused:
        rows.append(BatchRow(shown(name), _owner_guess(name), "error", reason=f"{shown(str(folder / name))}: {why}"))
    for path in files:
        name = shown(path.relative_to(folder).as_posix())
        if roster is not None:
            if name not in roster:
                rows.append(
                    BatchRow(name, "", "error", reason=f"{shown(str(path))}: not in the roster; add it to grade it")
                )
                continue
            owner = roster[name]
        else:
            try:
                owner = check_student_id(owner_from_name(folder, path))
            except StudentIdError as exc:
                rows.append(
                    BatchRow(name, "", "error", reason=f"{shown(str(path))}: the file name is no student id: {exc}")
                )
                continue
        clash = output_clash(owner)
        if clash:
            rows.append(
                BatchRow(
                    name,
                    "",
                    "error",
                    reason=f"{shown(str(path))}: student id {owner!r} would collide with grade-all's output "
                    f"{clash!r}; rename the file or give its owner's id in a roster",
                )
            )
            continue
        try:
            claimed, answers = load_answers(path, require_student=False)
            loaded.append((path, owner, claimed, answers))
        except (AnswersError, StudentFileError) as exc:
            rows.append(BatchRow(name, owner, "error", reason=str(exc)))
    # one folder per student under OUT/: ids that differ in case only would share it on a
    # case-insensitive disk, so they count as one student with two files (both refused)
    files_of: dict[str, list[str]] = {}
    for path, owner, _, _ in loaded:
        files_of.setdefault(owner.casefold(), []).append(path.relative_to(folder).as_posix())
    for path, owner, claimed, answers in loaded:
        name = path.relative_to(folder).as_posix()
        if len(files_of[owner.casefold()]) > 1:
            others = ", ".join(f for f in files_of[owner.casefold()] if f != name)
            rows.append(
                BatchRow(
                    name,
                    owner,
                    "error",
                    reason=f"{shown(str(path))}: student {owner!r} also has answers in {shown(others)}; keep one file",
                )
            )
            continue
        try:
            result = grade_answers(exam, owner, answers, source=str(path))
        except (AnswersError, ValueError, TypeError, RecursionError) as exc:
            # an answer no marker can read costs its student only (the markers reject what they
            # cannot read; this is the net under them)
            rows.append(BatchRow(name, owner, "error", reason=f"{path}: could not be graded: {str(exc)[:300]}"))
            continue
        flag = ""
        if claimed is not None and claimed != owner:
            flag = f"the file claims student {claimed!r}; graded as its owner {owner!r}"
            result.errors.append(flag)
            result.meta["claimed_student"] = claimed
        rows.append(BatchRow(name, owner, "graded", result=result, flag=flag))
    return rows


def _owner_guess(name: str) -> str:
    """The id a refused entry's name gives, for its row ("" when it gives none)."""
    try:
        first = name.split("/", 1)[0]
        owner = check_student_id(Path(first).stem.removeprefix(HANDED_IN_PREFIX) if "/" not in name else first)
    except StudentIdError:
        return ""
    return "" if output_clash(owner) else owner


def gradebook_csv(exam: Exam, rows: list[BatchRow]) -> str:
    """One row per answers file: student, status, totals, one column per question, reason. A question's
    column is headed by its number on the papers and its id (``Q12 rnn.shapes``); a pool's
    candidates share their slot's number."""
    ids = exam.ids()
    numbers: dict[str, int | None] = {}
    for row in rows:
        for t in row.result.tests if row.result is not None else ():
            numbers.setdefault(t.name.split(":", 1)[0][len("exam.") :], t.details.get("question"))
    headers = [f"Q{numbers[q]} {q}" if numbers.get(q) else q for q in ids]
    lines = []
    for row in sorted(rows, key=lambda r: (r.status != "graded", r.student, r.file)):
        if row.result is None:
            lines.append(
                [
                    row.student,
                    row.status,
                    0,
                    f"{exam.max_score:g}",
                    "",
                    *[""] * len(ids),
                    row.flag,
                    row.file,
                    row.reason[:300],
                ]
            )
            continue
        result = row.result
        by_id = {t.name.split(":", 1)[0][len("exam.") :]: t.score for t in result.tests}
        # a question of a pool this student did not draw stays empty (not 0: it was not asked)
        lines.append(
            [
                row.student,
                row.status,
                f"{result.score:g}",
                f"{result.max_score:g}",
                f"{result.percent:.1f}",
                *[f"{by_id[q]:g}" if q in by_id else "" for q in ids],
                row.flag,
                row.file,
                "; ".join(result.errors)[:300],
            ]
        )
    return csv_text(["student", "status", "total", "max_score", "percent", *headers, "flag", "file", "reason"], lines)
