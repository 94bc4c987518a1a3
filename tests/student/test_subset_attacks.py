"""The blind attack bank against the language subset (tests/attacks/subset_bank.py), each attack
graded as a student's submission would be, the subset on and the sandbox around it.

An attack is held when nothing it tried got out: no canary file appeared, no secret reached a
report, and the function it targets earned nothing it should not have: 0 for an attack that
cheats (``zero``), its points less the complexity points for a correct loop hidden from the
scan rule (``complexity-only``), and a module the subset refused scores 0 in every function.
Every other module of the submission keeps its full marks: the attack costs only itself.
"""

from __future__ import annotations

import pytest

from seqlab.grading import grade_submission
from seqlab.submission import SubmissionError
from seqlab.subset import refusals
from tests.attacks import SUBSET_ATTACKS, build
from tests.attacks.sandbox_bank import LEAK

pytestmark = [pytest.mark.usefixtures("no_canaries"), pytest.mark.slow]


def test_the_bank_is_big_enough():
    assert len(SUBSET_ATTACKS) >= 130
    assert len({a.name for a in SUBSET_ATTACKS}) == len(SUBSET_ATTACKS)


@pytest.mark.parametrize("attack", SUBSET_ATTACKS, ids=lambda a: a.name)
def test_subset_attack_is_held(tmp_path, attack, fast_config, sandbox_mode, canary_dir):
    canary_dir.mkdir(parents=True, exist_ok=True)  # routes that can only create a file need it
    submission = build(attack, tmp_path)
    refused = refusals(submission, [attack.module])
    try:
        result = grade_submission(
            submission,
            seed=5,
            only=attack.module,
            config=fast_config,
            sandbox=sandbox_mode,
            protected_dirs=(str(tmp_path),),
        )
    except SubmissionError as exc:  # links, special files, floods: refused whole, unread
        assert "exercises" in str(exc) or attack.name in str(exc), exc
        return
    texts = [t.output for t in result.tests] + list(result.errors)
    leaks = [line for text in texts for line in text.splitlines() if _leaked(line)]
    assert not leaks, f"{attack.name} got a secret out: {leaks[0][:400]}"
    scores = result.by_function()
    target, target_max = scores[attack.target]
    if refused or attack.expect == "zero":
        assert target == 0, f"{attack.name} scored {target}/{target_max}: {_why(result, attack)}"
    else:  # complexity-only: a correct loop keeps its values' points, never the complexity points
        complexity = fast_config.rules(attack.target).complexity_points
        assert target <= target_max - complexity, f"{attack.name} kept the complexity points"


def _leaked(line: str) -> bool:
    """The marker with what came after it: a traceback that quotes the attack's own source line
    (``raise RuntimeError("SEQLAB-LEAK " + ...)``) shows the marker, not a secret."""
    return LEAK in line and f'"{LEAK}' not in line and f"'{LEAK}" not in line


def _why(result, attack) -> str:
    lines = [t.output[:200] for t in result.tests if t.function == attack.target and t.score > 0]
    return "; ".join(lines[:2]) or "no output"
