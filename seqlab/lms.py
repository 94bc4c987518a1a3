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
then the logins and ids in ``KEY_COLUMNS`` order) that holds most of them. Who is on the roster
without a grade, and who was graded without being on it, is written down, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import UserError
from .escape import one_line
from .gradebook import csv_text, read_csv, write_text_atomic

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "Points Possible"
# the Student cell of that row as Canvas's own export writes it (the import reads it stripped)
POINTS_POSSIBLE_CELL = "    " + POINTS_POSSIBLE
MOODLE_IDENTIFIERS = ("Email address", "ID number", "Username")
# Roster columns that may hold seqlab's names (a submission folder, an exam student id).
KEY_COLUMNS = ("seqlab", "SIS Login ID", "SIS User ID", "ID number", "Username", "Email address", "ID")


@dataclass
class Roster:
    rows: list[dict[str, str]]
    columns: list[str]
    key: str = ""
    by_name: dict[str, dict[str, str]] = field(default_factory=dict)


def load_roster(path: str | Path) -> Roster:
    """The LMS's class list (CSV, UTF-8 with or without a byte-order mark); Canvas's Points
    Possible and Moodle's empty rows are skipped."""
    path = Path(path)
    reader = read_csv(path, UserError)
    columns = [c.strip() for c in reader.fieldnames or []]
    if not any(c in KEY_COLUMNS for c in columns):
        raise UserError(f"{path}: the roster needs one of the columns {', '.join(KEY_COLUMNS)}")
    rows = []
    for row in reader:
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
        if row.get("Student", "").strip() == POINTS_POSSIBLE or not any(row.values()):
            continue
        rows.append(row)
    return Roster(rows, columns)


def match(roster: Roster, names: list[str]) -> tuple[list[dict[str, str]], list[str]]:
    """Bind ``roster`` to seqlab's ``names``: sets its key column and ``by_name``; returns
    ``(missing, unknown)``: roster rows with no name, names with no roster row."""
    wanted = set(names)
    candidates = [c for c in KEY_COLUMNS if c in roster.columns]
    roster.key = max(
        candidates, key=lambda c: (len(wanted & {r.get(c, "") for r in roster.rows}), -candidates.index(c))
    )
    roster.by_name = {r[roster.key]: r for r in roster.rows if r.get(roster.key) in wanted}
    missing = [r for r in roster.rows if r.get(roster.key) not in wanted]
    unknown = [n for n in names if n not in roster.by_name]
    return missing, unknown


def _points(x: float | None) -> str:
    return "" if x is None else f"{round(float(x), 4):g}"


def canvas_csv(grades: dict[str, float | None], max_score: float, assignment: str, roster: Roster | None) -> str:
    header = [*CANVAS_IDENTITY, assignment]
    lines = [[POINTS_POSSIBLE_CELL, "", "", "", "", _points(max_score)]]
    if roster is None:
        lines += [[name, "", "", name, "", _points(score)] for name, score in grades.items()]
    else:
        for row in roster.rows:
            name = row.get(roster.key, "")
            who = row.get("Student") or " ".join(filter(None, [row.get("First name"), row.get("Last name")]))
            login = row.get("SIS Login ID") or row.get("Username") or row.get("Email address", "")
            sis = row.get("SIS User ID") or row.get("ID number", "")
            lines.append([who, row.get("ID", ""), sis, login, row.get("Section", ""), _points(grades.get(name))])
    return csv_text(header, lines)


def moodle_csv(grades: dict[str, float | None], assignment: str, roster: Roster | None) -> str:
    if roster is None:
        return csv_text(["Username", assignment], [[name, _points(score)] for name, score in grades.items()])
    ident = next((c for c in MOODLE_IDENTIFIERS if c in roster.columns), roster.key)
    lines = [[row.get(ident, ""), _points(grades.get(row.get(roster.key, "")))] for row in roster.rows]
    return csv_text([ident, assignment], lines)


def roster_check(missing: list[dict[str, str]], unknown: list[str], roster: Roster | None) -> str:
    if roster is None:
        return "No roster given (--lms-roster): every graded name is exported as the login.\n"
    lines = [f"Roster matched on its column {roster.key!r}: {len(roster.by_name)} of {len(roster.rows)} students."]
    lines.append(f"On the roster with no graded submission ({len(missing)}):")
    # one line per person, control characters out (a roster's display name is anyone's text)
    lines += [f"  {one_line(r.get(roster.key, ''))} {one_line(r.get('Student', ''))}".rstrip() for r in missing] or [
        "  none"
    ]
    lines.append(f"Graded but not on the roster, left out of the LMS files ({len(unknown)}):")
    lines += [f"  {one_line(n)}" for n in unknown] or ["  none"]
    return "\n".join(lines) + "\n"


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
    out: Path, grades: dict[str, float | None], max_score: float, *, assignment: str, roster_path: Path | None = None
) -> tuple[Path, list[dict[str, str]], list[str]]:
    """``out/lms/{canvas.csv, moodle.csv, roster_check.txt}``; ``grades``: name -> points (None:
    not graded). Returns the folder, the roster rows without a grade and the unknown names."""
    roster = load_roster(roster_path) if roster_path is not None else None
    missing, unknown = match(roster, list(grades)) if roster is not None else ([], [])
    folder = Path(out) / "lms"
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / "canvas.csv", canvas_csv(grades, max_score, assignment, roster))
    write_text_atomic(folder / "moodle.csv", moodle_csv(grades, assignment, roster))
    write_text_atomic(folder / "roster_check.txt", roster_check(missing, unknown, roster))
    return folder, missing, unknown
