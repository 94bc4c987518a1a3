"""The attack and fault bank (tests/attacks) against the isolated runner, in one run.

Every attack earns nothing on the function it targets and changes nothing elsewhere; every
fault costs only what it should; grading always finishes with a complete results.json, no
canary file ever appears and no route reports a leak.

The bank runs against the real bubblewrap sandbox. Where bwrap cannot run, it fails when the
environment variable CI is set (CI must prove the sandbox) and otherwise runs under the
fallback guards, skipping the attacks whose ``fallback`` says the guards alone do not stop them.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from seqlab.config import load_config
from seqlab.grading import grade_submission
from seqlab.grading.static_policy import policy_violations
from seqlab.reports import write_all
from seqlab.student.sandbox import probe
from tests.attacks import ATTACKS, CANARY_DIR, build
from tests.attacks.sandbox_bank import LEAK

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "gradescope_results.schema.json").read_text())


@pytest.fixture(scope="module")
def fast_config():
    """The course config with a 3 s call timeout, so the hanging attacks cost seconds, not minutes."""
    config = load_config()
    return replace(config, limits=replace(config.limits, call_timeout_s=3.0, import_timeout_s=10.0))


@pytest.fixture(scope="module", autouse=True)
def no_canaries_before():
    shutil.rmtree(CANARY_DIR, ignore_errors=True)
    yield
    leftovers = sorted(p.name for p in Path(CANARY_DIR).glob("*")) if Path(CANARY_DIR).exists() else []
    assert not leftovers, f"canary files appeared: {leftovers}"


def sandbox_mode() -> str:
    problem = probe()
    if not problem:
        return "bwrap"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the attack bank in the real sandbox, and bwrap cannot run here: {problem}")
    return "none"


def test_bank_is_big_enough():
    assert len([a for a in ATTACKS]) >= 48
    assert len({a.name for a in ATTACKS}) == len(ATTACKS), "attack names must be unique"


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.name)
def test_attack(tmp_path, attack, fast_config):
    submission = build(attack, tmp_path)
    verdict = policy_violations(submission, [attack.module])
    assert bool(verdict) == attack.refused, f"static policy on {attack.name}: {verdict or 'nothing refused'}"
    if verdict:
        assert re.search(r"line \d+: ", verdict[attack.module]), verdict
    sandbox = sandbox_mode()
    if sandbox == "none" and attack.fallback.startswith("NOT"):
        pytest.skip(f"needs the sandbox (without it: {attack.fallback})")
    out = tmp_path / "out"
    result = grade_submission(submission, isolated=True, seed=5, only=attack.module, config=fast_config,
                              protected_dirs=(str(out),), sandbox=sandbox, static_policy=not attack.policy_off)
    paths = write_all(result, out)
    results_json = json.loads(paths["results.json"].read_text())
    jsonschema.validate(results_json, SCHEMA)
    assert results_json["score"] == pytest.approx(result.score), "results.json must hold the parent's score"

    leaks = [t.output for t in result.tests if LEAK in t.output] + [e for e in result.errors if LEAK in e]
    assert not leaks, f"{attack.name} got through: {leaks[0][:500]}"
    assert result.meta["sandbox"].startswith("bwrap") == (sandbox == "bwrap")

    scores = result.by_function()
    target_score, target_max = scores[attack.target]
    if attack.expect == "refused":
        assert all(s == 0 for s, _ in scores.values()), scores
        assert any("code policy" in e and re.search(r"line \d+", e) for e in result.errors), result.errors
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
        assert target_score == pytest.approx(target_max - complexity), (target_score, target_max)
    elif attack.expect == "some-lost":
        assert 0 < target_score < target_max, (target_score, target_max)
        assert any("in place" in t.output for t in result.tests if t.function == attack.target)
    elif attack.expect == "full":
        assert target_score == target_max
    else:
        raise AssertionError(f"unknown expectation {attack.expect}")
