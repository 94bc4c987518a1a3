"""grade-all: each hand-in that stopped the class on its own, as a test. Every one
must leave everyone else graded and recorded (gradebook.csv, the LMS files), be named in its
own row with a clear reason, and count in the run's exit status (1, with the count on the last
line; 0 only when every hand-in was graded)."""

from __future__ import annotations

import csv
import os
import zipfile

import pytest

from tests.batch._faults import (
    ONLY,
    corrupt_deflate,
    deep_folder,
    deep_zip,
    flag_utf8_with_invalid_name,
    link_member_zip,
    non_utf8_name,
    remove,
)
from tests.mutants import make_submission


@pytest.fixture
def tmp_path(tmp_path):
    """pytest's tmp_path, emptied at the end by :func:`remove` (it may hold 1000-deep trees)."""
    yield tmp_path
    for entry in list(tmp_path.iterdir()):
        remove(entry)


def _settings():
    from seqlab.grading import grading_settings
    from seqlab.student.sandbox import Sandbox

    return grading_settings(seed=1, only=ONLY, sandbox=Sandbox("none", "a test of grade-all's class loop"))


def _gradebook(out):
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as handle:
        return {row["submission"]: row for row in csv.DictReader(handle)}


# Each: (writer, the name its row has, what its reason says). No honest code here, so no grading
# process starts: these are the reading stage, run through grade_all's whole class loop.
CASES = {
    "corrupt-deflate": (corrupt_deflate, "corrupt", "not a readable zip (zlib.error"),
    "utf8-flag-invalid-bytes": (flag_utf8_with_invalid_name, "badutf", "not a readable zip (UnicodeDecodeError"),
    "1000-deep-folder": (deep_folder, "deep", "deep: no exercises/ folder"),
    "non-utf8-name": (non_utf8_name, "caf+", "caf\\xe9: no exercises/ folder"),
    "link-named-markup": (link_member_zip, "linked", "linked.zip/[/]: a symbolic link, not followed"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_hand_in_is_its_own_row_and_the_class_is_recorded(tmp_path, case, capsys):
    from seqlab.batch import grade_all

    write, name, why = CASES[case]
    klass, out = tmp_path / "class", tmp_path / "out"
    klass.mkdir()
    write(klass)
    recorded = []
    rows = grade_all(klass, out, _settings(), record=recorded.append)
    (row,) = rows
    assert row["submission"].startswith(name) and row["status"] == "error", row
    assert why in row["reason"], row["reason"]
    book = _gradebook(out)
    assert book[row["submission"]]["status"] == "error" and why in book[row["submission"]]["reason"]
    assert recorded == [rows] and (out / "class_report.html").is_file()
    assert "Traceback" not in capsys.readouterr().err


def test_names_no_two_hand_ins_share_and_no_output_file_can_be_taken(tmp_path):
    """Hand-ins named like grade-all's own outputs, like the renamed form of one of them, like
    each other up to case or a zip's suffix, and not UTF-8: each gets a name of its own, a plain
    name is kept, and no name is one of the files grade-all writes."""
    from seqlab.batch import OWN_NAMES, WORK_DIR, hand_ins, safe_submission_name

    klass = tmp_path / "class"
    klass.mkdir()
    plain = ["alice-2", "student-gradebook.csv", "gradebook.csv+0", "lmsmith"]
    odd = ["gradebook.csv", "gradebook.csv.tmp", "class_report.html", "similarity", "lms", "LMS", "_submissions", "-x"]
    for name in plain + odd + ["alice", "Bob", "bob", "[red]x"]:
        (klass / name).mkdir()
    with zipfile.ZipFile(klass / "alice.zip", "w") as archive:
        archive.writestr("exercises/rnn.py", "")
    os.mkdir(os.fsencode(klass) + b"/caf\xe9")
    os.mkdir(os.fsencode(klass) + b"/caf\xc3\xa9")  # the same word in UTF-8: another student
    found = hand_ins(klass)
    names = list(found.named)
    assert len({n.casefold() for n in names}) == len(names) == len(plain) + len(odd) + 7
    for name in ["alice-2", "student-gradebook.csv", "lmsmith"]:
        assert found.named[name].name == name  # kept as it is
    by_entry = {entry: name for entry, name, _why in found.renamed}
    # the renamed: each with a "+", which no kept name has; both of a clash renamed, neither kept
    for entry in ["gradebook.csv+0", *odd, "alice", "alice.zip", "Bob", "bob", "[red]x", "caf\\xe9", "café"]:
        assert "+" in by_entry[entry] and by_entry[entry] in found.named, entry
    assert "alice" not in found.named and "Bob" not in found.named
    for name in names:
        assert safe_submission_name(name.split("+")[0]) == name.split("+")[0]
        assert not name.casefold().startswith(OWN_NAMES) or "+" in name or name.startswith("student-")
        assert name.casefold() not in {"lms", WORK_DIR, "gradebook.csv", "class_report.html", "class_report.md"}
    # a name that is not plain never clashes with a plain one: "ſam" (long s) folds to "sam" but
    # is renamed alone, and sam keeps her name; a right-to-left override is shown escaped
    twins = tmp_path / "twins"
    for name in ("sam", "ſam", "\u202eexe.py"):
        (twins / name).mkdir(parents=True)
    found_twins = hand_ins(twins)
    assert found_twins.named["sam"].name == "sam"
    assert {entry for entry, _name, _why in found_twins.renamed} == {"ſam", "\\u202eexe.py"}
    why = dict((entry, why) for entry, _name, why in found.renamed)
    assert why["alice.zip"] == "alice and alice.zip would both be named 'alice'"


def test_the_progress_bar_reads_no_markup(capsys):
    """A name or reason that is rich markup (``[/]`` closes a tag no one opened) is shown as it
    is, on the bar and in what is printed while it runs."""
    from seqlab.commands.grade_all import Progress

    bar = Progress()
    bar.start(total=2, already=0)
    print("skipped: [/] [bold]x[/bold] :smile:")
    bar.advance("x+0123", {"status": "error", "reason": "class/linked.zip/[/]: a symbolic link [bold]"})
    bar.advance("[/]", {"status": "graded"})
    bar.stop()
    assert "[/] [bold]x[/bold] :smile:" in capsys.readouterr().out


def test_a_failing_class_report_is_an_error_in_the_log_never_a_lost_grade(tmp_path, monkeypatch, capsys):
    """The class report (its histogram once raised ``Too many bins``) is drawn after the grades
    are recorded: it failing leaves gradebook.csv and the LMS files written, and says so."""
    import seqlab.batch as batch

    def boom(*args, **kwargs):
        raise ValueError("Too many bins for data range")

    monkeypatch.setattr(batch, "write_class_report", boom)
    klass, out = tmp_path / "class", tmp_path / "out"
    (klass / "empty").mkdir(parents=True)
    recorded = []
    rows = batch.grade_all(klass, out, _settings(), record=lambda rows: recorded.append(out / "gradebook.csv"))
    assert [r["submission"] for r in rows] == ["empty"] and recorded and recorded[0].is_file()
    err = capsys.readouterr().err
    assert "the class report could not be drawn: ValueError: Too many bins" in err and "Traceback" not in err


def test_a_progress_display_that_fails_costs_no_grade(tmp_path, capsys):
    from seqlab.batch import grade_all

    class Broken:
        def start(self, total, already):
            raise RuntimeError("a display bug")

        def advance(self, name, status):
            raise RuntimeError("a display bug")

    klass, out = tmp_path / "class", tmp_path / "out"
    (klass / "empty").mkdir(parents=True)
    rows = grade_all(klass, out, _settings(), progress=Broken())
    assert rows[0]["status"] == "error" and _gradebook(out)["empty"]["status"] == "error"
    assert "the progress display failed (RuntimeError: a display bug)" in capsys.readouterr().err


@pytest.mark.bank  # a real grading (workers start, torch loads): ~10 s, kept out of make test
@pytest.mark.slow
def test_every_case_in_one_class_leaves_the_honest_graded_and_the_lms_written(tmp_path, monkeypatch, capsys):
    """Every case above in one class beside honest hand-ins (two of them under names that
    must be renamed, one in a 1000-deep tree, one under a name like an output file), through the
    command: each honest one graded with full marks and in the LMS files, each bad one named in
    its row, the exit status 1 and the last line counting them."""
    from seqlab.cli import main

    monkeypatch.chdir(tmp_path)  # relative paths: the reasons are short enough to reach the bar
    klass = tmp_path / "class"
    klass.mkdir()
    for write in (corrupt_deflate, flag_utf8_with_invalid_name, deep_folder, link_member_zip, non_utf8_name):
        write(klass)
    make_submission(klass / "alice")
    make_submission(klass / "gradebook.csv")
    make_submission(klass / "student-gradebook.csv")
    deep_folder(klass, "deep-honest", honest=True)
    deep_zip(klass)
    non_utf8_name(klass, b"jos\xe9", honest=True)
    code = main(["grade-all", "class", "--out", "out", "--no-labs", "--only", ONLY, "--sandbox", "none", "--seed", "1"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "MarkupError" not in captured.err, captured.err
    book = _gradebook(tmp_path / "out")
    honest = {"alice", "student-gradebook.csv", "deep-honest", "deepzip"}
    renamed = {n for n in book if n.startswith(("jos+", "student-gradebook.csv+"))}
    assert len(renamed) == 2
    for name in honest | renamed:
        assert book[name]["status"] == "graded" and book[name]["percent"] == "100.0", book[name]
    bad = {n for n in book if n not in honest | renamed}
    assert len(bad) == 5 and all(book[n]["status"] == "error" and book[n]["reason"] for n in bad), bad
    assert code == 1
    assert captured.err.strip().splitlines()[-1].startswith("grade-all: 5 of 11 hand-ins not graded: ")
    with (tmp_path / "out" / "lms" / "canvas.csv").open(encoding="utf-8") as handle:
        canvas = handle.read()
    assert all(name in canvas for name in honest | renamed)
    assert (tmp_path / "out" / "class_report.html").is_file()


def test_the_reader_bounds_a_zip_before_parsing_it_and_reads_one_with_no_file_type(tmp_path):
    """A zip whose end record claims more entries than the reader takes, or that is larger than
    anything it would extract, is refused before zipfile builds its directory; a zip whose
    members carry no Unix file type (zipfile's own writestr, many tools) is read."""
    import struct

    from seqlab.submission import SubmissionError, read_submission
    from seqlab.submission.copy import MAX_ENTRIES, MAX_ZIP_BYTES
    from tests.batch._faults import honest_zip_bytes

    plain = tmp_path / "plain.zip"
    plain.write_bytes(honest_zip_bytes())  # writestr: external_attr 0o600 << 16, no file type
    assert (read_submission(plain, tmp_path / "read").folder / "exercises" / "rnn.py").is_file()
    data = bytearray(honest_zip_bytes())
    end = data.rfind(b"PK\x05\x06")
    struct.pack_into("<HH", data, end + 8, MAX_ENTRIES + 1, MAX_ENTRIES + 1)
    (tmp_path / "many.zip").write_bytes(bytes(data))
    with pytest.raises(SubmissionError, match=f"a zip of {MAX_ENTRIES + 1} entries, more than {MAX_ENTRIES}"):
        read_submission(tmp_path / "many.zip", tmp_path / "read")
    with open(tmp_path / "huge.zip", "wb") as handle:
        handle.truncate(MAX_ZIP_BYTES + 1)  # sparse
    with pytest.raises(SubmissionError, match=f"more than {MAX_ZIP_BYTES >> 20} MB"):
        read_submission(tmp_path / "huge.zip", tmp_path / "read")


def test_a_students_report_that_fails_is_said_and_the_grade_kept(tmp_path, monkeypatch, capsys):
    """The grading process records the grade (seqlab_result.json) before it draws the student's
    reports; a report that raises is a line in the log and the row stays graded."""
    import queue
    import socket
    import threading
    from multiprocessing.connection import Connection

    import seqlab.batch as batch
    import seqlab.grading as grading
    import seqlab.reports as reports
    from seqlab.gradebook import collect
    from seqlab.results import GradingResult, TestResult

    result = GradingResult([TestResult("attention.causal_mask: shape", 1.0, 1.0)], seed=1)
    monkeypatch.setattr(grading, "grade_submission", lambda submission, settings: result)

    def boom(*args, **kwargs):
        raise ValueError("Too many bins for data range")

    monkeypatch.setattr(reports, "write_all", boom)

    class InProcess:
        """The grading process's own loop (worker_main), run in a thread over a socket pair."""

        def grade(self, job, timeout):
            ours, theirs = socket.socketpair()
            thread = threading.Thread(target=batch.worker_main, args=(theirs.detach(),))
            thread.start()
            channel = Connection(ours.detach())
            channel.send(job)
            status = channel.recv()
            channel.close()
            thread.join()
            return status

        def stop(self):
            pass

    workers = queue.Queue()
    workers.put(InProcess())
    sub = batch.Submission("alice", tmp_path / "alice", tmp_path / "copy")
    status = batch._grade_one(sub, tmp_path / "out", workers, {"settings": _settings(), "max_score": 1.0}, 30)
    assert status["status"] == "graded" and "Too many bins" in status["report_error"]
    (row,) = collect(tmp_path / "out", ["alice"])
    assert row["status"] == "graded" and row["result"].score == 1.0
    err = capsys.readouterr().err
    assert "grade-all: error: alice: its reports could not be written (graded, the grade is recorded)" in err
