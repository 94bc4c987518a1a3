"""The LMS gradebooks round-trip through the formats Canvas and Moodle document for their grade
imports: the headers, the SIS id columns, Canvas's Points Possible row; and the roster check
names who is missing and who is unknown."""

from __future__ import annotations

import csv
import io

from seqlab.lms import CANVAS_IDENTITY, POINTS_POSSIBLE, write_lms

# a Canvas gradebook export, as an instructor downloads it (with its Points Possible row)
CANVAS_ROSTER = """Student,ID,SIS User ID,SIS Login ID,Section,Quiz 1 (101)
    Points Possible,,,,,10
"Lovelace, Ada",2001,S-01,ada,Lab A,7
"Babbage, Charles",2002,S-02,charles,Lab A,
"Hopper, Grace",2003,S-03,grace,Lab B,9
"""

MOODLE_ROSTER = """First name,Last name,ID number,Institution,Department,Email address
Ada,Lovelace,S-01,,,ada@uni.example
Grace,Hopper,S-03,,,grace@uni.example
"""


def _read(path):
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_canvas_and_moodle_files_round_trip_with_the_roster(tmp_path):
    roster = tmp_path / "canvas_roster.csv"
    roster.write_text(CANVAS_ROSTER, encoding="utf-8")
    grades = {"ada": 81.5, "grace": None, "mallory": 12.0}  # grace not graded; mallory not on the roster
    folder, missing, unknown = write_lms(tmp_path, grades, 112.0, assignment="seqlab code (7)", roster_path=roster)
    canvas = _read(folder / "canvas.csv")
    assert tuple(canvas[0][:5]) == CANVAS_IDENTITY and canvas[0][5] == "seqlab code (7)"
    assert canvas[1][0].strip() == POINTS_POSSIBLE and canvas[1][5] == "112"
    rows = {r[3]: r for r in canvas[2:]}  # by SIS Login ID
    assert rows["ada"] == ["Lovelace, Ada", "2001", "S-01", "ada", "Lab A", "81.5"]
    assert rows["grace"][5] == "" and rows["charles"][5] == ""  # an empty grade changes nothing in Canvas
    assert "mallory" not in rows and unknown == ["mallory"]
    assert {r["SIS Login ID"] for r in missing} == {"charles"}
    check = (folder / "roster_check.txt").read_text()
    assert "charles" in check and "mallory" in check and "'SIS Login ID'" in check
    moodle = _read(folder / "moodle.csv")
    assert moodle[0] == ["SIS Login ID", "seqlab code (7)"] or moodle[0][0] in (
        "Email address",
        "ID number",
        "Username",
    )


def test_moodle_uses_the_rosters_email_or_id_number(tmp_path):
    roster = tmp_path / "moodle.csv"
    roster.write_text(MOODLE_ROSTER, encoding="utf-8")
    folder, missing, unknown = write_lms(
        tmp_path, {"S-01": 50.0, "S-03": 60.25}, 100.0, assignment="Exam", roster_path=roster
    )
    moodle = _read(folder / "moodle.csv")
    assert moodle == [["Email address", "Exam"], ["ada@uni.example", "50"], ["grace@uni.example", "60.25"]]
    assert not missing and not unknown
    canvas = _read(folder / "canvas.csv")
    assert canvas[2][:4] == ["Ada Lovelace", "", "S-01", "ada@uni.example"]


def test_without_a_roster_the_name_is_the_login(tmp_path):
    folder, _, _ = write_lms(tmp_path, {"alice": 3.0}, 5.0, assignment="seqlab")
    assert _read(folder / "canvas.csv")[2] == ["alice", "", "", "alice", "", "3"]
    assert _read(folder / "moodle.csv") == [["Username", "seqlab"], ["alice", "3"]]
