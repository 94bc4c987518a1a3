"""The graders judged by the wrong submissions their own mistake tables describe
(tests/mutants/derived.py): each loses points in its function only, with the row's name in the
feedback. A mistake is declared once, in the grader, and tested here without being written again.
The rows a topic file names (``FromTable``) are graded by tests/grading/test_mutants.py under
their recorded names instead, so not twice."""

from __future__ import annotations

import pytest

from seqlab.config import load_config
from seqlab.grading import grade_submission, grading_settings
from tests.grading.test_mutants import CALLERS
from tests.mutants import make_submission, table_rows
from tests.mutants.derived import derived_mutants

ALL_DERIVED = derived_mutants()
DERIVED = [m for m in ALL_DERIVED if m.id not in table_rows()]
CONFIG = load_config()


def test_the_tables_give_mutants_for_most_functions():
    assert len({m.function for m in ALL_DERIVED}) >= 10, sorted({m.function for m in ALL_DERIVED})


@pytest.mark.bank
@pytest.mark.parametrize("variant", DERIVED, ids=lambda v: v.id)
def test_a_declared_mistake_loses_points_only_in_its_function_and_is_named(tmp_path, variant):
    submission = make_submission(tmp_path / "submission", variant)
    only = ",".join([variant.module, *CALLERS[variant.module]])
    result = grade_submission(submission, grading_settings(isolated=False, seed=7, only=only, config=CONFIG))
    scores = result.by_function()
    score, max_score = scores[variant.function]
    assert score < max_score, f"{variant.id}: the grader gave it full marks"
    others = {fn: s for fn, s in scores.items() if fn != variant.function and s[0] < s[1]}
    assert not others, f"{variant.id}: points lost elsewhere too: {others}"
    hints = [t.hint for t in result.tests if t.function == variant.function and t.hint]
    assert any(variant.hint.lower() in h.lower() for h in hints), f"{variant.id}: not named (got {hints})"
