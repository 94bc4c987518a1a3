"""The isolated runner against the in-process one.

Because a bug is charged once (declared callees answer from the reference's recorded calls), mutants of different
functions do not interact: the known-wrong variants are packed into a few submissions, one
mutant per function each, and every per-test score must be identical under both runners.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

from seqlab.grading import grade_submission
from seqlab.student.spawn import prespawn
from tests.attacks.channel_and_oracle import PACKS, build_pack
from tests.mutants import ROOT, all_variants, make_submission, replace_function


def packed_submissions(target: Path) -> list[Path]:
    by_function = defaultdict(list)
    for mutant in all_variants("MUTANTS"):
        by_function[mutant.function].append(mutant)
    rounds = max(len(v) for v in by_function.values())
    folders = []
    for i in range(rounds):
        folder = make_submission(target / f"packed{i}")
        for function, mutants in by_function.items():
            if i < len(mutants):
                module, name = function.split(".")
                path = folder / "exercises" / f"{module}.py"
                path.write_text(replace_function(path.read_text(), name, mutants[i].source))
        folders.append(folder)
    return folders


def _scores(result):
    return [(t.name, round(t.score, 6)) for t in result.tests]


def test_runners_agree_on_references_stubs_and_every_known_wrong_variant(tmp_path):
    stubs = tmp_path / "stubs"
    shutil.copytree(ROOT / "exercises", stubs / "exercises")
    # The callee stand-ins too: one-liner routes and honest callers over stub callees.
    stand_ins = [
        build_pack(pack, tmp_path) for pack in PACKS if pack.name in ("oracle-routes", "honest-callers-over-stubs")
    ]
    submissions = [make_submission(tmp_path / "reference"), stubs, *stand_ins, *packed_submissions(tmp_path)]
    for submission in submissions:
        prespawn()  # the child imports torch while the in-process grading runs
        fast = grade_submission(submission, isolated=False, seed=31)
        safe = grade_submission(submission, isolated=True, seed=31)
        assert _scores(fast) == _scores(safe), submission.name
    assert len(submissions) >= 5
