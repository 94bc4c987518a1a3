"""Gradebook exports an LMS imports: Canvas's and Moodle's grade-import CSVs, and the roster check.

``grade-all`` and ``exam grade-all`` write ``lms/canvas.csv``, ``lms/moodle.csv`` and
``lms/roster_check.txt`` beside gradebook.csv. With ``--lms-roster FILE`` (the LMS's own class
list: a Canvas gradebook export, or Moodle's participants or grades export) every row carries
the LMS's identifiers; without it the seqlab name stands in for the login. Every cell is
escaped as :func:`seqlab.gradebook.csv_text` escapes it: a display name ``=HYPERLINK(...)``
arrives as text, not a formula.

* Canvas (Grades > Import): the columns ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``,
  ``Section``, then one column per assignment, ``Name`` (a new assignment) or ``Name (id)`` (an
  existing one); the second row is ``Points Possible`` with each assignment's points. Canvas
  matches a row to a student by ``ID``, ``SIS User ID`` or ``SIS Login ID``; an empty grade
  leaves the student's grade as it is.
* Moodle (Grades > Import > CSV file): a header row, one identifier column the import form maps
  to a user field (``Email address``, ``ID number`` or ``Username``) and one column per grade
  item; points are raw scores.

The roster is matched to seqlab's names by the first column (``seqlab`` if the roster has one,
then the logins and ids in ``KEY_COLUMNS`` order) that holds most of them. A hand-in named as
the LMS's bulk download names it (``seqlab.submission.lms_names``) is matched by the id in its
name instead: Canvas's user id to the roster's ``ID``, Moodle's participant id to the grading
worksheet's ``Identifier``; without a roster a Canvas name still goes into canvas.csv by its
``ID``. Who is on the roster without a grade, who was graded without being on it, and which
download names name no one student (anonymous, two hand-ins of one student) is written down,
never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UserError
from .escape import one_line
from .gradebook import csv_text, read_csv, write_text_atomic
from .submission.lms_names import CANVAS, MOODLE, Readings, read_names

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "Points Possible"
# the Student cell of that row as Canvas's own export writes it (the import reads it stripped)
POINTS_POSSIBLE_CELL = "    " + POINTS_POSSIBLE
MOODLE_IDENTIFIERS = ("Email address", "ID number", "Username")
# Roster columns that may hold seqlab's names (a submission folder, an exam student id).
KEY_COLUMNS = ("seqlab", "SIS Login ID", "SIS User ID", "ID number", "Username", "Email address", "ID")
# Moodle's grading worksheet (the assignment's "Download grading worksheet"): "Participant 12345",
# the participant id Moodle's bulk download writes into each hand-in's name.
MOODLE_PARTICIPANT = "Identifier"


@dataclass
class Roster:
    rows: list[dict[str, str]]
    columns: list[str]
    key: str = ""
    name_of: dict[int, str] = field(default_factory=dict)  # row index -> the seqlab name graded for it
    contested: dict[str, str] = field(default_factory=dict)  # name -> why no row is its (a row two names claim)


def load_roster(path: str | Path) -> Roster:
    """The LMS's class list (CSV, UTF-8 with or without a byte-order mark); Canvas's Points
    Possible and Moodle's empty rows are skipped."""
    path = Path(path)
    reader = read_csv(path, UserError)
    columns = [c.strip() for c in reader.fieldnames or []]
    if not any(c in KEY_COLUMNS or c == MOODLE_PARTICIPANT for c in columns):
        raise UserError(f"{path}: the roster needs one of the columns {', '.join(KEY_COLUMNS)}, {MOODLE_PARTICIPANT}")
    rows = []
    for row in reader:
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
        if row.get("Student", "").strip() == POINTS_POSSIBLE or not any(row.values()):
            continue
        rows.append(row)
    return Roster(rows, columns)


def _lms_ids(row: dict[str, str]) -> list[tuple[str, str]]:
    """The LMS ids a roster row carries: Canvas's user id (``ID``), Moodle's participant id
    (the grading worksheet's ``Identifier``, "Participant 12345")."""
    ids = []
    if re.fullmatch(r"[0-9]+", row.get("ID", "")):
        ids.append((CANVAS, str(int(row["ID"]))))
    participant = re.fullmatch(r"[^0-9]*?([0-9]+)", row.get(MOODLE_PARTICIPANT, ""))
    if participant:
        ids.append((MOODLE, str(int(participant[1]))))
    return ids


def match(roster: Roster, names: list[str], readings: Readings | None = None) -> tuple[list[dict[str, str]], list[str]]:
    """Bind ``roster`` to seqlab's ``names``: sets its key column and ``name_of``; returns
    ``(missing, unknown)``: roster rows with no name, names with no roster row (those
    ``readings`` refused or found shared among them). A name read from an LMS download binds by
    that LMS's id; any other by the key column."""
    readings = readings or Readings({}, {}, {})
    wanted = {n for n in names if n not in readings.refused and n not in readings.shared}
    candidates = [c for c in KEY_COLUMNS if c in roster.columns]
    roster.key = max(
        candidates,
        key=lambda c: (len(wanted & {r.get(c, "") for r in roster.rows}), -candidates.index(c)),
        default=MOODLE_PARTICIPANT,
    )
    by_key: dict[str, int] = {}
    by_lms: dict[tuple[str, str], int] = {}
    for n, row in enumerate(roster.rows):
        by_key.setdefault(row.get(roster.key, ""), n)
        for lms_id in _lms_ids(row):
            by_lms.setdefault(lms_id, n)
    roster.name_of, roster.contested = {}, {}
    claims: dict[int, list[str]] = {}
    for name in names:
        found = readings.read.get(name)
        i: int | None = by_lms.get((found.lms, found.lms_id)) if found else None
        # a name the LMS's id binds to no row may still be the roster's login (bob_2_3_final, read
        # as Canvas user 2, is also the login "bob_2_3_final"): the key column's match, as before
        i = by_key.get(name) if i is None and name in wanted else i
        if i is not None:
            claims.setdefault(i, []).append(name)
    for i, claim in claims.items():
        if len(claim) == 1:
            roster.name_of[i] = claim[0]
            continue
        # "ada" and "lovelaceada_2001_..." both Ada's: which is her grade is the instructor's call
        for name in claim:
            roster.contested[name] = (
                f"{len(claim)} hand-ins ({', '.join(claim)}) are the roster's "
                f"{roster.rows[i].get(roster.key, '') or i}: which is the student's grade is not ours to "
                "pick; keep one in the class folder and run again"
            )
    bound = set(roster.name_of.values())
    missing = [r for i, r in enumerate(roster.rows) if i not in roster.name_of]
    return missing, [n for n in names if n not in bound]


def _points(x: float | None) -> str:
    return "" if x is None else f"{round(float(x), 4):g}"


def _grade(roster: Roster, i: int, grades: dict[str, float | None]) -> float | None:
    name = roster.name_of.get(i)
    return grades.get(name) if name is not None else None


def canvas_csv(
    grades: dict[str, float | None],
    max_score: float,
    assignment: str,
    roster: Roster | None,
    readings: Readings | None = None,
) -> str:
    readings = readings or Readings({}, {}, {})
    header = [*CANVAS_IDENTITY, assignment]
    lines = [[POINTS_POSSIBLE_CELL, "", "", "", "", _points(max_score)]]
    if roster is None:
        for name, score in grades.items():
            found = readings.read.get(name)
            if found is not None and found.lms == CANVAS:  # Canvas matches its own user id
                lines.append([name, found.lms_id, "", "", "", _points(score)])
            elif found is None and name not in readings.refused and name not in readings.shared:
                lines.append([name, "", "", name, "", _points(score)])
    else:
        for i, row in enumerate(roster.rows):
            who = (
                row.get("Student")
                or row.get("Full name")
                or " ".join(filter(None, [row.get("First name"), row.get("Last name")]))
            )
            login = row.get("SIS Login ID") or row.get("Username") or row.get("Email address", "")
            sis = row.get("SIS User ID") or row.get("ID number", "")
            score = _grade(roster, i, grades)
            lines.append([who, row.get("ID", ""), sis, login, row.get("Section", ""), _points(score)])
    return csv_text(header, lines)


def moodle_csv(
    grades: dict[str, float | None], assignment: str, roster: Roster | None, readings: Readings | None = None
) -> str:
    readings = readings or Readings({}, {}, {})
    if roster is None:
        # a name read from an LMS download has no Moodle username to go by (the participant id
        # is no user field the import maps): only the grading worksheet as roster binds it
        left = set(readings.read) | set(readings.refused) | set(readings.shared)
        lines = [[name, _points(score)] for name, score in grades.items() if name not in left]
        return csv_text(["Username", assignment], lines)
    ident = next((c for c in MOODLE_IDENTIFIERS if c in roster.columns), roster.key)
    lines = [[row.get(ident, ""), _points(_grade(roster, i, grades))] for i, row in enumerate(roster.rows)]
    return csv_text([ident, assignment], lines)


def roster_check(
    missing: list[dict[str, str]], unknown: list[str], roster: Roster | None, readings: Readings | None = None
) -> str:
    readings = readings or Readings({}, {}, {})
    contested = roster.contested if roster is not None else {}
    lines = _readings_lines(readings, contested)
    turned_down = set(readings.refused) | set(readings.shared) | set(contested)
    unknown = [n for n in unknown if n not in turned_down]
    if roster is None:
        lines.insert(0, "No roster given (--lms-roster): every graded name is exported as the login.")
        if readings.read:
            lines.insert(
                1,
                "Names read from a Canvas download go into canvas.csv by their Canvas user id; names read "
                "from a Moodle download reach moodle.csv only with the assignment's grading worksheet as "
                "--lms-roster (its Identifier column holds the participant ids).",
            )
        return "\n".join(lines) + "\n"
    head = [f"Roster matched on its column {roster.key!r}: {len(roster.name_of)} of {len(roster.rows)} students."]
    head.append(f"On the roster with no graded submission ({len(missing)}):")
    # one line per person, control characters out (a roster's display name is anyone's text)
    who = [
        f"  {one_line(r.get(roster.key, ''))} {one_line(r.get('Student', '') or r.get('Full name', ''))}"
        for r in missing
    ]
    head += [w.rstrip() for w in who] or ["  none"]
    head.append(f"Graded but not on the roster, left out of the LMS files ({len(unknown)}):")
    head += [f"  {one_line(n)}" for n in unknown] or ["  none"]
    return "\n".join(head + lines) + "\n"


def _readings_lines(readings: Readings, contested: dict[str, str]) -> list[str]:
    lines = []
    if readings.read:
        lines.append(f"Read from the LMS's download names ({len(readings.read)}):")
        lines += [f"  {one_line(n)}: {one_line(found.describe())}" for n, found in sorted(readings.read.items())]
    turned_down = {**readings.refused, **readings.shared, **contested}
    if turned_down:
        lines.append(f"Hand-ins that name no one student, left out of the LMS files ({len(turned_down)}):")
        lines += [f"  {one_line(n)}: {one_line(why)}" for n, why in sorted(turned_down.items())]
    return lines


def add_options(parser) -> None:
    parser.add_argument(
        "--lms-roster",
        type=Path,
        default=None,
        metavar="CSV",
        help="the LMS's class list (a Canvas gradebook export, Moodle's participants): the LMS files "
        "in OUT/lms/ carry its ids, and OUT/lms/roster_check.txt lists who is missing or unknown",
    )
    parser.add_argument(
        "--lms-assignment",
        default="seqlab",
        metavar="NAME",
        help="the assignment's column in the LMS files: a name, or Canvas's 'Name (id)' for an existing one",
    )


def report(folder: Path, missing: list, unknown: list) -> str:
    """One line for the terminal."""
    counts = f" ({len(missing)} on the roster without a grade, {len(unknown)} graded but not on it)"
    return f"LMS gradebooks: {folder / 'canvas.csv'}, {folder / 'moodle.csv'}" + (counts if missing or unknown else "")


def write_lms(
    out: Path,
    grades: dict[str, float | None],
    max_score: float,
    *,
    assignment: str,
    roster_path: Path | None = None,
    sources: dict[str, str] | None = None,
) -> tuple[Path, list[dict[str, str]], list[str]]:
    """``out/lms/{canvas.csv, moodle.csv, roster_check.txt}``; ``grades``: name -> points (None:
    not graded); ``sources``: name -> the name the hand-in had in the class folder (an LMS's
    download name, read for the student's LMS id; by default the name itself). Returns the
    folder, the roster rows without a grade and the names left out of the LMS files."""
    roster = load_roster(roster_path) if roster_path is not None else None
    readings = read_names({name: (sources or {}).get(name, name) for name in grades})
    if roster is not None:
        missing, unknown = match(roster, list(grades), readings)
    else:
        missing, unknown = [], sorted({*readings.refused, *readings.shared})
    folder = Path(out) / "lms"
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / "canvas.csv", canvas_csv(grades, max_score, assignment, roster, readings))
    write_text_atomic(folder / "moodle.csv", moodle_csv(grades, assignment, roster, readings))
    write_text_atomic(folder / "roster_check.txt", roster_check(missing, unknown, roster, readings))
    return folder, missing, unknown
