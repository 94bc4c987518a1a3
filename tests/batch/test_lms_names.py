"""Hand-ins named as Canvas's and Moodle's bulk downloads name them reach the right student in the
LMS files: generated names (any script, late markers, resubmission suffixes, blind marking), the
names that must be refused, and a class in which one odd name costs no one else."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqlab.lms import write_lms
from seqlab.paths import EXERCISES_DIR
from seqlab.submission.handins import hand_ins
from seqlab.submission.lms_names import CANVAS, MOODLE, LmsNameError, read_lms_name, read_names

# Names as people have them: letters of any script, marks, spaces, apostrophes, hyphens, commas
# and digits (a "II", a "3rd"); "_" is drawn on its own below, where the LMS's rule for it matters.
PERSON = st.text(
    alphabet=st.characters(categories=("L", "M", "Nd", "Zs"), include_characters="'-,.", codec="utf-8"),
    max_size=24,
)
IDS = st.integers(min_value=1, max_value=2**63 - 1)  # database keys: 64-bit, never 0
# what students name their uploads: anything but the characters Canvas replaces with "_"
UPLOAD = st.text(
    alphabet=st.characters(exclude_categories=("Cs", "Cc"), exclude_characters='\x00/\\:*?"<>|', codec="utf-8"),
    min_size=1,
    max_size=20,
)


def canvas_download_name(sortable: str, late: str, user_id: int, attachment: int, upload: str, copy: int) -> str:
    """The name Canvas's Download Submissions gives one uploaded file (its documented rule: the
    sortable name in lower case with every ``_<digits>_`` closed up, ``LATE`` when late, the user
    id, all but word characters taken out; then the attachment id and the upload's own name, with
    ``-N`` where that name was already taken in the student's files). ``late``: "" or the marker,
    ``LATE`` (``late`` in older versions)."""
    who = re.sub(r"_([0-9]+)_", r"\1", sortable.lower())
    # Ruby's compact: a name of "" stays (the name "_11004"), the absent LATE goes
    base = re.sub(r"[^\w]", "", "_".join(p for p in (who, late or None, str(user_id)) if p is not None))
    stem, dot, ext = upload.rpartition(".") if "." in upload[1:] else (upload, "", "")
    uploaded = f"{stem}-{copy}{dot}{ext}" if copy else upload
    return f"{base}_{attachment}_{uploaded}"


def moodle_download_name(full_name: str, participant: int, upload: str | None, old: bool) -> str:
    """Moodle's "Download all submissions" name: the full name with "_" written as a space, the
    participant id, the plugin; a folder (``upload`` None; older versions end it with "_") or one
    file's prefix. Moodle's clean_filename takes out the characters no file name may hold."""
    prefix = re.sub(r'[\x00-\x1f/\\:*?"<>|]', "", f"{full_name.replace('_', ' ')}_{participant}")
    folder = f"{prefix}_assignsubmission_file"
    return folder + ("_" if old else "") if upload is None else f"{folder}_{upload}"


# make test draws a few dozen names per property (each under half a second); the bank draws
# thousands (make test-banks), where a rare shape (an empty name, a name of digits) is met.
QUICK = settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow], deadline=None)
MANY = settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow], deadline=None)
CANVAS_NAMES = st.tuples(
    PERSON,
    st.sampled_from(["", "LATE", "late"]),
    IDS,
    IDS,
    UPLOAD,
    st.integers(min_value=0, max_value=40),
    st.booleans(),
)
MOODLE_NAMES = st.tuples(PERSON, IDS, st.one_of(st.none(), UPLOAD), st.booleans(), st.booleans())


def reads_as_its_canvas_user(sortable, late, user_id, attachment, upload, copy, zipped):
    name = canvas_download_name(sortable, late, user_id, attachment, upload, copy)
    found = read_lms_name(name + (".zip" if zipped else ""))
    assert found is not None, name
    assert (found.lms, found.lms_id, found.late) == (CANVAS, str(user_id), bool(late)), name
    stem = upload.rpartition(".")[0] if "." in upload[1:] else upload
    if copy and not re.search(r"-[0-9]{1,3}$", stem):  # an upload named "hw-2" already reads as a copy
        assert found.resubmission == copy, name


def reads_as_its_moodle_participant(full_name, participant, upload, old, blind):
    name = moodle_download_name("Participant" if blind else full_name, participant, upload, old)
    found = read_lms_name(name)
    assert found is not None and (found.lms, found.lms_id) == (MOODLE, str(participant)), name


@QUICK
@given(CANVAS_NAMES)
def test_every_canvas_download_name_reads_as_its_user(drawn):
    reads_as_its_canvas_user(*drawn)


@QUICK
@given(MOODLE_NAMES)
def test_every_moodle_download_name_reads_as_its_participant(drawn):
    reads_as_its_moodle_participant(*drawn)


@pytest.mark.bank
@MANY
@given(CANVAS_NAMES)
def test_bank_canvas_download_names(drawn):
    reads_as_its_canvas_user(*drawn)


@pytest.mark.bank
@MANY
@given(MOODLE_NAMES)
def test_bank_moodle_download_names(drawn):
    reads_as_its_moodle_participant(*drawn)


def test_real_looking_names_and_their_parts():
    assert read_lms_name("lovelaceada_11004_90004_exercises.zip").describe() == "Canvas user 11004 ('lovelaceada')"
    late = read_lms_name("hopperg_LATE_11005_90011_exercises-1.zip")
    assert (late.lms_id, late.late, late.resubmission, late.file) == ("11005", True, 1, "exercises")
    assert read_lms_name("hopperg_late_11005_90011_exercises.zip").late  # older Canvas wrote it lower case
    assert read_lms_name("müllerjürgen_31_90017_hw.zip").who == "müllerjürgen"
    # decomposed (macOS's unzip): the same reading as the composed name Canvas wrote
    assert read_lms_name("mu\u0308llerju\u0308rgen_31_90017_hw.zip").who == "müllerjürgen"
    moodle = read_lms_name("Ada Lovelace_123456_assignsubmission_file")
    assert (moodle.lms, moodle.lms_id, moodle.who) == (MOODLE, "123456", "Ada Lovelace")
    assert read_lms_name("Ada Lovelace_123456_assignsubmission_file_").lms_id == "123456"
    assert read_lms_name("Participant_77_assignsubmission_file_exercises.zip").lms_id == "77"
    # a Canvas name whose upload reads like Moodle's marker is still Canvas's (Moodle names hold no "_")
    assert read_lms_name("ada_11004_90004_x_12_assignsubmission_file.zip").lms == CANVAS
    for plain in ("alice", "alice.zip", "s001", "bob-2", "team_7", "x_1_y", "Ada Lovelace"):
        assert read_lms_name(plain) is None, plain


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("anon_Ab3dE_90004_exercises.zip", "anonymous grading"),
        ("LATE_anon_Ab3dE_90004_exercises.zip", "anonymous grading"),
        ("ada_12345678901234567890_90004_exercises.zip", "20 digits"),
        ("Ada_12345678901234567890_assignsubmission_file", "no Moodle id"),
    ],
)
def test_names_that_name_no_student_are_refused_saying_why(name, says):
    with pytest.raises(LmsNameError, match=says):
        read_lms_name(name)


REFUSED = st.one_of(
    # Canvas under anonymous grading: anon_ and Canvas's anonymous id (letters and digits), LATE or not
    st.builds(
        lambda late, anon, attachment, upload: f"{late}anon_{anon}_{attachment}_{upload}",
        st.sampled_from(["", "LATE_", "late_"]),
        st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1, max_size=8),
        IDS,
        UPLOAD,
    ),
    # an "id" of 20 or more digits, in either LMS's shape: no 64-bit key is that long
    st.builds(
        lambda who, digits, upload, moodle: (
            f"{who.replace('_', ' ')}_{digits}_assignsubmission_file" if moodle else f"{who}_{digits}_1_{upload}"
        ),
        PERSON,
        st.integers(min_value=10**19, max_value=10**40),
        UPLOAD,
        st.booleans(),
    ),
)


@QUICK
@given(REFUSED)
def test_generated_names_that_name_no_student_are_refused_naming_the_file(name):
    with pytest.raises(LmsNameError) as refused:
        read_lms_name(name)
    message = str(refused.value)
    assert message.startswith(f"{name}: ") and ("anonymous" in message or "digits" in message)


def test_digits_of_other_scripts_are_no_id():
    # "١١٠٠٤" is 11004 in Arabic-Indic digits: no LMS writes an id so, and it is no roster's 11004
    assert read_lms_name("ada_\u0661\u0661\u0660\u0660\u0664_90004_hw.zip") is None


CANVAS_ROSTER = """Student,ID,SIS User ID,SIS Login ID,Section,Lab 1 (7)
    Points Possible,,,,,10
"Lovelace, Ada",11004,S-01,ada,A,
"Hopper, Grace",11005,S-02,grace,A,
"Turing, Alan",11006,S-03,alan,B,
"""


def _rows(path):
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_canvas_download_names_reach_their_rows_with_and_without_a_roster(tmp_path):
    grades = {"lovelaceada_11004_90004_exercises": 80.0, "hopperg_LATE_11005_90011_exercises-1": 70.5}
    sources = {name: name + ".zip" for name in grades} | {"bob": "bob"}
    grades["bob"] = 12.0  # a plain name, not on the roster
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_ROSTER, encoding="utf-8")
    folder, missing, unknown = write_lms(
        tmp_path / "with", grades, 112.0, assignment="Lab 1 (7)", roster_path=roster, sources=sources
    )
    by_login = {r[3]: r[5] for r in _rows(folder / "canvas.csv")[2:]}
    assert by_login == {"ada": "80", "grace": "70.5", "alan": ""}
    assert unknown == ["bob"] and [r["SIS Login ID"] for r in missing] == ["alan"]
    check = (folder / "roster_check.txt").read_text(encoding="utf-8")
    assert "Canvas user 11005 ('hopperg', late, resubmission 1)" in check
    folder, _, _ = write_lms(tmp_path / "without", grades, 112.0, assignment="Lab 1 (7)", sources=sources)
    rows = {r[0]: r for r in _rows(folder / "canvas.csv")[2:]}
    assert rows["lovelaceada_11004_90004_exercises"][1:4] == ["11004", "", ""]  # Canvas matches by ID
    assert rows["bob"][1:4] == ["", "", "bob"]
    assert _rows(folder / "moodle.csv") == [["Username", "Lab 1 (7)"], ["bob", "12"]]


def test_moodle_download_names_reach_their_rows_through_the_grading_worksheet(tmp_path):
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(
        "Identifier,Full name,Email address,Status,Grade,Maximum Grade\n"
        "Participant 123456,Ada Lovelace,ada@uni.example,Submitted,,100\n"
        "Participant 123457,Grace Hopper,grace@uni.example,Submitted,,100\n",
        encoding="utf-8",
    )
    grades = {"Ada_Lovelace_123456_assignsubmission_file+0123abcd": 55.0}
    sources = {"Ada_Lovelace_123456_assignsubmission_file+0123abcd": "Ada Lovelace_123456_assignsubmission_file"}
    folder, missing, unknown = write_lms(
        tmp_path, grades, 100.0, assignment="Lab", roster_path=worksheet, sources=sources
    )
    assert _rows(folder / "moodle.csv") == [
        ["Email address", "Lab"],
        ["ada@uni.example", "55"],
        ["grace@uni.example", ""],
    ]
    assert not unknown and [r["Full name"] for r in missing] == ["Grace Hopper"]


def test_two_hand_ins_of_one_student_are_neither_picked_and_cost_no_one_else(tmp_path):
    names = ["lovelaceada_11004_90004_exercises", "lovelaceada_11004_90005_exercises-1", "turinga_11006_90006_ex"]
    readings = read_names({n: n for n in names} | {"anon_Ab3dE_90007_ex": "anon_Ab3dE_90007_ex"})
    assert set(readings.shared) == set(names[:2]) and "not ours to pick" in readings.shared[names[0]]
    assert set(readings.read) == {names[2]} and set(readings.refused) == {"anon_Ab3dE_90007_ex"}
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_ROSTER, encoding="utf-8")
    grades = {n: 10.0 * (i + 1) for i, n in enumerate([*names, "anon_Ab3dE_90007_ex"])}
    folder, _, unknown = write_lms(tmp_path, grades, 50.0, assignment="Lab", roster_path=roster)
    by_login = {r[3]: r[5] for r in _rows(folder / "canvas.csv")[2:]}
    assert by_login == {"ada": "", "grace": "", "alan": "30"}
    assert sorted(unknown) == sorted([*names[:2], "anon_Ab3dE_90007_ex"])
    check = (folder / "roster_check.txt").read_text(encoding="utf-8")
    assert "keep one in the class folder" in check and "anonymous grading" in check


def test_a_plain_name_and_a_download_name_of_one_student_bind_neither(tmp_path):
    """ "ada" (the roster's login) and Canvas's name for user 11004 (Ada too) are two hand-ins of one
    student: neither is her grade in the LMS files, both are named with why, and Grace's is hers."""
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_ROSTER, encoding="utf-8")
    grades = {"ada": 50.0, "lovelaceada_11004_90004_exercises": 60.0, "grace": 70.0}
    folder, _, unknown = write_lms(tmp_path, grades, 100.0, assignment="Lab", roster_path=roster)
    by_login = {r[3]: r[5] for r in _rows(folder / "canvas.csv")[2:]}
    assert by_login == {"ada": "", "grace": "70", "alan": ""}
    assert sorted(unknown) == ["ada", "lovelaceada_11004_90004_exercises"]
    check = (folder / "roster_check.txt").read_text(encoding="utf-8")
    assert "2 hand-ins (ada, lovelaceada_11004_90004_exercises) are the roster's ada" in check
    assert "Graded but not on the roster, left out of the LMS files (0)" in check


@given(
    st.lists(st.tuples(PERSON, IDS, st.sampled_from(["", "LATE"])), min_size=1, max_size=8, unique_by=lambda t: t[1]),
    st.text(max_size=40),
)
@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_one_odd_name_costs_no_other_student(tmp_path_factory, students, odd):
    """A class of Canvas names and one name of anything at all: every student whose id no other
    hand-in reads as is bound to their row with their grade, whatever the odd name is."""
    out = tmp_path_factory.mktemp("class")
    names = {
        canvas_download_name(who, late, uid, 90000 + i, "ex.zip", 0): uid for i, (who, uid, late) in enumerate(students)
    }
    roster = out / "roster.csv"
    lines = ["Student,ID,SIS Login ID"] + [f"s{uid},{uid},login{uid}" for uid in names.values()]
    roster.write_text("\n".join(lines) + "\n", encoding="utf-8")
    grades = {name: float(i) for i, name in enumerate(names)}
    if odd not in grades:
        grades[odd] = 99.0
    readings = read_names({n: n for n in grades})
    folder, _, _ = write_lms(out, grades, 100.0, assignment="Lab", roster_path=roster)
    by_login = {r[3]: r[5] for r in _rows(folder / "canvas.csv")[2:]}
    odd_reading = readings.read.get(odd) or (None if odd not in readings.shared else read_lms_name(odd))
    for name, uid in names.items():
        if odd_reading is not None and odd_reading.lms_id == str(uid):
            continue  # the odd name claims this very student: neither is picked (the test above)
        assert by_login[f"login{uid}"] == f"{grades[name]:g}", (name, odd)


def test_loose_module_files_of_a_download_say_which_folder_makes_them_a_hand_in(tmp_path):
    """Canvas names each uploaded file on its own: loose .py files are no hand-in, and the skip says
    which folder makes them one; moved there, they read as their student's."""
    klass = tmp_path / "class"
    klass.mkdir()
    for attachment, module in ((90004, "rnn.py"), (90005, "attention.py")):
        (klass / f"lovelaceada_11004_{attachment}_{module}").write_text("x = 1\n", encoding="utf-8")
    (klass / "notes.txt").write_text("not a hand-in", encoding="utf-8")
    skipped = dict(hand_ins(klass).skipped)
    assert skipped["notes.txt"] == "not a folder or a .zip"
    said = skipped["lovelaceada_11004_90004_rnn.py"]
    folder = re.search(r"a folder named '([^']+)'", said)[1]
    assert folder == "lovelaceada_11004_90004_exercises" and "Canvas user 11004" in said
    (klass / folder).mkdir()
    for loose in klass.glob("lovelaceada_*.py"):
        loose.rename(klass / folder / loose.name.split("_", 3)[3])
    found = hand_ins(klass)
    assert list(found.named) == [folder] and read_lms_name(folder).lms_id == "11004"


@pytest.mark.e2e
def test_grade_all_on_an_lms_download_puts_each_grade_in_its_students_row(tmp_path):
    """seqlab grade-all on a class folder as the LMSs' downloads unzip: a Canvas zip (late, a
    resubmission) and a Moodle folder (its name renamed for the results folder). Each grade reaches
    its student's row by the id in the name, and no hand-in is said to need matching by hand."""
    klass = tmp_path / "class"
    moodle = klass / "Ada Lovelace_123456_assignsubmission_file"
    shutil.copytree(EXERCISES_DIR, moodle / "exercises")  # the stubs: quick to grade, 0 points
    with zipfile.ZipFile(klass / "hopperg_LATE_11005_90011_exercises-1.zip", "w") as archive:
        for path in sorted(EXERCISES_DIR.glob("*.py")):
            archive.write(path, f"exercises/{path.name}")
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_ROSTER, encoding="utf-8")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "seqlab", "grade-all", str(klass), "--out", str(out), "--no-labs"]
    proc = subprocess.run([*command, "--jobs", "1", "--lms-roster", str(roster)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "graded under a name not their own" not in proc.stdout
    by_login = {r[3]: r[5] for r in _rows(out / "lms" / "canvas.csv")[2:]}
    assert by_login == {"ada": "", "grace": "0", "alan": ""}  # Canvas user 11005 is grace
    check = (out / "lms" / "roster_check.txt").read_text(encoding="utf-8")
    assert "Moodle participant 123456 ('Ada Lovelace')" in check and "Canvas user 11005" in check
