"""The backward answer route held (tests/attacks/backward_route.py): each attack's function has
right values but no gradient of its own, and forges the gradients the child answers the hidden
autograd test with, or has them made by a kernel its exercise forbids. The autograd test must
score nothing. The value tests, done honestly, keep their points where the gradients were forged
(what is held is the route); a forbidden kernel run in the backward pass voids the function, as
the same kernel run in the call would."""

from __future__ import annotations

import pytest

from seqlab.grading import grade_submission, grading_settings
from tests.attacks.backward_route import ATTACKS
from tests.attacks.blind_integrity_bank import build, patched_module


def test_the_attacks_parse_and_are_named_once():
    import ast

    assert len({a.name for a in ATTACKS}) == len(ATTACKS) >= 3
    for attack in ATTACKS:
        ast.parse(patched_module(attack))


@pytest.mark.bank
@pytest.mark.slow
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_a_forged_backward_earns_no_autograd_points(tmp_path, attack):
    submission = build(attack, tmp_path)
    result = grade_submission(submission, grading_settings(seed=5, only=attack.target, labs=False))
    tests = [t for t in result.tests if t.name.startswith(attack.target + ":")]
    autograd = [t for t in tests if "supports autograd" in t.name]
    values = [t for t in tests if "supports autograd" not in t.name]
    assert autograd, f"{attack.target} has no autograd test"
    won = [(t.name[:80], t.output[:200]) for t in autograd if t.score > 0]
    assert not won, f"{attack.name} won the autograd test: {won[:1]}"
    voided = [t for t in tests if "which this exercise forbids" in t.voided_by]
    if voided:  # the kernel was seen in the backward pass: the whole function, as in the call
        assert len(voided) == len(tests), [t.name for t in tests if t not in voided]
    else:
        assert any(t.score > 0 for t in values), "the values were right: a value test should score"
