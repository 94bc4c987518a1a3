"""What a student put under ``submitted/``, read without trusting it: ids, links, sizes.

``seqlab nbgrader autograde`` and ``export-submission --course`` read every student's folder of
nbgrader's ``submitted/`` through this module, so one student's hand-in can only ever cost that
student (a named reason), never the class:

* **ids.** nbgrader's student id is the folder name. An id seqlab cannot carry through nbgrader
  and its own files (not valid Unicode, a control or line-break character) is refused by name;
  every other id gets a results folder no other id can get (``folder_name``).
* **links.** Nothing under a student's folder is followed: a notebook (or a folder, or any other
  file) that is a symbolic link -- say to the instructor's ``source/`` notebook, which would grade
  the reference -- is refused by name, and the rest of the class is graded.
* **bounds.** A notebook is read once, as bytes, with ``O_NOFOLLOW`` and a size cap
  (``read_bytes``); walking a student's folder stops at a depth and an entry count
  (``links_under``).
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from pathlib import Path

from ..studentfiles import (  # noqa: F401 -- the readers of student files, re-exported for the nbgrader side
    MAX_WALK_DEPTH,
    MAX_WALK_ENTRIES,
    StudentFileError,
    is_plain_dir,
    is_plain_file,
    links_under,
    read_bytes,
    shown,
)

# The form of a results folder for an id that is not kept as it is: "student-" and 20 hex digits of
# its SHA-256. No id is kept as it is when it starts with this prefix (``folder_name``), so a
# student cannot name their own folder after someone else's hashed one; 80 bits make a second id
# with the same digest out of reach (and ``autograde`` still refuses two students given one
# folder, whatever the cause).
HASHED_PREFIX = "student-"
HASH_DIGITS = 20

HandInError = StudentFileError


def id_problem(student: str) -> str:
    """ "" when ``student`` (a folder name under ``submitted/``) can be carried through nbgrader and
    seqlab's files, else why not. Refused: text that is not valid Unicode (a file name in another
    encoding: it cannot be written into the gradebook or the grades file), control characters and
    line breaks (nbgrader matches a student's path with a regular expression whose ``.`` stops at
    a line break, and that failure stops its whole run; in a log or CSV they forge lines)."""
    try:
        student.encode("utf-8")
    except UnicodeEncodeError:
        return "the folder name is not valid UTF-8 (rename it in UTF-8)"
    for char in student:
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            return f"the folder name holds the character U+{ord(char):04X} (control, format or line break)"
    if not student.strip():
        return "the folder name is blank"
    special = sorted(set(student) & set("*?["))
    if special:
        # nbgrader lists a student's notebooks with a glob pattern built from the folder's path, so
        # `[x]` would match the folder `x` (another student's) and never its own
        return f"the folder name holds {' '.join(special)}, which nbgrader reads as a file pattern"
    return ""


def folder_name(student: str) -> str:
    """The results folder of a student for grade-all: the id itself when grade-all keeps it as it
    is (its safe name, lower case: ids that differ in case only would share a folder on a
    case-insensitive disk) and it does not start with ``HASHED_PREFIX``; otherwise
    ``student-<20 hex digits of SHA-256 of the id>``, which no kept id can equal."""
    from ..batch import safe_submission_name

    if safe_submission_name(student) == student == student.lower() and not student.startswith(HASHED_PREFIX):
        return student
    digest = hashlib.sha256(student.encode("utf-8", "surrogateescape")).hexdigest()
    return HASHED_PREFIX + digest[:HASH_DIGITS]


# --- a class's submitted/ folder, scanned (seqlab nbgrader autograde) -------------------------


def scan_submitted(submitted: Path, notebooks: dict[str, dict[str, str]], others=None) -> tuple[dict, dict, dict]:
    """``(handed_in, empty, refused)``: per student, the assignments with one of their notebooks;
    the assignment folders holding none of them (nbgrader autograde fails on those, "No notebooks
    found", so they are named and left out of the gradebook); and the students refused, with why:
    an id seqlab cannot carry (``handin.id_problem``), or a symbolic link anywhere in their
    folders of the course's assignments (``notebooks`` and ``others``): none is ever followed, so a
    link to the instructor's ``source/`` notebook grades nothing. Hidden folders are skipped, as
    nbgrader skips them."""
    handed_in: dict[str, list[str]] = {}
    empty: dict[str, list[str]] = {}
    refused: dict[str, str] = {}
    every = {**(others or {}), **notebooks}
    if is_plain_dir(submitted):
        for entry in sorted(os.scandir(submitted), key=lambda e: e.name):
            student = entry.name
            if student.startswith("."):
                continue
            if entry.is_symlink():
                refused[student] = (
                    f"submitted/{shown(student)} is a symbolic link, not a folder; nothing under it is read"
                )
                continue
            if not entry.is_dir(follow_symlinks=False):
                continue
            problem = id_problem(student)
            if problem:
                refused[student] = f"student id {shown(student)} cannot be graded: {problem}"
                continue
            student_dir = Path(entry.path)
            try:
                links = [
                    f"submitted/{student}/{link}"
                    for a in every
                    if os.path.lexists(student_dir / a)
                    for link in links_under(student_dir / a)
                ]
            except HandInError as exc:
                refused[student] = str(exc)
                continue
            if links:
                refused[student] = (
                    f"symbolic link(s) {', '.join(map(shown, links))}: a link is never followed or graded "
                    f"(hand in the notebook itself)"
                )
                continue
            for assignment, names in notebooks.items():
                folder = student_dir / assignment
                if any(is_plain_file(folder / name) for name in names):
                    handed_in.setdefault(student, []).append(assignment)
                elif is_plain_dir(folder):
                    empty.setdefault(student, []).append(assignment)
    return handed_in, empty, refused


def lab_notebooks(submitted: Path, student: str, others: dict[str, dict[str, str]], graded: set[str]) -> list[Path]:
    """The student's notebooks of the course's other assignments (``others``: ``{assignment:
    {file: topic}}``) for the topics not graded in this run: a lab runs the student's own
    functions of other topics (the rnn lab trains with their optimizers' ``adam``), so its
    submission is all their notebooks, as `seqlab grade` takes a whole submission. Those topics
    are exported beside the graded ones and never graded here (``only``)."""
    found = []
    for assignment, names in others.items():
        for name, topic in names.items():
            path = submitted / student / assignment / name
            if topic not in graded and is_plain_file(path):
                found.append(path)
    return found
