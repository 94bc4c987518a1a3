"""grade-all on a class: every submission gets a row whatever it holds (good, broken, missing,
zipped, hostile), reruns resume, and an interrupted run leaves a consistent gradebook."""

from __future__ import annotations

import csv
import subprocess
import sys
import zipfile

import pytest

from tests.attacks import ATTACKS, build
from tests.attacks.channel_and_oracle import PACKS, build_pack
from tests.mutants import make_submission


@pytest.mark.slow
@pytest.mark.usefixtures("no_canaries")  # it grades attacks of the bank (tests/attacks)
def test_grade_all_on_a_mixed_class_loses_no_submission(tmp_path):
    """Good, broken, missing and malicious submissions, folders and zips: every one gets a row."""
    klass = tmp_path / "class"
    make_submission(klass / "good")
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
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["submission"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert set(rows) == {
        "good",
        "broken",
        "empty",
        "notes.txt",
        "zipped",
        "evil",
        "os-exit-at-import",
        "write-results-json-everywhere",
        "subprocess-and-os-system-canary",
        hostile,
    }
    # Forged frames, hostile text: still a graded row, valid reports, the real score on top.
    assert rows[hostile]["status"] == "graded"
    import json
    import xml.etree.ElementTree as ET

    graded = json.loads((out / hostile / "results.json").read_text(encoding="utf-8"))
    ET.parse(out / hostile / "junit.xml")
    headline = (out / hostile / "summary.md").read_text(encoding="utf-8").splitlines()[0]
    assert headline.startswith(f"## seqlab: {graded['score']:.4g} / "), headline
    assert rows["good"]["percent"] == "100.0" and rows["zipped"]["percent"] == "100.0"
    assert rows["broken"]["status"] == "graded" and rows["broken"]["optimizers.sgd"] == "0"
    assert rows["broken"]["rnn.rnn_bptt"] == "8"
    for name in ("empty", "notes.txt", "evil"):
        assert rows[name]["status"] == "error" and rows[name]["reason"], rows[name]
    assert "unsafe path" in rows["evil"]["reason"]
    assert not (tmp_path / "escape.py").exists()
    assert float(rows["write-results-json-everywhere"]["optimizers.sgd"]) == 0
    assert (out / "class_report.html").is_file() and "Per function" in (out / "class_report.md").read_text()

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
