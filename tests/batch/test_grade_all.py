"""grade-all on a class: every submission gets a row whatever it holds (good, broken, missing,
zipped, hostile), reruns resume, and an interrupted run leaves a consistent gradebook."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import zipfile

import pytest

from seqlab.config import course_figures
from tests.attacks import ATTACKS, build
from tests.attacks.channel_and_oracle import PACKS, build_pack
from tests.mutants import make_submission

# What a --no-labs grading is out of, and each function's points: from the config, never copied.
FIGURES = course_figures()


@pytest.mark.slow
@pytest.mark.usefixtures("no_canaries")  # it grades attacks of the bank (tests/attacks)
def test_grade_all_on_a_mixed_class_loses_no_submission(tmp_path):
    """Good, broken, missing and malicious submissions, folders and zips: every one gets a row."""
    klass = tmp_path / "class"
    good = make_submission(klass / "good")
    # Honest code that names NotImplementedError (a helper's abstract method, comments): grade-all
    # reads the count to schedule this hand-in last, and its grade is the same.
    with (good / "exercises" / "rnn.py").open("a") as module:
        module.write(
            "\n\n# NotImplementedError NotImplementedError NotImplementedError\n"
            "class _Step:\n    def apply(self, h):\n        raise NotImplementedError('a subclass applies a step')\n"
        )
    broken = make_submission(klass / "broken")
    (broken / "exercises" / "optimizers.py").write_text("def sgd(:\n")
    (klass / "empty").mkdir()
    (klass / "notes.txt").write_text("not a submission")
    zipped = make_submission(tmp_path / "zipped")
    with zipfile.ZipFile(klass / "zipped.zip", "w") as archive:
        for path in (zipped / "exercises").glob("*.py"):
            archive.write(path, f"handin/exercises/{path.name}")
    with zipfile.ZipFile(klass / "evil.zip", "w") as archive:
        archive.writestr("../../escape.py", "x = 1")
    for name in ("os-exit-at-import", "write-results-json-everywhere", "subprocess-and-os-system-canary"):
        build(next(a for a in ATTACKS if a.name == name), klass)
    hostile = build_pack(next(p for p in PACKS if p.name == "state-protocol-injection"), klass).name

    out = tmp_path / "out"
    command = [sys.executable, "-m", "seqlab", "grade-all", str(klass), "--out", str(out), "--jobs", "2", "--seed", "3"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stderr[-2000:]  # two could not be graded
    assert "skipped: notes.txt (not a folder or a .zip)" in proc.stdout
    rows = {r["submission"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert set(rows) == {
        "good",
        "broken",
        "empty",
        "zipped",
        "evil",
        "os-exit-at-import",
        "write-results-json-everywhere",
        "subprocess-and-os-system-canary",
        hostile,
    }
    # Forged frames, hostile text: still a graded row, valid reports, the real score on top.
    assert rows[hostile]["status"] == "graded"
    import xml.etree.ElementTree as ET

    graded = json.loads((out / hostile / "results.json").read_text(encoding="utf-8"))
    ET.parse(out / hostile / "junit.xml")
    headline = (out / hostile / "summary.md").read_text(encoding="utf-8").splitlines()[0]
    assert headline.startswith(f"## seqlab: {graded['score']:.4g} / "), headline
    assert rows["good"]["percent"] == "100.0" and rows["zipped"]["percent"] == "100.0"
    assert rows["broken"]["status"] == "graded" and rows["broken"]["optimizers.sgd"] == "0"
    assert rows["broken"]["rnn.rnn_bptt"] == f"{FIGURES.points['rnn.rnn_bptt']:g}"
    for name in ("empty", "evil"):
        assert rows[name]["status"] == "error" and rows[name]["reason"], rows[name]
        assert rows[name]["max_score"] == f"{FIGURES.exercise_points:g}"
        assert json.loads((out / name / "results.json").read_text())["max_score"] == FIGURES.exercise_points
    assert "unsafe path" in rows["evil"]["reason"]
    assert not (tmp_path / "escape.py").exists()
    assert float(rows["write-results-json-everywhere"]["optimizers.sgd"]) == 0
    assert (out / "class_report.html").is_file() and "Per function" in (out / "class_report.md").read_text()
    assert (out / "lms" / "canvas.csv").is_file() and (out / "lms" / "moodle.csv").is_file()

    # Resumable: a second run regrades nothing; --force regrades everything.
    again = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert "already graded" in again.stdout
    assert list(csv.DictReader((out / "gradebook.csv").open())) == list(rows.values())


@pytest.mark.slow
def test_interrupted_grade_all_leaves_a_consistent_gradebook(tmp_path):
    """Ctrl-C in the middle: the gradebook lists what finished (and the rest as pending), and a
    rerun finishes the job without regrading what was done."""
    import os
    import signal
    import time

    klass = tmp_path / "class"
    for i in range(4):
        make_submission(klass / f"s{i}")
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "seqlab",
        "grade-all",
        str(klass),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--seed",
        "1",
        "--in-process",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (out / "s0" / "status.json").exists():
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    proc.communicate(timeout=120)
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert [r["submission"] for r in rows] == ["s0", "s1", "s2", "s3"]
    done = [r for r in rows if r["status"] == "graded"]
    assert done and all(r["percent"] == "100.0" for r in done)
    assert all(r["status"] in ("graded", "pending") for r in rows), rows
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert f"{len(done)} of 4 already graded" in finished.stdout
    assert all(r["status"] == "graded" for r in csv.DictReader((out / "gradebook.csv").open()))


def _flat(folder):
    """A submission of the module files themselves, no exercises/ folder."""
    make_submission(folder)
    for path in (folder / "exercises").iterdir():
        path.rename(folder / path.name)
    (folder / "exercises").rmdir()
    return folder


def test_names_the_gradebook_uses_cannot_be_taken_and_non_submissions_are_skipped(tmp_path):
    """A hand-in named like grade-all's own files, a zipped checkout, flat files, a linked
    exercises/, a folder with nothing in it and two files that are no hand-ins; the run's
    sandbox reaches the workers as it was resolved, reason and all."""
    from seqlab.batch import grade_all
    from seqlab.grading import grading_settings
    from seqlab.student.sandbox import Sandbox

    klass = tmp_path / "class"
    make_submission(klass / "gradebook.csv")
    _flat(klass / "flat")
    checkout = make_submission(tmp_path / "alice-main")
    with zipfile.ZipFile(klass / "alice.zip", "w") as archive:
        for path in (checkout / "exercises").glob("*.py"):
            archive.write(path, f"alice-main/exercises/{path.name}")
    (klass / "linked").mkdir()
    (klass / "linked" / "exercises").symlink_to(checkout / "exercises")
    (klass / "empty").mkdir()
    (klass / "notes.txt").write_text("not a submission")
    (klass / ".DS_Store").write_bytes(b"\0")

    class Heard:
        def __init__(self):
            self.skipped = []

        def skip(self, entry, why):
            self.skipped.append(entry)

        def start(self, total, already): ...
        def advance(self, name, status): ...
        def stop(self): ...

    out, heard = tmp_path / "out", Heard()
    box = Sandbox("none", "a reason only this test gives")
    settings = grading_settings(seed=1, only="attention.causal_mask", sandbox=box)
    rows = grade_all(klass, out, settings, progress=heard)
    by_name = {r["submission"]: r for r in rows}
    assert sorted(heard.skipped) == [".DS_Store", "notes.txt"]
    (renamed,) = [name for name in by_name if name.startswith("student-gradebook.csv+")]
    assert set(by_name) == {renamed, "flat", "alice", "linked", "empty"}
    assert (out / "gradebook.csv").is_file() and (out / renamed / "results.json").is_file()
    for name in (renamed, "flat", "alice"):
        assert by_name[name]["status"] == "graded" and by_name[name]["result"].percent == 100.0, by_name[name]
        result = by_name[name]["result"]
        assert result.notices == [box.notice] and not result.errors, (result.notices, result.errors)
    graded = json.loads((out / "flat" / "results.json").read_text())
    shown = re.sub(r"\\(.)", r"\1", graded["output"])  # the output is Markdown: punctuation escaped
    assert "notice: not sandboxed: a reason only this test gives" in shown
    assert "error:" not in graded["output"]
    assert "linked/exercises: a symbolic link, not followed" in by_name["linked"]["reason"]
    assert "empty: no exercises/ folder" in by_name["empty"]["reason"]
    gradebook = {r["submission"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    for name in ("linked", "empty"):
        assert gradebook[name]["status"] == "error" and gradebook[name]["max_score"] == f"{FIGURES.exercise_points:g}"
        failed = json.loads((out / name / "results.json").read_text())
        assert (
            failed["score"] == 0
            and failed["max_score"] == FIGURES.exercise_points
            and by_name[name]["reason"] in failed["output"]
        )


def test_names_that_would_collide_are_both_renamed_and_the_run_goes_on(tmp_path, capsys):
    """``alice/`` and ``alice.zip``, ``Bob`` and ``bob``: which is "alice" is not grade-all's to
    pick, so each is graded under a name of its own (said before grading), none is dropped."""
    from seqlab.cli import main

    klass = tmp_path / "class"
    (klass / "alice").mkdir(parents=True)
    (klass / "alice-zip").mkdir()  # its own name: no clash with alice.zip
    (klass / "alice.zip").write_bytes(b"not a zip")  # nothing readable: no grading process starts
    (klass / "Bob").mkdir()
    (klass / "bob").mkdir()
    out = tmp_path / "out"
    code = main(["grade-all", str(klass), "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 1, printed
    assert "renamed: alice.zip is graded as 'alice+" in printed and "(alice and alice.zip would both be" in printed
    assert "renamed: Bob is graded as 'Bob+" in printed and "renamed: bob is graded as 'bob+" in printed
    rows = {r["submission"] for r in csv.DictReader((out / "gradebook.csv").open())}
    assert len(rows) == 5 and "alice-zip" in rows and "alice" not in rows
    code = main(["grade-all", str(tmp_path / "nope"), "--out", str(out)])
    assert code == 2 and "nope: does not exist" in capsys.readouterr().err


def test_grade_all_exits_non_zero_when_a_submission_is_not_graded(tmp_path, capsys):
    from seqlab.cli import main

    (tmp_path / "class" / "empty").mkdir(parents=True)
    code = main(["grade-all", str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--in-process"])
    out = capsys.readouterr().out
    assert code == 1 and "0 of 1 graded" in out and "not graded: empty: " in out


def test_an_error_inside_grading_still_leaves_a_row_and_a_results_json(tmp_path):
    """A bug in seqlab while one submission is in hand: that submission's row says so, with its
    results.json, and the run goes on."""
    import queue

    from seqlab.batch import Submission, _grade_one
    from seqlab.gradebook import collect

    class Broken:
        def grade(self, job, timeout):
            raise RuntimeError("a bug only this test has")

    workers = queue.Queue()
    workers.put(Broken())
    sub = Submission("alice", tmp_path / "alice", tmp_path / "copy")
    status = _grade_one(sub, tmp_path / "out", workers, {"max_score": FIGURES.exercise_points}, timeout=5)
    assert status["status"] == "error" and "a bug only this test has" in status["reason"]
    written = json.loads((tmp_path / "out" / "alice" / "results.json").read_text())
    assert (
        written["score"] == 0
        and written["max_score"] == FIGURES.exercise_points
        and "a bug only this test has" in written["output"]
    )
    (row,) = collect(tmp_path / "out", ["alice"])
    assert row["status"] == "error" and row["max_score"] == FIGURES.exercise_points and workers.qsize() == 1


def test_the_class_is_graded_longest_first(tmp_path):
    """The written hand-ins first, the untouched stubs and unreadable ones last: the class's tail
    (one worker busy, the others idle) is then the quick work. A stub left by a student counts
    whichever file it is in."""
    from seqlab.batch import Submission, unwritten_stubs
    from tests.mutants import ROOT

    def hand_in(name: str, stubs: int) -> Submission:
        folder = make_submission(tmp_path / name)
        text = (folder / "exercises" / "rnn.py").read_text()
        (folder / "exercises" / "rnn.py").write_text(text + "\nraise NotImplementedError\n" * stubs)
        return Submission(name, folder, folder)

    stubs = Submission("stubs", tmp_path, tmp_path / "stubs")
    (stubs.path / "exercises").mkdir(parents=True)
    for source in (ROOT / "exercises").glob("*.py"):
        (stubs.path / "exercises" / source.name).write_text(source.read_text())
    unread = Submission("unread", tmp_path / "unread.zip", None, "not a zip")
    subs = [unread, stubs, hand_in("half", 3), hand_in("done", 0)]
    assert [s.name for s in sorted(subs, key=unwritten_stubs)] == ["done", "half", "stubs", "unread"]
