"""The attack and fault bank (tests/attacks) against the isolated runner, one grading per attack.

Every attack earns nothing on the function it targets and changes nothing elsewhere; every
fault costs only what it should; grading always finishes with a complete results.json, and no
canary file ever appears (checked after each attack, in this worker's own canary folder, so the
attacks spread over both workers). The probes packed into shared gradings are test_probes.py.

The bank runs against the real bubblewrap sandbox. Where bwrap cannot run, it fails when the
environment variable CI is set (CI must prove the sandbox) and otherwise runs under the
fallback guards, skipping the attacks whose ``fallback`` says the guards alone do not stop them.
"""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from seqlab.config import load_config
from seqlab.grading import grade_submission, grading_settings
from seqlab.grading.autograd import TITLE as AUTOGRAD_TITLE
from seqlab.reports import write_all
from seqlab.submission import SubmissionError
from seqlab.subset import refusals
from tests._helpers import RESULTS_SCHEMA
from tests._recorded import assert_same_grade
from tests.attacks import ATTACKS, build
from tests.attacks.sandbox_bank import LEAK

pytestmark = [pytest.mark.usefixtures("no_canaries"), pytest.mark.bank]


def test_bank_is_big_enough():
    assert len([a for a in ATTACKS]) >= 48
    assert len({a.name for a in ATTACKS}) == len(ATTACKS), "attack names must be unique"


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.name)
def test_attack(tmp_path, attack, fast_config, sandbox_mode):
    submission = build(attack, tmp_path)
    verdict = refusals(submission, [attack.module])
    assert bool(verdict) == attack.refused, f"static policy on {attack.name}: {verdict or 'nothing refused'}"
    if verdict:
        assert re.search(r"line \d+: ", verdict[attack.module]), verdict
    sandbox = sandbox_mode
    if sandbox == "none" and attack.fallback.startswith("NOT"):
        pytest.skip(f"needs the sandbox (without it: {attack.fallback})")
    out = tmp_path / "out"
    grading = dict(
        isolated=True,
        seed=5,
        only=attack.module,
        config=fast_config,
        protected_dirs=(str(out),),
        sandbox=sandbox,
        static_policy=not attack.policy_off,
    )
    if attack.expect == "unreadable":
        with pytest.raises(SubmissionError, match=r"exercises/\S+: a symbolic link, not followed") as refused:
            grade_submission(submission, grading_settings(**grading))
        assert LEAK not in str(refused.value)
        return
    result = grade_submission(submission, grading_settings(**grading))
    paths = write_all(result, out)
    assert_same_grade("attacks", attack.name, result, sandbox=sandbox)
    results_json = json.loads(paths["results.json"].read_text())
    jsonschema.validate(results_json, RESULTS_SCHEMA)
    assert results_json["score"] == pytest.approx(result.score), "results.json must hold the parent's score"

    leaks = [t.output for t in result.tests if LEAK in t.output] + [e for e in result.errors if LEAK in e]
    assert not leaks, f"{attack.name} got through: {leaks[0][:500]}"
    assert result.meta["sandbox"].startswith("bwrap") == (sandbox == "bwrap")

    scores = result.by_function()
    target_score, target_max = scores[attack.target]
    if attack.expect == "refused":
        assert all(s == 0 for s, _ in scores.values()), scores
        assert any("language subset" in e and re.search(r"line \d+", e) for e in result.errors), result.errors
        return
    others = {f: s for f, s in scores.items() if f != attack.target and s[0] < s[1]}
    if attack.expect == "module-lost":
        assert all(s == 0 for s, _ in scores.values()), scores
        assert any(attack.module in e for e in result.errors), result.errors
        return
    assert not others, f"{attack.name} changed other functions' scores: {others}"
    if attack.expect == "zero":
        assert target_score == 0, f"{attack.name} earned {target_score} on {attack.target}"
    elif attack.expect == "complexity-only":
        complexity = load_config().rules(attack.target).complexity_points
        # A loop through Python floats or numpy is off autograd's graph too: it also loses the
        # autograd test (the selective-copy lab could not train through it), and nothing else.
        off_graph = sum(
            t.max_score - t.score
            for t in result.tests
            if t.function == attack.target and t.name.endswith(AUTOGRAD_TITLE) and "must support autograd" in t.output
        )
        assert target_score == pytest.approx(target_max - complexity - off_graph), (
            target_score,
            target_max,
            [
                (t.name, t.score, t.output[:200])
                for t in result.tests
                if t.function == attack.target and t.score < t.max_score
            ],
        )
    elif attack.expect == "some-lost":
        assert 0 < target_score < target_max, (target_score, target_max)
        assert any("in place" in t.output for t in result.tests if t.function == attack.target)
    elif attack.expect == "full":
        assert target_score == target_max
    else:
        raise AssertionError(f"unknown expectation {attack.expect}")
