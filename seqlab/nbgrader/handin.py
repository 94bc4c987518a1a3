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
import unicodedata

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
