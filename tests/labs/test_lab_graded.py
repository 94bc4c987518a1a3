"""The recall, reverser and selective-copy labs graded as a submission, through the sandbox: a
correct loop in another style than the reference scores full marks with no mistake named on
five seeds, known-wrong loops lose points with their slip named (a crash's included, which
needs the sandbox's traceback), and a lab names an earlier function only when that function
failed its own tests. Every test here trains labs: all in the bank.
"""

from __future__ import annotations

import pytest

from seqlab.build import replace_function
from seqlab.grading import grade_submission, grading_settings
from tests.mutants import all_variants, make_submission
from tests.mutants.labs_slips import NAMED_MUTANTS
from tests.mutants.labs_tasks import TASK_ALTERNATIVES

# One wrong loop per kind of evidence: a crash in adam, an exact equality, a probe at lr = 0,
# a variant forward that fits the reported losses, a replay of the protocol with the slip.
GRADED = [
    ("lstm_gru.train_recall", "Adam state shared between parameters"),
    ("transformer.train_reverser", "Adam state shared between parameters"),
    ("lstm_gru.train_recall", "target is the last token"),
    ("selective_scan.train_selective_copy", "time-invariant scan used when selective=True"),
    ("selective_scan.train_selective_copy", "learning rate not passed to adam"),
    ("transformer.train_reverser", "causal mask missing in the decoder"),
    # the differential replay (seqlab/labs/differential.py) and the generator's probes
    ("lstm_gru.train_recall", "the model's softmax probabilities given to the loss (a double softmax)"),
    ("lstm_gru.train_recall", "the batch drawn without the generator"),
    ("transformer.train_reverser", "the decoder called with its two inputs swapped"),
    ("selective_scan.train_selective_copy", "A = exp(A_log), without the minus sign"),
]


def _grade(tmp_path, variant=None, *, seed=7, only):
    submission = make_submission(tmp_path / "submission", variant)
    return grade_submission(submission, grading_settings(seed=seed, only=only, labs=True))


def _lab(result, function):
    return [t for t in result.tests if t.function == function]


@pytest.mark.bank
@pytest.mark.parametrize("variant", TASK_ALTERNATIVES, ids=lambda v: v.function)
def test_an_alternative_loop_scores_full_marks_and_is_named_nothing_on_five_seeds(tmp_path, variant):
    for seed in range(5):
        result = _grade(tmp_path / str(seed), variant, seed=seed, only=variant.function)
        tests = _lab(result, variant.function)
        assert tests and all(t.score == t.max_score and not t.hint for t in tests), (seed, [t.output for t in tests])


@pytest.mark.bank
@pytest.mark.parametrize("function, description", GRADED, ids=lambda x: x)
def test_a_wrong_loop_graded_loses_points_with_its_slip_named(tmp_path, function, description):
    variant = next(m for m in NAMED_MUTANTS if m.function == function and m.description == description)
    result = _grade(tmp_path, variant, only=function)
    tests = _lab(result, function)
    assert tests and sum(t.score for t in tests) < sum(t.max_score for t in tests)
    assert any(t.hint.startswith(f"{variant.hint}: ") for t in tests), [(t.hint, t.output[:300]) for t in tests]


@pytest.mark.bank
def test_a_lab_names_an_earlier_function_only_when_it_failed_its_own_tests(tmp_path):
    """The lab's tests run after every other test of the grading, so the functions it names
    have all been judged: a correct adam is not named (it was, when the recall lab ran before
    the optimizers' tests), a broken one is, and the loop's slip then is not (charged once)."""
    only = "optimizers.adam,rnn.softmax_cross_entropy,lstm_gru.train_recall"
    wrong_loop = next(m for m in NAMED_MUTANTS if m.description == "target is the last token")
    result = _grade(tmp_path / "loop", wrong_loop, only=only)
    failed = [t for t in _lab(result, "lstm_gru.train_recall") if t.score < t.max_score]
    assert failed and all("optimizers.adam" not in t.output for t in failed), [t.output for t in failed]
    # adam without bias correction: a bug the recall lab survives, so the wrong loop is added
    adam_bug = next(m for m in all_variants("MUTANTS") if m.function == "optimizers.adam" and "bias correction" in m.id)
    submission = make_submission(tmp_path / "adam" / "submission", adam_bug)
    path = submission / "exercises" / "lstm_gru.py"
    path.write_text(replace_function(path.read_text(), "train_recall", wrong_loop.source))
    result = grade_submission(submission, grading_settings(seed=7, only=only, labs=True))
    assert any(t.score < t.max_score for t in result.tests if t.function == "optimizers.adam")
    failed = [t for t in _lab(result, "lstm_gru.train_recall") if t.score < t.max_score]
    assert failed and all("optimizers.adam" in t.output and not t.hint for t in failed), [
        (t.output, t.hint) for t in failed
    ]
