"""The hidden autograd tests (seqlab/grading/autograd.py), graded in the student's own process.

Each function a lab trains through has a graded test ``supports autograd``, the twin of its
public ``test_<function>_supports_autograd`` (the same rule and words: seqlab/student/gradcheck.py).
These submissions are the reference with one function changed; each is graded in the isolated
child, the way every hand-in is.
"""

from __future__ import annotations

import pytest

from seqlab.grading import grade_submission, grading_settings
from seqlab.grading.autograd import TITLE
from tests.mutants import Mutant, make_submission
from tests.mutants.selective_scan import INPLACE_UNDER_AUTOGRAD

pytestmark = [pytest.mark.bank, pytest.mark.slow]

# A layer norm right on every value whose variance is computed off the graph: the gradient
# misses the variance's path, which only finite differences of its own values show.
DETACHED_VARIANCE = Mutant(
    "transformer.layer_norm",
    "the variance is taken of x.detach(): right values, a gradient missing a path",
    """
def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x.detach() - mean.detach()) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias
""",
)
# A stub that returns the right shape and nothing else: its gradient (zero) agrees with its
# values (constant), so only the value check in front keeps it from the autograd share.
ZEROS = Mutant(
    "transformer.feed_forward",
    "returns zeros of the right shape",
    """
def feed_forward(x, W1, b1, W2, b2):
    return torch.zeros_like(x)
""",
)


def _autograd_tests(submission, only):
    result = grade_submission(submission, grading_settings(seed=5, only=only, labs=False))
    return {t.function: t for t in result.tests if t.name.endswith(TITLE)}


def test_the_reference_earns_every_autograd_test(tmp_path):
    tests = _autograd_tests(
        make_submission(tmp_path / "s"), "rnn,lstm_gru,attention,positional,transformer,selective_scan"
    )
    from seqlab.student.gradcheck import LABS

    assert set(tests) == set(LABS)
    assert all(t.score == t.max_score > 0 for t in tests.values()), {f: t.output for f, t in tests.items()}


def test_an_inplace_scan_loses_its_own_autograd_test_and_only_that_one(tmp_path):
    tests = _autograd_tests(make_submission(tmp_path / "s", INPLACE_UNDER_AUTOGRAD), "selective_scan")
    scan, whole = tests["selective_scan.linear_scan"], tests["selective_scan.selective_scan"]
    assert scan.score == 0 and "must support autograd" in scan.output, scan.output
    assert "modified by an inplace operation" in scan.output and "in-place write" in scan.output, scan.output
    assert whole.score == whole.max_score  # charged once: to the scan
    assert "not charged here: your selective_scan.linear_scan" in whole.output, whole.output
    assert tests["selective_scan.discretize"].score == tests["selective_scan.discretize"].max_score


def test_a_path_cut_off_the_graph_disagrees_with_finite_differences(tmp_path):
    tests = _autograd_tests(make_submission(tmp_path / "s", DETACHED_VARIANCE), "transformer")
    norm = tests["transformer.layer_norm"]
    assert norm.score == 0 and "disagrees with finite differences of its own values" in norm.output, norm.output
    for caller in ("transformer.encoder_block", "transformer.decoder_block"):  # charged once
        assert tests[caller].score == tests[caller].max_score, tests[caller].output


def test_a_stub_earns_no_autograd_share(tmp_path):
    tests = _autograd_tests(make_submission(tmp_path / "s", ZEROS), "transformer.feed_forward")
    assert tests["transformer.feed_forward"].score == 0
