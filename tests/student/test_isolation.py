"""The isolated runner against the in-process one.

Because a bug is charged once (declared callees answer from the reference's recorded calls), mutants of different
functions do not interact: the known-wrong variants are packed into a few submissions, one
mutant per function each, and every per-test score must be identical under both runners.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from seqlab.grading import grade_submission, grading_settings
from seqlab.student.children import prespawn
from seqlab.student.sandbox import resolve as resolve_sandbox
from tests.attacks.channel_and_oracle import PACKS, build_pack
from tests.mutants import ROOT, all_variants, make_submission, replace_function

# Every known-wrong variant graded by both runners: a bank, run by `make test-banks`.
pytestmark = pytest.mark.bank

# The known-wrong variants by function; round i of the packing takes each function's i-th variant.
MUTANTS_BY_FUNCTION = defaultdict(list)
for _mutant in all_variants("MUTANTS"):
    MUTANTS_BY_FUNCTION[_mutant.function].append(_mutant)
ROUNDS = max(len(v) for v in MUTANTS_BY_FUNCTION.values())
# The callee stand-ins too: one-liner routes and honest callers over stub callees.
STAND_IN_PACKS = ("oracle-routes", "honest-callers-over-stubs")
# One test per submission, so the workers share the gradings (each is two full ones).
SUBMISSIONS = ["reference", "stubs", *STAND_IN_PACKS, *(f"packed{i}" for i in range(ROUNDS))]


def packed_submission(target: Path, round_: int) -> Path:
    folder = make_submission(target / f"packed{round_}")
    for function, mutants in MUTANTS_BY_FUNCTION.items():
        if round_ < len(mutants):
            module, name = function.split(".")
            path = folder / "exercises" / f"{module}.py"
            path.write_text(replace_function(path.read_text(), name, mutants[round_].source))
    return folder


def build_submission(name: str, target: Path) -> Path:
    if name == "reference":
        return make_submission(target / name)
    if name == "stubs":
        shutil.copytree(ROOT / "exercises", target / name / "exercises")
        return target / name
    if name in STAND_IN_PACKS:
        return build_pack(next(pack for pack in PACKS if pack.name == name), target)
    return packed_submission(target, int(name.removeprefix("packed")))


def _scores(result):
    return [(t.name, round(t.score, 6)) for t in result.tests]


@pytest.mark.slow
@pytest.mark.parametrize("name", SUBMISSIONS)
def test_runners_agree_on_references_stubs_and_every_known_wrong_variant(tmp_path, name):
    submission = build_submission(name, tmp_path)
    # the isolated grading's child (or fork server) imports torch while the in-process one runs
    prespawn(submission / "exercises", resolve_sandbox("auto"))
    fast = grade_submission(submission, grading_settings(isolated=False, seed=31))
    safe = grade_submission(submission, grading_settings(isolated=True, seed=31))
    assert _scores(fast) == _scores(safe), name
