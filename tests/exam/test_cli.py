"""`seqlab exam ...` end to end: render, key, grade, grade-all, notebook, coverage."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from seqlab.cli import main
from seqlab.paths import COURSE_ROOT, DEFAULT_EXAM


def test_render_key_grade_round_trip(tmp_path, capsys):
    out = tmp_path / "out"
    assert (
        main(
            [
                "exam",
                "render",
                "--exam",
                str(DEFAULT_EXAM),
                "--student",
                "s1",
                "--student",
                "s2",
                "--out",
                str(out),
                "--notebook",
            ]
        )
        == 0
    )
    for s in ("s1", "s2"):
        for name in (f"exam-{s}.md", f"exam-{s}.html", f"exam-{s}.ipynb", f"answers-{s}.yaml"):
            assert (out / name).is_file(), name
    assert (out / "exam-s1.md").read_bytes() != (out / "exam-s2.md").read_bytes()
    blank = yaml.safe_load((out / "answers-s1.yaml").read_text())
    assert blank["student"] == "s1" and set(blank["answers"]) == set(_exam_ids("s1"))

    assert main(["exam", "key", "--student", "s1", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["exam", "grade", str(out / "key-s1.yaml"), "--student", "s1", "--out", str(out / "res")]) == 0
    printed = capsys.readouterr().out
    assert "s1: " in printed and "(100.0%)" in printed
    results = json.loads((out / "res" / "results.json").read_text())
    assert results["score"] == results["max_score"] > 0

    # a blank answers file grades to zero, with "no answer" everywhere
    assert main(["exam", "grade", str(out / "answers-s1.yaml"), "--quiet"]) == 0
    assert "(0.0%)" in capsys.readouterr().out

    # the wrong student's file is refused with a message (exit 2, no traceback)
    assert main(["exam", "grade", str(out / "key-s1.yaml"), "--student", "s2"]) == 2
    assert "for student 's1', not 's2'" in capsys.readouterr().err


def _exam_ids(student: str) -> list[str]:
    """The questions on this student's paper (a pool in the exam draws some of them per student)."""
    from seqlab.exam.examfile import load_exam
    from seqlab.exam.variants import make_instance

    return [v.answer_id for v in make_instance(load_exam(DEFAULT_EXAM), student).variants]


def test_notebook_is_valid_nbgrader(tmp_path):
    import nbformat

    main(["exam", "render", "--student", "nb1", "--out", str(tmp_path), "--notebook", "--no-html"])
    nb = nbformat.read(tmp_path / "exam-nb1.ipynb", as_version=4)
    nbformat.validate(nb)
    meta = [c.metadata["nbgrader"] for c in nb.cells]
    assert all(m["schema_version"] == 3 for m in meta)
    grade_ids = [m["grade_id"] for m in meta]
    assert len(grade_ids) == len(set(grade_ids))
    answer_cells = [c for c in nb.cells if c.metadata["nbgrader"]["solution"]]
    assert len(answer_cells) == len(_exam_ids("nb1"))
    assert all(c.cell_type == "code" and not c.metadata["nbgrader"]["locked"] for c in answer_cells)
    # running the answer cells and the save cell writes an answers file seqlab can grade
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    env = {}
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(code, "notebook", "exec"), env)  # our own generated cells, not student input
    finally:
        os.chdir(cwd)
    saved = yaml.safe_load((tmp_path / "answers.yaml").read_text())
    assert saved["student"] == "nb1" and set(saved["answers"]) == set(_exam_ids("nb1"))
    assert not (tmp_path / "exam-nb1.html").exists()


def test_grade_all_writes_gradebook_and_reports(tmp_path, capsys):
    keys, answers, out = tmp_path / "keys", tmp_path / "answers", tmp_path / "graded"
    main(["exam", "key", "--student", "a1", "--student", "a2", "--out", str(keys)])
    answers.mkdir()
    for s in ("a1", "a2"):
        (answers / f"{s}.yaml").write_text((keys / f"key-{s}.yaml").read_text())
    (answers / "bad.yaml").write_text("student: a3\nanswers: {x: [\n")
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\nA One,1,a1,a1-login,\nZ Zed,9,z9,z9-login,\n")
    code = main(["exam", "grade-all", str(answers), "--out", str(out), "--lms-roster", str(roster)])
    assert code == 1  # a problem is reported in the exit status ...
    err = capsys.readouterr().err
    assert "bad.yaml" in err and "not valid YAML" in err
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert [(r["student"], r["status"], r["percent"]) for r in rows[:2]] == [
        ("a1", "graded", "100.0"),
        ("a2", "graded", "100.0"),
    ]
    assert rows[2]["status"] == "error" and rows[2]["file"] == "bad.yaml"  # ... and the others are graded
    for s in ("a1", "a2"):
        assert json.loads((out / s / "results.json").read_text())["score"] > 0
    canvas = list(csv.reader((out / "lms" / "canvas.csv").open()))
    assert canvas[2][2:4] == ["a1", "a1-login"] and float(canvas[2][5]) > 0 and canvas[3][5] == ""
    check = (out / "lms" / "roster_check.txt").read_text()
    assert "z9" in check and "a2" in check  # on the roster ungraded; graded, not on the roster


def test_bad_exam_file_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "exam.yaml"
    bad.write_text("title: x\nseed: 1\nparts:\n  - questions: [opt.nope]\n")
    assert main(["exam", "render", "--exam", str(bad), "--student", "s1", "--out", str(tmp_path)]) == 2
    assert "unknown question id 'opt.nope'" in capsys.readouterr().err
    assert main(["exam", "render", "--student", "../x", "--out", str(tmp_path)]) == 2
    assert "bad student id" in capsys.readouterr().err


@pytest.mark.slow  # ~4 s: a fresh interpreter imports torch
def test_rendering_is_identical_in_a_fresh_process(tmp_path):
    """Byte-for-byte across processes, whatever Python's hash seed."""
    here = tmp_path / "here"
    main(["exam", "render", "--student", "repro7", "--out", str(here), "--notebook"])
    main(["exam", "key", "--student", "repro7", "--out", str(here)])
    there = tmp_path / "there"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    script = (
        "import sys; from seqlab.cli import main; "
        f"main(['exam', 'render', '--student', 'repro7', '--out', {str(there)!r}, '--notebook']); "
        f"sys.exit(main(['exam', 'key', '--student', 'repro7', '--out', {str(there)!r}]))"
    )
    subprocess.run(
        [sys.executable, "-c", script], cwd=COURSE_ROOT, env=env, check=True, capture_output=True, timeout=300
    )
    names = sorted(p.name for p in here.iterdir())
    assert names == sorted(p.name for p in there.iterdir()) and len(names) == 9
    for name in names:
        assert (here / name).read_bytes() == (there / name).read_bytes(), name


def test_coverage_table_is_up_to_date():
    from seqlab.exam.coverage import COVERAGE_PATH, coverage_markdown, coverage_rows

    assert COVERAGE_PATH.read_text(encoding="utf-8") == coverage_markdown(), (
        "docs/coverage.md is stale: run `seqlab exam coverage`"
    )
    rows = coverage_rows()
    assert all(qs for _, _, qs, _ in rows), "every section has at least one question"
    assert any("rnn.rnn_bptt" in fns for _, _, _, fns in rows)


def test_help_lists_the_exam_commands(capsys):
    import pytest

    with pytest.raises(SystemExit):
        main(["exam", "--help"])
    text = capsys.readouterr().out
    for sub in ("render", "key", "grade", "grade-all", "check", "coverage"):
        assert sub in text
    assert Path(DEFAULT_EXAM).is_file()


def test_check_names_each_syntax_problem_by_number_and_never_correctness(tmp_path, capsys):
    from seqlab.exam.examfile import load_exam
    from seqlab.exam.variants import make_instance

    main(["exam", "key", "--student", "c1", "--out", str(tmp_path)])
    capsys.readouterr()
    assert main(["exam", "check", str(tmp_path / "key-c1.yaml"), "--student", "c1"]) == 0
    assert capsys.readouterr().out.strip() == "all answers readable"

    inst = make_instance(load_exam(DEFAULT_EXAM), "c1")
    number = {v.id: v.number for v in inst.variants}
    first_vector = next(v for v in inst.variants if isinstance(v.answer, list) and len(v.answer) > 1)
    first_scalar = next(v for v in inst.variants if v.question.kind == "numeric" and not isinstance(v.answer, list))
    key = yaml.safe_load((tmp_path / "key-c1.yaml").read_text())
    answers = dict(key["answers"])
    wrong_but_readable = "rnn.ce_loss"
    aid = {v.id: v.answer_id for v in inst.variants}  # the file's ids: the paper's (q1, ...)
    planted = {
        first_vector.id: "1, 2" if len(first_vector.answer) != 2 else "1",
        "attn.var_qk": "2exp(d)",
        wrong_but_readable: "12345",
        "opt.bias_correction": "1/(1 - beta1^t",
        "concept.bottleneck": "Z",
        "concept.birnn_online": "perhaps",
        first_scalar.id: "",
    }
    answers.update({aid[q]: text for q, text in planted.items()})
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({"student": "c1", "answers": answers}))
    assert main(["exam", "check", str(tmp_path / "mine.yaml"), "--student", "c1"]) == 1
    out = capsys.readouterr().out
    n = len(first_vector.answer)
    assert f"answer {number[first_vector.id]}: expected {n} numbers, got {2 if n != 2 else 1}" in out
    assert f"answer {number['attn.var_qk']}: implicit multiplication: write 2*exp(...)" in out
    assert f"answer {number['opt.bias_correction']}: unbalanced brackets" in out
    assert f"answer {number['concept.bottleneck']}: give one letter, A-D" in out
    assert f"answer {number['concept.birnn_online']}: give true or false" in out
    assert f"no answer yet to question(s) {number[first_scalar.id]} (1 of {len(number)})" in out
    assert f"answer {number[wrong_but_readable]}:" not in out  # a wrong answer is not a syntax problem
    assert not any(word in out for word in ("incorrect", "wrong", "right answer", "points", "key"))
    # the file must be the student's own
    assert main(["exam", "check", str(tmp_path / "mine.yaml"), "--student", "c2"]) == 1
    assert "write student: 'c2'" in capsys.readouterr().out
    # what a student has: the check file written with the exam (no exam file, no key) gives the same lines
    main(["exam", "render", "--student", "c1", "--out", str(tmp_path), "--no-html"])
    shapes = (tmp_path / "check-c1.json").read_text()
    assert not any(
        str(v.key) in shapes
        for v in inst.variants
        if v.question.kind in ("numeric", "symbolic") and len(str(v.key)) > 3
    )
    capsys.readouterr()
    assert main(["exam", "check", str(tmp_path / "mine.yaml"), "--shapes", str(tmp_path / "check-c1.json")]) == 1
    assert capsys.readouterr().out == out
    assert main(["exam", "check", str(tmp_path / "key-c1.yaml"), "--shapes", str(tmp_path / "check-c1.json")]) == 0
    assert capsys.readouterr().out.strip() == "all answers readable"


def test_notebook_check_cell_runs_the_standalone_check(tmp_path, monkeypatch, capfd):
    import nbformat

    main(["exam", "render", "--student", "nb2", "--out", str(tmp_path), "--notebook", "--no-html"])
    nb = nbformat.read(tmp_path / "exam-nb2.ipynb", as_version=4)
    check = next(c for c in nb.cells if c.metadata["nbgrader"]["grade_id"] == "check")
    assert "check-nb2.py" in check.source and "seqlab" not in check.source and '"correct"' not in check.source
    monkeypatch.chdir(tmp_path)
    capfd.readouterr()
    exec(compile(check.source, "check-cell", "exec"), {"answers": {}})  # our own generated cell
    out, n = capfd.readouterr().out, len(_exam_ids("nb2"))
    assert "no answer yet to question(s) 1, 2, 3" in out and f"({n} of {n})" in out
