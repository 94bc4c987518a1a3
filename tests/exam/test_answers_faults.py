"""`seqlab exam grade-all` with one bad answers file in an honest class: the honest students graded
and recorded in gradebook.csv (and their reports written), the bad file named in its row, in the
log and in the exit status; never a traceback, never a run that stops or exhausts memory."""

from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings

from seqlab.cli import main
from seqlab.exam.answers import load_answers
from seqlab.exam.errors import AnswersError
from seqlab.exam.grading import grade_folder, gradebook_csv
from seqlab.exam.paper import grade_answers
from tests.exam._faults import (
    EXAM,
    GENERATED,
    HONEST,
    bad_answers_bytes,
    bad_names,
    billion_laughs,
    honest_folder,
    key_text,
)


@pytest.fixture
def exam_file(tmp_path) -> Path:
    path = tmp_path / "exam.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "title": EXAM.title,
                "seed": 11,
                "visibility": "visible",
                "parts": [
                    {
                        "title": "p",
                        "questions": [
                            {"id": "opt.adam_steps", "points": 4, "partial": {"per_element": True}},
                            {"id": "attn.var_qk", "points": 2},
                            {"id": "concept.bottleneck", "points": 1},
                            {"id": "concept.birnn_online", "points": 1},
                        ],
                    }
                ],
            }
        )
    )
    return path


def grade_all(exam_file: Path, answers: Path, out: Path, capsys) -> tuple[int, dict, str]:
    code = main(["exam", "grade-all", str(answers), "--exam", str(exam_file), "--out", str(out)])
    err = capsys.readouterr().err
    rows = {r["file"]: r for r in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}
    return code, rows, err


def assert_honest_recorded(rows: dict, out: Path) -> None:
    for student in HONEST:
        row = rows[f"{student}.yaml"]
        assert (row["student"], row["status"], row["percent"]) == (student, "graded", "100.0")
        assert json.loads((out / student / "results.json").read_text())["score"] > 0


def test_a_billion_laughs_answers_file_is_its_students_error_row(tmp_path, exam_file, capsys):
    answers = honest_folder(tmp_path / "answers")
    text = billion_laughs()
    assert len(text.encode()) < 700  # the 621-byte file, give or take its spelling
    (answers / "s9.yaml").write_text(text)
    start = time.perf_counter()
    code, rows, err = grade_all(exam_file, answers, tmp_path / "out", capsys)
    assert time.perf_counter() - start < 60  # bounded: no expansion (it exhausted memory before)
    assert code == 1
    assert_honest_recorded(rows, tmp_path / "out")
    assert rows["s9.yaml"]["status"] == "error" and "anchors and aliases" in rows["s9.yaml"]["reason"]
    assert "s9.yaml" in err


def test_an_answers_file_linked_to_the_key_does_not_score(tmp_path, exam_file, capsys):
    answers = honest_folder(tmp_path / "answers")
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "key-s3.yaml").write_text(key_text("s3"))
    os.symlink(keys / "key-s3.yaml", answers / "s3.yaml")
    os.symlink(keys, answers / "s4")  # a folder hand-in that is a link to the keys
    code, rows, err = grade_all(exam_file, answers, tmp_path / "out", capsys)
    assert code == 1
    assert_honest_recorded(rows, tmp_path / "out")
    for name in ("s3.yaml", "s4"):
        assert rows[name]["status"] == "error" and "symbolic link" in rows[name]["reason"], name
        assert rows[name]["total"] == "0"
    assert rows["s3.yaml"]["student"] == "s3"  # the row says whose hand-in was refused
    assert not (tmp_path / "out" / "s3").exists()


@pytest.mark.parametrize(
    "name", ["gradebook.csv.yaml", "Gradebook.csv.yml", "lms.yaml", "class_report.html.json", "item_analysis.csv.yaml"]
)
def test_a_file_named_like_an_output_never_collides_with_it(tmp_path, exam_file, capsys, name):
    answers = honest_folder(tmp_path / "answers")
    (answers / name).write_text(key_text("s5"))
    code, rows, _ = grade_all(exam_file, answers, tmp_path / "out", capsys)
    assert code == 1
    assert_honest_recorded(rows, tmp_path / "out")  # gradebook.csv is the gradebook, not a folder
    assert rows[name]["status"] == "error" and "would collide with grade-all's output" in rows[name]["reason"]
    assert (tmp_path / "out" / "lms" / "canvas.csv").is_file()


def test_ids_that_differ_in_case_only_are_both_refused(tmp_path, exam_file, capsys):
    answers = honest_folder(tmp_path / "answers")
    (answers / "Bob.yaml").write_text(key_text("Bob"))
    (answers / "bob.yaml").write_text(key_text("bob"))
    code, rows, _ = grade_all(exam_file, answers, tmp_path / "out", capsys)
    assert code == 1
    assert_honest_recorded(rows, tmp_path / "out")
    assert all("also has answers in" in rows[n]["reason"] for n in ("Bob.yaml", "bob.yaml"))


@pytest.mark.parametrize("kind", ["fifo", "not-utf8-name", "big", "deep", "not-utf8-text"])
def test_other_bad_files_are_named_and_the_class_is_graded(tmp_path, exam_file, capsys, kind):
    answers = honest_folder(tmp_path / "answers")
    if kind == "fifo":
        os.mkfifo(answers / "s6.yaml")  # a read would block the run
    elif kind == "not-utf8-name":
        (answers / os.fsdecode(b"s\xff.yaml")).write_text(key_text("s6"))
    elif kind == "big":
        (answers / "s6.yaml").write_text("student: s6\nanswers: {attn.var_qk: '" + "d" * (1 << 20) + "'}\n")
    elif kind == "deep":
        (answers / "s6.yaml").write_text("student: s6\nanswers: {attn.var_qk: " + "[" * 20 + "]" * 20 + "}\n")
    else:
        (answers / "s6.yaml").write_bytes(b"student: s6\nanswers: {attn.var_qk: '\xff'}\n")
    code, rows, err = grade_all(exam_file, answers, tmp_path / "out", capsys)
    assert code == 1
    assert_honest_recorded(rows, tmp_path / "out")
    bad = [r for f, r in rows.items() if f not in {f"{s}.yaml" for s in HONEST}]
    assert len(bad) == 1 and bad[0]["status"] == "error" and bad[0]["reason"]
    expected = {
        "fifo": "not a regular file",
        "not-utf8-name": "no student id",
        "big": "more than the 1048576",
        "deep": "nested more than 16 deep",
        "not-utf8-text": "not UTF-8",
    }[kind]
    assert expected in bad[0]["reason"]


# --- generated answers files ----------------------------------------------------------------------


def check_answers_file(path: Path) -> None:
    """``load_answers`` refuses with an AnswersError naming the file, or gives answers the marker
    grades without an exception."""
    try:
        _, answers = load_answers(path, require_student=False)
    except AnswersError as exc:
        assert path.name in str(exc)
        return
    result = grade_answers(EXAM, "s9", answers, source=str(path))
    json.dumps(result.to_dict() if hasattr(result, "to_dict") else result.score)


def check_class(folder: Path, name: str, content: bytes) -> None:
    """One generated file among the honest ones: every honest student graded at 100%, the
    gradebook written in UTF-8, the bad file graded as its owner's or named in an error row."""
    honest_folder(folder)
    path = folder / name
    path.write_bytes(content)
    rows = grade_folder(EXAM, folder)
    by_file = {r.file: r for r in rows}
    for student in HONEST:
        row = by_file[f"{student}.yaml"]
        assert row.status == "graded" and row.result.percent == 100.0, row.reason
    for row in rows:
        assert row.status == "graded" or row.reason
    gradebook_csv(EXAM, rows).encode("utf-8")  # writable: no lone surrogate, whatever the name
    path.unlink()


@settings(GENERATED, max_examples=25)
@given(bad_answers_bytes())
def test_generated_answers_files_are_read_or_refused_by_name(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("answers") / "s9.yaml"
    path.write_bytes(content)
    check_answers_file(path)


@settings(GENERATED, max_examples=8)
@given(bad_names, bad_answers_bytes())
def test_a_generated_bad_file_in_a_class_costs_its_student_only(tmp_path_factory, name, content):
    check_class(tmp_path_factory.mktemp("class"), name, content)


def test_a_report_that_fails_is_an_error_in_the_log_never_a_lost_grade(tmp_path, exam_file, capsys, monkeypatch):
    import seqlab.exam.items

    def fails(*args, **kwargs):
        raise ValueError("Too many bins for data range")

    monkeypatch.setattr(seqlab.exam.items, "write_item_analysis", fails)
    answers = honest_folder(tmp_path / "answers")
    code, rows, err = grade_all(exam_file, answers, tmp_path / "out", capsys)
    assert code == 1 and "item analysis could not be written: Too many bins" in err
    assert_honest_recorded(rows, tmp_path / "out")
    assert (tmp_path / "out" / "lms" / "canvas.csv").is_file()
