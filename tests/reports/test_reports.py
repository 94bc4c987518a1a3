"""The reports of a grading: results.json valid against Gradescope's schema, junit.xml,
summary.md and report.html well-formed and agreeing with the grading, and text from student code
kept as data in every one of them."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from seqlab import contract
from seqlab.config import course_figures
from seqlab.grading import grade_submission, grading_settings
from seqlab.reports import write_all
from tests._helpers import RESULTS_SCHEMA, make_buggy_submission


@pytest.fixture
def buggy_submission(tmp_path):
    """Three wrong functions in three modules: the reports have failures to show."""
    return make_buggy_submission(tmp_path / "buggy")


def test_reports_are_well_formed(buggy_submission, tmp_path):
    result = grade_submission(buggy_submission, grading_settings(isolated=False, seed=5))
    paths = write_all(result, tmp_path)
    data = json.loads(paths["results.json"].read_text())
    jsonschema.validate(data, RESULTS_SCHEMA)
    assert data["score"] == pytest.approx(result.score) and data["max_score"] == pytest.approx(
        course_figures().exercise_points
    )
    assert all(t["name"].split(":")[0] in contract.SIGNATURES for t in data["tests"])
    assert "seed 5" in data["output"]
    junit = ET.parse(paths["junit.xml"]).getroot()
    assert int(junit.get("tests")) == len(result.tests)
    assert int(junit.get("failures")) == sum(t.status == "failed" for t in result.tests) > 0
    summary = paths["summary.md"].read_text()
    assert "| module | function |" in summary and "seqlab:" in summary
    html = paths["report.html"].read_text()
    assert "<table>" in html and "Looks like" in html
    # all three bugs are in functions others run: every lab trains with adam, gru_forward calls
    # gru_cell (and the recall lab trains with it), the reverser lab with sinusoidal_encoding.
    # The report opens with them, the one more functions run first.
    fix_first = html.split('id="fix-first-title"', 1)[1].split("</section>", 1)[0]
    named = re.findall(r'<li><a href="#([^"]+)">', fix_first)
    assert named == ["optimizers.adam", "lstm_gru.gru_cell", "positional.sinusoidal_encoding"]
    assert set(named) == set((buggy_submission / "bugs.txt").read_text().split())
    assert re.search(r"^1\. `optimizers\.adam` \(", summary, re.M) and "Fix first" in data["output"]


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
    jsonschema.validate(data, RESULTS_SCHEMA)
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


# --- what a student reads ----------------------------------------------------------------------


def _small_result(submission="/home/instructor/course/submissions/alice"):
    from seqlab.results import GradingResult, TestResult

    where = "/home/instructor/course/submissions/alice/exercises/rnn.py"
    hint = "your result equals the reference's computed with b_h = 0"
    tests = [
        TestResult("rnn.rnn_cell: one", 0.0, 12 / 13, output=f"bad at {where}, line 3", hint=hint),
        TestResult("rnn.rnn_cell: two", 0.0, 3 / 13, output="bad again", hint=hint),
        TestResult("rnn.rnn_cell: three", 1.0, 1.0),
        TestResult("rnn.rnn_forward: one", 4.5714, 8.0, output="part"),
        TestResult("optimizers.sgd: one", 2.0, 2.0),
        TestResult("optimizers.adam: one", 0.0, 5.0, output="wrong"),
    ]
    return GradingResult(tests=tests, submission=submission, seed=3, errors=[f"import of {where} failed"])


def test_reports_fold_passes_say_each_hint_once_round_points_and_hide_paths(tmp_path):
    paths = write_all(_small_result(), tmp_path)
    html = paths["report.html"].read_text(encoding="utf-8")
    summary = paths["summary.md"].read_text(encoding="utf-8")
    results = paths["results.json"].read_text(encoding="utf-8")
    for text in (html, summary, results):
        assert "/home/instructor" not in text
    assert "exercises/rnn.py, line 3" in html and "<code>alice</code>" in html
    assert html.count("computed with b_h = 0") == 1  # two failures, one box
    assert summary.count("computed with b\\_h = 0") == 1
    assert '<details class="passed">' in html and "1 test passed" in html
    assert "0.92" in html and "0.9231" not in html and "4.57 / 8" in html


def test_every_failed_row_of_the_terminal_table_has_a_status_word():
    import io

    from seqlab.reports.table import print_table

    out = io.StringIO()
    print_table(_small_result(), file=out)
    rows = {line.split()[1]: line for line in out.getvalue().splitlines() if "rnn." in line or "optimizers." in line}
    assert "partial" in rows["rnn.rnn_cell"] and "partial" in rows["rnn.rnn_forward"]
    assert "failed" in rows["optimizers.adam"] and "ok" in rows["optimizers.sgd"]


def test_gradescope_results_number_tag_and_group_by_function_in_markdown():
    from seqlab.reports.gradescope import to_gradescope

    data = to_gradescope(_small_result())
    jsonschema.validate(data, RESULTS_SCHEMA)
    assert [t["number"] for t in data["tests"]] == ["1.1", "1.2", "1.3", "2.1", "3.1", "4.1"]
    assert data["tests"][0]["tags"] == ["rnn", "rnn.rnn_cell"]
    assert {t["output_format"] for t in data["tests"]} == {"md"} and data["test_output_format"] == "md"
    assert sum("**Looks like:**" in t["output"] for t in data["tests"]) == 1  # once per function


# Gradescope's autograder specification (https://gradescope-autograders.readthedocs.io/en/latest/specs/):
# the fields it defines, at the top and in each test.
GRADESCOPE_TOP = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
                  "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}  # fmt: skip
GRADESCOPE_TEST = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format",
                   "tags", "visibility", "extra_data"}  # fmt: skip


def test_the_schema_says_whose_each_field_is():
    top = RESULTS_SCHEMA["properties"]
    test = top["tests"]["items"]["properties"]
    for props, spec in ((top, GRADESCOPE_TOP), (test, GRADESCOPE_TEST)):
        assert all(p.get("x-defined-by") in ("gradescope", "seqlab") for p in props.values())
        assert {k for k, p in props.items() if p["x-defined-by"] == "gradescope"} <= spec
        assert {k for k, p in props.items() if p["x-defined-by"] == "seqlab"}.isdisjoint(spec)
    for extra in (top["extra_data"], test["extra_data"]):
        assert {p["x-defined-by"] for p in extra["properties"].values()} == {"seqlab"}
