"""Exact points: every function's maximum is its configured points, to the last digit, in every
file a grade is read from (results.json, seqlab_result.json, gradebook.csv), and a test's points
are an exact share of its function's."""

from __future__ import annotations

import csv
import json
import math

import pytest

from seqlab import contract
from seqlab.config import load_config
from seqlab.gradebook import write_gradebook
from seqlab.grader_index import collect_grader_tests
from seqlab.grading.scoring import score_records, share_out, units_of
from seqlab.reports import write_all
from seqlab.results import GradingResult

# What sums of per-test points, each rounded on its own, used to read (a single test's 0.9231,
# twelve thirteenths, is a right share and may appear).
DRIFTED = ("5.9997", "2.0001", "112.0002", "1.9999", "2.9999", "6.0003")


@pytest.fixture(scope="session")
def full_marks():
    """Every grader test passed: the result of a perfect submission, without grading one."""
    records = collect_grader_tests()
    for record in records:
        record.passed = True
    return GradingResult(tests=score_records(records, load_config()), seed=0)


def test_every_function_reads_back_its_configured_points(full_marks, tmp_path):
    config = load_config()
    write_all(full_marks, tmp_path, html=False)
    gradescope = json.loads((tmp_path / "results.json").read_text())
    saved = GradingResult.load(tmp_path / "seqlab_result.json")
    per_function: dict[str, list[float]] = {}
    for test in gradescope["tests"]:
        per_function.setdefault(test["name"].split(":", 1)[0], []).append(test["max_score"])
    assert set(per_function) == set(contract.FUNCTIONS)
    for function, maxima in per_function.items():
        points = config.rules(function).points
        assert math.fsum(maxima) == points, (function, maxima)
        assert round(sum(maxima), 4) == points, (function, maxima)  # a plain sum is an ulp off at most
        assert saved.by_function()[function] == (points, points)
    assert gradescope["max_score"] == gradescope["score"] == config.max_score == saved.max_score
    assert math.fsum(t["max_score"] for t in gradescope["tests"]) == config.max_score
    write_gradebook(tmp_path, [{"submission": "s", "status": "graded", "reason": "", "result": saved}])
    row = next(csv.DictReader((tmp_path / "gradebook.csv").open()))
    assert float(row["max_score"]) == config.max_score
    assert all(float(row[f]) == config.rules(f).points for f in contract.FUNCTIONS)
    for text in ((tmp_path / "results.json").read_text(), (tmp_path / "gradebook.csv").read_text()):
        assert not [d for d in DRIFTED if d in text]


@pytest.mark.parametrize(
    ("total", "weights"),
    [(60000, [1] * 7), (20000, [1, 1, 1]), (120000, [1] * 13), (30000, [2, 2, 2, 2, 1]), (10000, [0.1, 0.2, 0.7])],
)
def test_shares_add_up_to_the_points_and_differ_by_one_unit_at_most(total, weights):
    units = share_out(total, weights)
    assert sum(units) == total
    for unit, weight in zip(units, weights, strict=True):
        assert abs(unit - total * weight / sum(weights)) < 1


def test_shares_of_no_weight_and_of_decimal_points():
    assert share_out(0, [1, 1]) == [0, 0] and share_out(10000, [0, 0]) == [0, 0]
    assert units_of(0.1) == 1000 and units_of(112) == 1_120_000
