"""A submission as handed in -> one plain folder holding ``exercises/<module>.py``.

Every way into grading (``seqlab grade``, ``grade-all``, the Gradescope autograder, nbgrader's
exports through ``grade-all``) reads a submission here, so each accepts the same shapes and says
the same thing about the same problem:

* a folder holding ``exercises/``, or the module files themselves (``rnn.py``, ... at its top);
* either anywhere inside a folder (a checkout, ``alice-main/src/exercises/``);
* a ``.zip`` of any of these, or a folder holding one (a zip inside a zip included).

Where several folders hold module files, ``find`` says which is graded, and the reading's notes
say so. What is graded is always a fresh copy of the regular files only. A symbolic link is
never followed (the ``exercises`` folder itself included: a link to ``../../solutions`` beside
the student's checkout would hand the references in as the student's work), and a link, a FIFO
(reading one blocks), a device or a socket among the files read, or standing in for a module
file or ``exercises/`` anywhere, refuses the submission with the entry named.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .copy import Budget, SubmissionError, Unzipper, copy_file, copy_tree, lstat, refuse
from .find import MODULE_FILES, Candidate, locate

__all__ = ["MODULE_FILES", "Reading", "SubmissionError", "is_submission", "opened", "read_submission", "source_of"]


@dataclass(frozen=True)
class Reading:
    """A submission read: the plain folder made, and what a student should know about how it
    was read (where the graded files came from, what is missing, what was left aside)."""

    folder: Path
    notes: tuple[str, ...] = ()


def is_submission(path: Path) -> bool:
    """Whether a class folder's entry is handed in as a submission (a folder, a .zip, or a link
    to be refused when read) rather than something else there (notes.txt, .DS_Store)."""
    info = lstat(path)
    if info is None or path.name.startswith("."):
        return False
    if stat.S_ISDIR(info.st_mode) or stat.S_ISLNK(info.st_mode):
        return True
    return stat.S_ISREG(info.st_mode) and path.suffix.lower() == ".zip"


def read_submission(source: Path, dest: Path) -> Reading:
    """Copy ``source`` (any shape above) to ``dest/exercises/``; ``dest`` is emptied first.
    Raises SubmissionError, naming the path, for anything that cannot be graded."""
    source, dest = Path(source), Path(dest)
    info = lstat(source)
    if info is None:
        raise SubmissionError(f"{source}: does not exist")
    shutil.rmtree(dest, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="seqlab-unzip-") as scratch:
        try:
            notes = _copy_submission(source, info.st_mode, Path(scratch), dest)
        except SubmissionError:
            shutil.rmtree(dest, ignore_errors=True)
            raise
    (dest / "exercises" / "__init__.py").touch()
    return Reading(dest, notes)


def _copy_submission(source: Path, mode: int, scratch: Path, dest: Path) -> tuple[str, ...]:
    unzipper = Unzipper(scratch)  # one for the hand-in: its caps count every zip in it
    if stat.S_ISREG(mode) and source.suffix.lower() == ".zip":
        folder = unzipper.extract(source, str(source))
    elif stat.S_ISDIR(mode):
        folder = source
    elif stat.S_ISREG(mode):
        raise SubmissionError(f"{source}: not a folder or a .zip")
    else:
        raise refuse(source, mode)
    chosen, others = locate(folder, str(source), unzipper)
    budget = Budget(source)
    exercises = dest / "exercises"
    if chosen.folder.name == "exercises":
        copy_tree(chosen.folder, exercises, budget)
    else:
        exercises.mkdir(parents=True)
        for entry in sorted(os.scandir(chosen.folder), key=lambda e: e.name):
            if entry.name.endswith(".py"):
                copy_file(Path(entry.path), exercises / entry.name, budget)
    return _notes(chosen, others)


def _notes(chosen: Candidate, others: list[Candidate]) -> tuple[str, ...]:
    where = chosen.shown or "the top of the hand-in"
    notes = [f"Graded the files in {where}: " + ", ".join(f"{m}.py" for m in chosen.modules) + "."]
    missing = [name for name in MODULE_FILES if name[:-3] not in chosen.modules]
    if missing:
        them = "it" if len(missing) == 1 else "them"
        notes.append(f"Missing from {where}: {', '.join(missing)}; the functions in {them} score 0.")
    if others:
        shown = [c.shown or "the top of the hand-in" for c in others]
        more = " and more" if len(shown) > 5 else ""
        notes.append(f"Also found exercise files in {', '.join(shown[:5])}{more}; those were not graded.")
    return tuple(notes)


_copies: dict[Path, tuple[Path, Reading]] = {}  # copy made here -> (what it was read from, how)


@contextlib.contextmanager
def opened(source: str | Path) -> Iterator[Path]:
    """``source`` read into a temporary copy for the length of the block. A copy this process made
    and still holds is its own copy: the one a command prespawned a child for is the one graded."""
    source = Path(source)
    if source in _copies:
        yield source
        return
    with tempfile.TemporaryDirectory(prefix="seqlab-submission-") as work:
        reading = read_submission(source, Path(work) / "submission")
        _copies[reading.folder] = (source, reading)
        try:
            yield reading.folder
        finally:
            del _copies[reading.folder]


def source_of(copy: Path) -> Path:
    """What a copy made by :func:`opened` was read from (the path itself otherwise)."""
    return _copies[Path(copy)][0] if Path(copy) in _copies else Path(copy)


def notes_of(copy: Path) -> tuple[str, ...]:
    """How a copy made by :func:`opened` was read (nothing for a path it did not make)."""
    return _copies[Path(copy)][1].notes if Path(copy) in _copies else ()
