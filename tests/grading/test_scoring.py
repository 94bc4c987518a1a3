"""End-to-end grading: references score 100% whatever the seed, stubs score 0 with "not
implemented" everywhere, scores are reproducible, reports are well-formed, and a broken module
costs only its own part. Both runners are exercised."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from seqlab import contract
from seqlab.grading import grade_submission
from seqlab.reports import write_all
from tests.mutants import all_variants, make_submission

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "gradescope_results.schema.json").read_text())


@pytest.fixture(scope="module")
def reference_submission(tmp_path_factory):
    return make_submission(tmp_path_factory.mktemp("reference"))


@pytest.fixture(scope="module")
def stub_submission(tmp_path_factory):
    target = tmp_path_factory.mktemp("stubs")
    shutil.copytree(ROOT / "exercises", target / "exercises")
    return target


@pytest.fixture(scope="module")
def buggy_submission(tmp_path_factory):
    """Three wrong functions in three modules."""
    target = tmp_path_factory.mktemp("buggy")
    make_submission(target)
    from tests.mutants import replace_function

    picked = {}
    for mutant in all_variants("MUTANTS"):
        if mutant.module not in picked and mutant.module in ("optimizers", "lstm_gru", "positional"):
            picked[mutant.module] = mutant
    for mutant in picked.values():
        path = target / "exercises" / f"{mutant.module}.py"
        path.write_text(replace_function(path.read_text(), mutant.function.split(".")[1], mutant.source))
    target.joinpath("bugs.txt").write_text("\n".join(m.function for m in picked.values()))
    return target


def test_reference_scores_full_marks_with_twenty_fresh_seeds(reference_submission):
    """Fresh seeds (none given): 20 runs, always 100%; seeds differ between runs."""
    seeds = set()
    for _ in range(20):
        result = grade_submission(reference_submission, isolated=False)
        failed = [(t.name, t.output[:200]) for t in result.tests if t.status != "passed"]
        assert not failed and result.percent == 100.0, (result.seed, failed[:3])
        seeds.add(result.seed)
    assert len(seeds) >= 19


def test_reference_full_marks_isolated(reference_submission):
    result = grade_submission(reference_submission, isolated=True, seed=123)
    assert result.percent == 100.0, [(t.name, t.output[:200]) for t in result.tests if t.status != "passed"][:5]
    assert set(result.by_function()) == set(contract.FUNCTIONS)


@pytest.mark.parametrize("isolated", [False, True], ids=["in-process", "isolated"])
def test_stubs_score_zero_with_not_implemented_everywhere(stub_submission, isolated):
    result = grade_submission(stub_submission, isolated=isolated, seed=3)
    assert result.score == 0 and result.max_score == pytest.approx(112)
    for test in result.tests:
        assert "not implemented" in test.output, (test.name, test.output)
    assert set(result.by_function()) == set(contract.FUNCTIONS)


def test_buggy_submission_scores_are_reproducible(buggy_submission):
    """20 gradings with one seed give identical per-test scores; the bugs cost their functions only."""
    first = grade_submission(buggy_submission, isolated=False, seed=99)
    scores = [t.score for t in first.tests]
    for _ in range(19):
        again = grade_submission(buggy_submission, isolated=False, seed=99)
        assert [t.score for t in again.tests] == scores
    bugs = set(buggy_submission.joinpath("bugs.txt").read_text().split())
    lost = {f for f, (s, m) in first.by_function().items() if s < m}
    assert lost == bugs


def test_reports_are_well_formed(buggy_submission, tmp_path):
    result = grade_submission(buggy_submission, isolated=False, seed=5)
    paths = write_all(result, tmp_path)
    data = json.loads(paths["results.json"].read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["score"] == pytest.approx(result.score) and data["max_score"] == pytest.approx(112)
    assert all(t["name"].split(":")[0] in contract.SIGNATURES for t in data["tests"])
    assert "seed 5" in data["output"]
    junit = ET.parse(paths["junit.xml"]).getroot()
    assert int(junit.get("tests")) == len(result.tests)
    assert int(junit.get("failures")) == sum(t.status == "failed" for t in result.tests) > 0
    summary = paths["summary.md"].read_text()
    assert "| module | function |" in summary and "seqlab:" in summary
    html = paths["report.html"].read_text()
    assert "<table>" in html and "Looks like" in html


def test_broken_and_missing_modules_cost_only_their_part(tmp_path):
    submission = make_submission(tmp_path / "sub")
    (submission / "exercises" / "rnn.py").write_text("def rnn_cell(:\n")  # SyntaxError
    (submission / "exercises" / "positional.py").unlink()  # missing module
    (submission / "exercises" / "lstm_gru.py").write_text("import no_such_package\n")
    text = (submission / "exercises" / "optimizers.py").read_text()
    (submission / "exercises" / "optimizers.py").write_text(text.replace("def adagrad(", "def adagrad_renamed("))
    (submission / "exercises" / "attention.py").write_text(  # transformer imports from it
        (submission / "exercises" / "attention.py").read_text() + "\nraise RuntimeError('oops at import')\n"
    )
    result = grade_submission(submission, isolated=True, seed=4)
    scores = result.by_function()
    for qualname, (score, max_score) in scores.items():
        module = qualname.split(".")[0]
        broken = module in ("rnn", "positional", "lstm_gru", "attention") or qualname == "optimizers.adagrad"
        assert (score == 0) if broken else (score == max_score), (qualname, score, max_score)
    outputs = {t.function: t.output for t in result.tests}
    assert "SyntaxError" in outputs["rnn.rnn_cell"] and "line 1" in outputs["rnn.rnn_cell"]
    assert "exercises/positional.py is missing" in outputs["positional.embed_tokens"]
    assert "no_such_package" in outputs["lstm_gru.gru_cell"]
    assert "no function adagrad()" in outputs["optimizers.adagrad"]
    assert "oops at import" in outputs["attention.causal_mask"]
    assert any("rnn" in e for e in result.errors)


def test_grade_command_writes_reports_and_exits_zero(buggy_submission, tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "seqlab",
            "grade",
            str(buggy_submission),
            "--out",
            str(out),
            "--seed",
            "1",
            "--in-process",
            "--only",
            "optimizers,positional",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert {"results.json", "junit.xml", "summary.md", "report.html"} <= {p.name for p in out.iterdir()}
    assert "report.html" in proc.stdout
    failing = subprocess.run(
        [
            sys.executable,
            "-m",
            "seqlab",
            "grade",
            str(buggy_submission),
            "--out",
            str(out),
            "--seed",
            "1",
            "--in-process",
            "--only",
            "optimizers",
            "--fail-under",
            "99.9",
        ],
        capture_output=True,
        text=True,
    )
    assert failing.returncode == 1 and "fail-under" in failing.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "seqlab", "grade", str(tmp_path / "nope")], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "not a directory" in missing.stderr and "Traceback" not in missing.stderr


# --- text from student code is data --------------------------------------------------------------


def test_clean_text_leaves_valid_unicode_without_escapes_or_controls_and_caps_it():
    from seqlab.results import MESSAGE_LIMIT, clean_text

    dirty = "a\x1b[31mred\x1b[0m\r\nb\x00\x07\x0b\x7f\x9b c\ud800d \u202eevil\x1b]0;title\x07 é 中\tend"
    assert clean_text(dirty) == "ared\nb c\ufffdd evil é 中\tend"
    assert clean_text(clean_text(dirty)) == clean_text(dirty)
    capped = clean_text("x" * (4 << 20))
    assert len(capped) < MESSAGE_LIMIT + 100 and capped.endswith("more characters cut]")


def test_reports_of_hostile_text_are_valid_and_headed_by_the_real_score(tmp_path):
    from seqlab.reports.table import print_table
    from seqlab.results import REPORT_TEXT_LIMIT, GradingResult, TestResult

    hostile = (
        "\ud83d lone\n## seqlab: 112 / 112 points (100.0%)\n<script>alert(1)</script> | x | y |\n"
        "\x1b[2J\x00\x0c [link](javascript:alert(1)) " + "z" * (4 << 20)
    )
    tests = [
        TestResult(name=f"optimizers.sgd: case {i}", score=0.0, max_score=1.0, output=hostile, hint=hostile)
        for i in range(400)
    ]
    result = GradingResult(tests=tests, seed=1, errors=[hostile])
    paths = write_all(result, tmp_path)
    data = json.loads(paths["results.json"].read_text(encoding="utf-8"))
    jsonschema.validate(data, SCHEMA)
    assert data["score"] == 0 and data["max_score"] == 400
    assert sum(len(t["output"]) for t in data["tests"]) < REPORT_TEXT_LIMIT + 400 * 300
    ET.parse(paths["junit.xml"])
    summary = paths["summary.md"].read_text(encoding="utf-8")
    assert [line for line in summary.splitlines() if line.startswith("#")] == ["## seqlab: 0 / 400 points (0.0%)"]
    assert "<script>" not in summary and "| x | y |" not in summary
    assert "\\[link\\](javascript" in summary  # brackets escaped: no link
    assert "<script>alert" not in paths["report.html"].read_text(encoding="utf-8")
    import io

    terminal = io.StringIO()
    print_table(result, file=terminal)
    assert "\x1b" not in terminal.getvalue()
