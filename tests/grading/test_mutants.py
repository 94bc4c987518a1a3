"""The graders judged by known-wrong and alternative-correct implementations.

A mutant (one wrong function) must lose points in that function and keep full points in every
other function, including the functions that call it (the grader swaps in a correct callee, so
a bug is charged once). An alternative correct implementation must score full marks.
Graded in-process here for speed; tests/student/test_isolation.py shows both runners agree.
"""

from __future__ import annotations

import pytest

from seqlab.config import load_config
from seqlab.grading import grade_submission, grading_settings
from tests._recorded import assert_same_grade
from tests.mutants import all_variants, make_submission

# Modules whose functions call into another module's contract functions.
CALLERS = {
    "attention": ["transformer"],
    "selective_scan": [],
    "rnn": [],
    "lstm_gru": [],
    "positional": [],
    "transformer": [],
    "optimizers": [],
}

MUTANTS = all_variants("MUTANTS")
ALTERNATIVES = all_variants("ALTERNATIVES")
# The course's grading config, read once: the same (frozen) rules grade_submission would read
# again for each of the 143 gradings.
CONFIG = load_config()


def _grade(tmp_path, variant, seed):
    submission = make_submission(tmp_path / "submission", variant)
    only = ",".join([variant.module, *CALLERS[variant.module]])
    return grade_submission(submission, grading_settings(isolated=False, seed=seed, only=only, config=CONFIG))


def test_enough_variants():
    assert len(MUTANTS) >= 30, f"only {len(MUTANTS)} known-wrong variants"
    assert len(ALTERNATIVES) >= 3
    assert len({m.function for m in MUTANTS}) >= 20


@pytest.mark.parametrize("variant", MUTANTS, ids=lambda v: v.id)
def test_mutant_loses_points_only_in_its_function(tmp_path, variant):
    result = _grade(tmp_path, variant, seed=7)
    assert_same_grade("mutants", variant.id, result)
    scores = result.by_function()
    score, max_score = scores[variant.function]
    assert score < max_score, f"{variant.id}: the grader gave it full marks"
    others = {fn: s for fn, s in scores.items() if fn != variant.function and s[0] < s[1]}
    assert not others, f"{variant.id}: points lost elsewhere too: {others}"
    hints = [t.hint for t in result.tests if t.function == variant.function and t.hint]
    if variant.wrong:
        said = [h for h in hints if variant.wrong.lower() in h.lower()]
        assert not said, f"{variant.id}: the feedback names a mistake it is not: {said}"
    if variant.hint:
        assert any(variant.hint.lower() in h.lower() for h in hints), (
            f"{variant.id}: no feedback names the mistake (wanted {variant.hint!r}, got {hints})"
        )


@pytest.mark.parametrize("variant", ALTERNATIVES, ids=lambda v: v.id)
def test_alternative_correct_scores_full(tmp_path, variant):
    result = _grade(tmp_path, variant, seed=11)
    assert_same_grade("alternatives", variant.id, result)
    failed = [(t.name, t.output[:300]) for t in result.tests if t.score < t.max_score]
    assert not failed, f"{variant.id}: {failed}"
