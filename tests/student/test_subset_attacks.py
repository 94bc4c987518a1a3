"""The blind attack bank against the language subset (tests/attacks/subset_bank.py), each attack
graded as a student's submission would be, the subset on and the sandbox around it.

An attack is held when nothing it tried got out: no canary file appeared, no secret reached a
report, and the function it targets earned nothing it should not have: 0 for an attack that
cheats (``zero``), its points less the complexity points for a correct loop hidden from the
scan rule (``complexity-only``), and a module the subset refused scores 0 in every function.
Every other module of the submission keeps its full marks: the attack costs only itself.
"""

from __future__ import annotations

import functools

import pytest

from seqlab.grading import grade_submission, grading_settings
from seqlab.submission import SubmissionError
from seqlab.subset import refusals
from tests.attacks import CANARY_DIR, SUBSET_ATTACKS, build
from tests.attacks.sandbox_bank import FAKE_TOKEN, LEAK

pytestmark = [pytest.mark.usefixtures("no_canaries"), pytest.mark.slow, pytest.mark.bank]


def test_the_bank_is_big_enough():
    assert len(SUBSET_ATTACKS) >= 130
    assert len({a.name for a in SUBSET_ATTACKS}) == len(SUBSET_ATTACKS)


@pytest.mark.parametrize("attack", SUBSET_ATTACKS, ids=lambda a: a.name)
def test_subset_attack_is_held(tmp_path, attack, fast_config, sandbox_mode, canary_dir):
    canary_dir.mkdir(parents=True, exist_ok=True)  # routes that can only create a file need it
    submission = build(attack, tmp_path)
    refused = refusals(submission, [attack.module])
    if refused:
        # Refused before any of it runs: the module is never loaded, so every function in it
        # scores 0 (tests/student/test_sandbox.py grades that), and the test below runs the same
        # attack beneath the subset.
        assert "language subset" in refused[attack.module] or "failed to import" in refused[attack.module]
        return
    result = _grade(submission, attack, fast_config, sandbox_mode, subset=True)
    if result is None:
        return
    texts = [t.output for t in result.tests] + list(result.errors)
    leaks = [line for text in texts for line in text.splitlines() if _leaked(line)]
    assert not leaks, f"{attack.name} got a secret out: {leaks[0][:400]}"
    scores = result.by_function()
    target, target_max = scores[attack.target]
    if attack.expect in ("zero", "refused"):
        assert target == 0, f"{attack.name} scored {target}/{target_max}: {_why(result, attack)}"
    else:  # complexity-only: a correct loop keeps its values' points, never the complexity points
        complexity = fast_config.rules(attack.target).complexity_points
        assert target <= target_max - complexity, f"{attack.name} kept the complexity points"


def _grade(submission, attack, config, sandbox: str, *, subset: bool):
    """The attack's target graded in the sandbox (the subset on or off), the grader's environment
    holding a token; None when the submission reader refused it whole (links, special files,
    floods), which it must do naming the entry."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GITHUB_TOKEN", FAKE_TOKEN)
        try:
            result = grade_submission(
                submission,
                grading_settings(
                    seed=5,
                    only=attack.target,
                    config=config,
                    sandbox=sandbox,
                    protected_dirs=(str(submission.parent),),
                    static_policy=subset,
                ),
            )
        except SubmissionError as exc:
            assert "exercises" in str(exc) or attack.name in str(exc), exc
            return None
    texts = [t.output for t in result.tests] + list(result.errors)
    found = [s for s in _secrets() for text in texts if s in " ".join(text.split())]
    assert not found, f"{attack.name} got a secret out: {found[0][:200]}"
    return result


def _leaked(line: str) -> bool:
    """The marker with what came after it: a traceback that quotes the attack's own source line
    (``raise RuntimeError("SEQLAB-LEAK " + ...)``) shows the marker, not a secret."""
    return LEAK in line and f'"{LEAK}' not in line and f"'{LEAK}" not in line


def _why(result, attack) -> str:
    lines = [t.output[:200] for t in result.tests if t.function == attack.target and t.score > 0]
    return "; ".join(lines[:2]) or "no output"


def _escapes(attack) -> bool:
    """An attack that tries to leave a trace (a canary) or carry out a secret, not only to cheat."""
    blob = attack.source + attack.prelude
    blob += "".join(v if isinstance(v, str) else v.decode("latin-1") for v in attack.files.values())
    return CANARY_DIR in blob or LEAK in blob or bool(attack.links)


def _refused_statically(attack) -> bool:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return bool(refusals(build(attack, folder), [attack.module]))


@functools.cache
def _secrets() -> tuple[str, ...]:
    """What must never reach a report: a token in the grader's environment, and the lines of the
    reference solutions' answers (the release's leak check collects them)."""
    from seqlab.release.leaks import collect_secrets

    return (FAKE_TOKEN, *(line for line in collect_secrets().region_lines if len(line) >= 28))


# An attack the subset lets load already ran in the sandbox in the test above; beneath the subset
# only those it refuses are new, and those that try to get out.
BENEATH = [a for a in SUBSET_ATTACKS if _escapes(a) and _refused_statically(a)]


@pytest.mark.parametrize("attack", BENEATH, ids=lambda a: a.name)
def test_subset_attack_is_held_beneath_the_subset(tmp_path, attack, fast_config, sandbox_mode, canary_dir):
    """The same attacks run as plain Python (the subset switched off): the sandbox, seccomp, the
    audit hook and the parent's verdicts must still keep every canary and secret in. What the
    student's own process holds (its scrubbed environment, its modules, its loggers) may then be
    printed, and cheating on the value may earn points: keeping those out is the subset's job."""
    if sandbox_mode != "bwrap":
        pytest.skip("beneath the subset, only the real sandbox is claimed to hold")
    canary_dir.mkdir(parents=True, exist_ok=True)
    _grade(build(attack, tmp_path), attack, fast_config, sandbox_mode, subset=False)  # no secret, no canary
