"""Who a hand-in is, read from the name an LMS's bulk download gives it.

An instructor who downloads every submission of an assignment gets files named by the LMS, and
grade-all names each hand-in by its file or folder. These names carry the LMS's own id of the
student, which the LMS's gradebook import matches on; reading it binds the grade to the right
student with no renaming by hand (``seqlab.lms`` uses it).

* Canvas (Assignment > Download Submissions): ``<name>_<user id>_<attachment id>_<file>``, where
  ``<name>`` is the sortable name ("Lovelace, Ada") in lower case with everything but letters,
  digits and ``_`` taken out (``lovelaceada``), ``LATE_`` (``late_`` in older versions) comes
  before the user id when the submission was late, and ``<file>`` is the file as uploaded, with
  Canvas's ``-1``, ``-2``... where an upload of the same name was already in the student's files
  (a resubmission). Canvas takes any ``_<digits>_`` out of the name, so the first
  ``_<digits>_<digits>_`` is the user id and the attachment id. With anonymous grading the name
  and user id are ``anon_<anonymous id>``, which names nobody: refused.
* Moodle (Assignment > Download all submissions): ``<Full Name>_<participant id>_assignsubmission_
  <plugin>`` as a folder holding the student's files ("download submissions in folders", the
  default since Moodle 3.1), or as the prefix of each file (``..._assignsubmission_file_<file>``),
  older versions with a trailing ``_`` on the folder too. Moodle writes ``_`` in the full name as
  a space. The number is the assignment's participant id (``Participant 12345`` in the grading
  worksheet, the name under blind marking), not the user id.

A name read neither way is no LMS name: it stays the student's name, as before. A name read but
unusable (anonymous, an id no LMS issues) is refused with why, for that hand-in only.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..errors import UserError

CANVAS = "Canvas"
MOODLE = "Moodle"
# An LMS id is a database key: Canvas's (shard and local id together) and Moodle's are 64-bit
# integers, so at most 19 digits. A longer run of digits is some other number (a timestamp, a
# phone number) in a name that only looks like an LMS one; reading it as an id would bind a
# grade to a student nobody meant.
MAX_ID_DIGITS = 19

# [0-9], never \d: \d also takes other scripts' digits (Arabic-Indic, Devanagari...), which no
# LMS writes in an id and which would read as a different id than the one the roster holds.
_CANVAS = re.compile(r"(?P<who>.*?)_(?:(?P<late>(?i:late))_)?(?P<id>[0-9]+)_(?P<attachment>[0-9]+)_(?P<file>.+)", re.S)
_CANVAS_ANON = re.compile(r"(?:(?i:late)_)?anon_(?P<anon>[A-Za-z0-9]+)_[0-9]+_.+", re.S)
# Moodle's full name never holds "_" (it writes it as a space), so the first "_" ends it: a Canvas
# name whose uploaded file happens to read "..._12_assignsubmission_file" is no Moodle name.
_MOODLE = re.compile(r"(?P<who>[^_]*)_(?P<id>[0-9]+)_assignsubmission_(?P<plugin>[a-z]+)(?:_(?P<file>.*))?", re.S)
_RESUBMITTED = re.compile(r"(?P<stem>.+)-(?P<n>[0-9]{1,3})")


class LmsNameError(UserError):
    """A hand-in's name reads as an LMS download's but names no student the LMS can match."""


@dataclass(frozen=True)
class LmsHandIn:
    """A hand-in's name as its LMS wrote it: ``lms`` (Canvas or Moodle), ``lms_id`` (Canvas's user
    id, Moodle's participant id, digits), ``who`` (the name as written), ``late`` (Canvas's LATE
    marker), ``file`` (as uploaded, Canvas's resubmission suffix off) and ``resubmission`` (that
    suffix's number, 0 without one)."""

    lms: str
    lms_id: str
    who: str
    late: bool = False
    file: str = ""
    resubmission: int = 0

    def describe(self) -> str:
        who = f"{self.lms} {'participant' if self.lms == MOODLE else 'user'} {self.lms_id}"
        notes = [f"'{self.who}'" if self.who else "", "late" if self.late else ""]
        notes.append(f"resubmission {self.resubmission}" if self.resubmission else "")
        return who + (f" ({', '.join(n for n in notes if n)})" if any(notes) else "")


def _strip_zip(name: str) -> str:
    return name[:-4] if name.lower().endswith(".zip") and len(name) > 4 else name


def _checked_id(lms: str, digits: str, name: str) -> str:
    if len(digits) > MAX_ID_DIGITS:
        raise LmsNameError(
            f"{name}: reads as a {lms} download name, but {digits} has {len(digits)} digits and no {lms} id "
            f"has more than {MAX_ID_DIGITS}; rename the hand-in to the student's login to grade it under that"
        )
    return str(int(digits))  # the roster writes 11004, never 011004


def read_lms_name(name: str) -> LmsHandIn | None:
    """The LMS's reading of a hand-in named ``name`` (a file or folder name, ``.zip`` or not), or
    None when it is no LMS download name. Raises LmsNameError for one that names no student."""
    # NFC: a name unzipped on macOS arrives decomposed (u + combining diaeresis); the LMS wrote it composed
    text = unicodedata.normalize("NFC", _strip_zip(name))
    moodle = _MOODLE.fullmatch(text)
    if moodle:
        lms_id = _checked_id(MOODLE, moodle["id"], name)
        return LmsHandIn(MOODLE, lms_id, moodle["who"].strip(), file=moodle["file"] or "")
    if _CANVAS_ANON.fullmatch(text):
        raise LmsNameError(
            f"{name}: a Canvas download under anonymous grading names no student (anon_ ids are in no "
            "gradebook export); grade it in SpeedGrader, or download again once the grades are posted"
        )
    canvas = _CANVAS.fullmatch(text)
    if not canvas:
        return None
    lms_id = _checked_id(CANVAS, canvas["id"], name)
    file, resubmission = canvas["file"], 0
    resubmitted = _RESUBMITTED.fullmatch(file.rsplit(".", 1)[0] if "." in file[1:] else file)
    if resubmitted:
        resubmission = int(resubmitted["n"])
        ext = file[len(resubmitted.group(0)) :]
        file = resubmitted["stem"] + ext
    return LmsHandIn(CANVAS, lms_id, canvas["who"], late=bool(canvas["late"]), file=file, resubmission=resubmission)


@dataclass(frozen=True)
class Readings:
    """A class's names read: ``read`` (name -> LmsHandIn), ``refused`` (name -> why) and ``shared``
    (name -> why: two or more hand-ins read as one student, so none of them is that student's
    grade until the instructor keeps one)."""

    read: dict[str, LmsHandIn]
    refused: dict[str, str]
    shared: dict[str, str]


def read_names(names: dict[str, str]) -> Readings:
    """``names``: seqlab's name of each hand-in -> the name it was handed in under. Each is read
    on its own: whatever one name is, it costs no other its reading."""
    read: dict[str, LmsHandIn] = {}
    refused: dict[str, str] = {}
    for name, handed in names.items():
        try:
            found = read_lms_name(handed)
        except LmsNameError as exc:
            refused[name] = str(exc)
            continue
        if found is not None:
            read[name] = found
    by_student: dict[tuple[str, str], list[str]] = {}
    for name, found in read.items():
        by_student.setdefault((found.lms, found.lms_id), []).append(name)
    shared: dict[str, str] = {}
    for (lms, lms_id), group in by_student.items():
        if len(group) > 1:
            for name in group:
                why = (
                    f"{len(group)} hand-ins read as {lms} {'participant' if lms == MOODLE else 'user'} {lms_id} "
                    f"({', '.join(sorted(group))}): which is the student's grade is not ours to pick; "
                    "keep one in the class folder and run again"
                )
                shared[name] = why
                del read[name]
    return Readings(read, refused, shared)


def loose_file_note(name: str) -> str:
    """For a class folder's entry that is no hand-in (a loose file): what to do when it is one
    module file of an LMS download whose students uploaded their files one by one, else ""."""
    try:
        found = read_lms_name(name)
    except LmsNameError:
        return ""
    if found is None or not name.endswith(".py"):
        return ""
    text = unicodedata.normalize("NFC", name)
    moodle, canvas = _MOODLE.fullmatch(text), _CANVAS.fullmatch(text)
    folder = (
        text[: moodle.start("file") - 1] if moodle else text[: canvas.start("file")] + "exercises" if canvas else ""
    )
    return (
        f"; it is one file of {found.describe()}'s {found.lms} submission: put that student's .py files in "
        f"a folder named {folder!r} and run again"
        if folder
        else ""
    )
