"""A class's hand-ins: found in the class folder, named so that no two can share a folder, a
gradebook row or an output file, and read into plain folders (``seqlab.submission``). Whatever
one hand-in is (a corrupt zip, a name that is not UTF-8, a 1000-deep tree, a name that is
console markup), it costs nothing but its own row: ``discover`` turns its problem into that
submission's reason, for grade-all (``seqlab.batch``) to record.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from . import SubmissionError, is_submission, read_submission
from .lms_names import loose_file_note

# What grade-all writes into its output folder beside the submissions' own folders (and their
# ``.tmp`` twins while written); a submission named like one is renamed, so that neither is lost.
OWN_NAMES = ("gradebook", "class_report", "similarity")
LMS_DIR = "lms"  # the LMS gradebooks' folder (seqlab.lms): a submission named so is renamed too
WORK_DIR = "_submissions"  # the copies read from the hand-ins; no safe name starts with "_"


@dataclass
class Submission:
    name: str
    source: Path  # the folder or zip as handed in
    path: Path | None  # the copy holding exercises/ (None when it could not be read)
    problem: str = ""


def safe_submission_name(name: str) -> str:
    """A hand-in's name as a results folder and gradebook key: letters, digits and ``._-`` only,
    starting with a letter or digit, never one of the files grade-all writes beside the results
    folders. grade-all keeps a name as it is only where this leaves it so (:func:`hand_ins`)."""
    # never starting with "-" either: such a name reads as an option to any command it is passed
    # to, and as a formula to a spreadsheet opening the gradebook
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).lstrip("._-").rstrip("._") or "submission"
    own = safe.casefold().startswith(OWN_NAMES) or safe.casefold() == LMS_DIR
    return f"student-{safe}" if own else safe


def _hand_in_id(entry: Path) -> str:
    """What a class folder's entry is named by: a zip by its stem, anything else by its name."""
    is_zip = entry.suffix.lower() == ".zip" and not entry.is_dir() and not entry.is_symlink()
    return entry.stem if is_zip else entry.name


def _derived_name(entry: Path, digits: int = 12) -> str:
    """A name for a hand-in whose own cannot be used as it is: its safe form, cut short, then
    ``+`` and a hash of the entry's name as bytes (a name that is not UTF-8 hashes too).
    :func:`safe_submission_name` never leaves a ``+``, so no name kept as it is can be one of
    these; two of these are one only if the hashes' first 48 bits are."""
    digest = hashlib.sha256(os.fsencode(entry.name)).hexdigest()[:digits]
    return f"{safe_submission_name(_hand_in_id(entry))[:40]}+{digest}"


def shown(text: str) -> str:
    """``text`` (a file name, a reason naming one) as it can be written anywhere: a name that is
    not UTF-8 reaches Python with surrogates, which no UTF-8 file or terminal takes; they are
    written as ``\\xNN``. Control and format characters are written the same way (``\\x1b``,
    ``\\u202e``): a newline would start a new line in the log, an escape sequence would drive
    the terminal, a right-to-left override or a zero-width character would reorder or hide what
    the instructor reads."""
    out = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(char) in _HIDDEN:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)


# Unicode categories written as escapes by :func:`shown`: controls, format characters (the
# bidirectional overrides, zero-width joiners), line and paragraph separators, surrogates,
# private use and unassigned code points (a terminal shows them as nothing or as anything).
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


@dataclass(frozen=True)
class HandIns:
    """A class folder read: ``named`` (name -> hand-in), ``skipped`` ([(entry, why)]: no hand-in)
    and ``renamed`` ([(entry, name, why)]: hand-ins graded under a derived name)."""

    named: dict[str, Path]
    skipped: list[tuple[str, str]]
    renamed: list[tuple[str, str, str]]


def hand_ins(submissions_dir: Path) -> HandIns:
    """Every hand-in of a class folder, each with a name of its own (its results folder and
    gradebook row). A hand-in keeps its name where :func:`safe_submission_name` leaves it as it is
    and no other hand-in's is the same up to case (``alice/`` and ``alice.zip``; ``Bob`` and
    ``bob``, one folder on a case-insensitive disk); any other gets :func:`_derived_name`, and so
    do both of two that would share one: which of them is "alice" is not ours to pick, and
    neither is dropped. No two names can be one, so no hand-in can take another's folder or row."""
    ids: dict[str, list[Path]] = {}
    skipped = []
    for entry in sorted(Path(submissions_dir).iterdir()):
        if is_submission(entry):
            own = _hand_in_id(entry)
            # only plain names can clash: any other is derived, and a derived name is no plain one
            # (a folder "ſam", long s, folds to "sam" but takes nothing from sam)
            key = own.casefold() if safe_submission_name(own) == own else "+" + os.fsencode(entry.name).hex()
            ids.setdefault(key, []).append(entry)
        else:
            why = "hidden" if entry.name.startswith(".") else "not a folder or a .zip" + loose_file_note(entry.name)
            skipped.append((shown(entry.name), why))
    named: dict[str, Path] = {}
    renamed = []
    for entries in ids.values():
        for entry in entries:
            own = _hand_in_id(entry)
            if len(entries) == 1 and safe_submission_name(own) == own:
                named[own] = entry
                continue
            name = _derived_name(entry)
            if name.casefold() in {n.casefold() for n in named}:  # 48 bits alike: the whole hash
                name = _derived_name(entry, digits=64)
            named[name] = entry
            why = (
                f"{' and '.join(shown(e.name) for e in entries)} would "
                f"{'both' if len(entries) == 2 else 'all'} be named {shown(own)!r}"
                if len(entries) > 1
                else "its name is not a plain one (letters, digits and ._-, not one grade-all writes)"
            )
            renamed.append((shown(entry.name), name, why))
    return HandIns(dict(sorted(named.items())), skipped, renamed)


def discover(named: dict[str, Path], work_dir: Path) -> list[Submission]:
    """Every hand-in of :func:`hand_ins` read into ``work_dir/_submissions/<name>``
    (seqlab.submission: the same shapes and messages as ``seqlab grade``). Whatever reading one
    raises is that hand-in's problem, never the class's."""
    found = []
    for name, entry in named.items():
        try:
            copy = read_submission(entry, Path(work_dir) / WORK_DIR / name).folder
            found.append(Submission(name, entry, copy))
        except SubmissionError as exc:
            found.append(Submission(name, entry, None, shown(str(exc))))
        except Exception as exc:  # a reader bug, or a shape it did not foresee: this one only
            why = f"internal error reading it: {type(exc).__name__}: {exc}"
            found.append(Submission(name, entry, None, shown(why)[:500]))
    return found


def unwritten_stubs(sub: Submission) -> int:
    """How many stubs a hand-in left as they were (a stub raises NotImplementedError; its source
    is read as text, never run): a scheduling guess, nothing more. A stub grades in an instant and
    a lab left as one trains nothing, so a hand-in with many of them is short work. ``sub.path``
    is seqlab's own copy (seqlab.submission: regular files only, size-capped)."""
    if sub.path is None:
        return 1 << 30  # not readable: written off at once
    count = 0
    for source in (sub.path / "exercises").glob("*.py"):
        try:
            count += source.read_text(errors="replace").count("NotImplementedError")
        except OSError:
            pass
    return count


def hand_in_digest(sub: Submission) -> str:
    """SHA-256 of what is graded of a hand-in: seqlab's own copy of its exercises/ (each file's
    name and bytes), or the reason it could not be read. A rerun regrades a hand-in whose digest
    changed since its grade was recorded."""
    digest = hashlib.sha256()
    if sub.path is None:
        digest.update(b"unread\0" + str(sub.problem).encode("utf-8", "backslashreplace"))
        return digest.hexdigest()
    for path in sorted((sub.path / "exercises").rglob("*")):
        if path.is_file() and not path.is_symlink():
            digest.update(os.fsencode(path.relative_to(sub.path)) + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()
