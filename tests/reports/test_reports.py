"""The reports of a grading: results.json valid against Gradescope's schema, junit.xml,
summary.md and report.html well-formed and agreeing with the grading, and text from student code
kept as data in every one of them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from seqlab import contract
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
