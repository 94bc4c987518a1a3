"""Mistakes no grader lists, named by their structure, end to end (tests/mutants/structural.py):
every one loses points in its own function only, and its feedback names what is wrong."""

from __future__ import annotations

import pytest

from seqlab.config import load_config
from seqlab.grading import grade_submission, grading_settings
from tests.mutants import make_submission
from tests.mutants.structural import REWRITTEN, STRUCTURAL

pytestmark = pytest.mark.bank


def _submission_with_all(target, variants=STRUCTURAL):
    """One submission holding every structural mistake: a bug is charged to its own function
    (callees are replaced by correct ones), so one grading judges them all."""
    from seqlab.build import replace_function

    make_submission(target)
    for v in variants:
        path = target / "exercises" / f"{v.module}.py"
        path.write_text(replace_function(path.read_text(), v.function.split(".", 1)[1], v.source))
    return target


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    submission = _submission_with_all(tmp_path_factory.mktemp("structural") / "submission")
    return grade_submission(submission, grading_settings(isolated=False, seed=7, config=load_config()))


def test_only_the_wrong_functions_lose_points(graded):
    wrong = {v.function for v in STRUCTURAL}
    lost = {fn for fn, (s, m) in graded.by_function().items() if s < m}
    assert lost == wrong, f"missed: {sorted(wrong - lost)}; charged wrongly: {sorted(lost - wrong)}"


@pytest.mark.parametrize("variant", STRUCTURAL, ids=lambda v: v.id)
def test_the_feedback_names_it(graded, variant):
    failed = [t for t in graded.tests if t.function == variant.function and t.status == "failed"]
    said = [t.hint if variant.where == "hint" else t.output for t in failed]
    assert any(variant.hint in s for s in said), f"{variant.id}: wanted {variant.hint!r} in {said}"


@pytest.fixture(scope="module")
def rewritten(tmp_path_factory):
    submission = _submission_with_all(tmp_path_factory.mktemp("rewritten") / "submission", REWRITTEN)
    return grade_submission(submission, grading_settings(isolated=False, seed=7, config=load_config()))


def test_rewritten_mistakes_lose_points_in_their_function_only(rewritten):
    wrong = {v.function for v in REWRITTEN}
    assert {fn for fn, (s, m) in rewritten.by_function().items() if s < m} == wrong


@pytest.mark.parametrize("variant", REWRITTEN, ids=lambda v: v.id)
def test_the_reference_rewritten_names_it(rewritten, variant):
    hints = [t.hint for t in rewritten.tests if t.function == variant.function and t.status == "failed"]
    assert any(variant.hint in h for h in hints), f"{variant.id}: wanted {variant.hint!r} in {hints}"
