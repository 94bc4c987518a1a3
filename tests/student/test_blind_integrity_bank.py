"""The blind integrity bank (tests/attacks/blind_integrity_bank.py) graded as a class is graded:
each attack is an honest, full-marks submission with one function or lab replaced, graded in the
isolated child with the sandbox, and the target must score nothing for work it did not do.

An attack that wins points today is kept as ``xfail(strict=True)`` with what it wins and the layer
that lets it through (``WINS``): the suite stays green, the hole stays on record, and the day a
fix holds it the xfail turns into a failure that asks for the entry to move to the held side.
"""

from __future__ import annotations

import ast

import pytest

from seqlab.grading import grade_submission, grading_settings
from tests.attacks.blind_integrity_bank import BANK, WINS, build, patched_module

CLASSES = ("strings", "kernels", "oracle", "labs", "other")


def test_the_bank_is_blind_big_and_spread():
    """At least 60 attacks (the acceptance line of the integrity issue), every class at least five,
    names unique, every recorded win names an attack of the bank, every patched module parses."""
    assert len(BANK) >= 60
    assert len({a.name for a in BANK}) == len(BANK)
    assert {a.cls for a in BANK} == set(CLASSES)
    assert all(sum(a.cls == c for a in BANK) >= 5 for c in CLASSES)
    assert set(WINS) <= {a.name for a in BANK}
    for attack in BANK:
        ast.parse(patched_module(attack))
        assert attack.labs == (attack.cls == "labs"), attack.name


def _case(attack):
    marks = [pytest.mark.xfail(strict=True, reason=WINS[attack.name])] if attack.name in WINS else []
    return pytest.param(attack, id=attack.name, marks=marks)


@pytest.mark.bank
@pytest.mark.slow
@pytest.mark.parametrize("attack", [_case(a) for a in BANK])
def test_blind_integrity_attack_is_held(tmp_path, attack):
    submission = build(attack, tmp_path)
    # seed 5: the seed the other banks grade with; the target alone (its module loads whole), the
    # labs on only for a lab attack (a lab grading costs ~30 s, an exercise ~2 s)
    result = grade_submission(submission, grading_settings(seed=5, only=attack.target, labs=attack.labs))
    score, out_of = result.by_function()[attack.target]
    assert out_of > 0, f"{attack.target} was not graded"
    won = [t.output[:200] for t in result.tests if t.function == attack.target and t.score > 0]
    assert score == 0, f"{attack.name} won {score}/{out_of} on {attack.target}: {won[:2]}"
