"""grade-all's shards (``--shard i/N``) and their merge (``seqlab gradebook --submissions``): the
partition is stable and whole, and N shards merged give the gradebook, LMS files and similarity
of one run."""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab.engines.shards import Shard, parse_shard
from tests.batch._faults import ONLY
from tests.mutants import all_variants, make_submission


def test_a_shard_is_read_as_i_of_n_and_nothing_else():
    assert parse_shard("2/5") == Shard(2, 5)
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/2/3"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_shard(bad)


def test_every_name_is_in_exactly_one_shard_and_the_same_one_everywhere():
    names = [f"student{i:03d}" for i in range(300)] + ["ſam", "a+0123456789ab", "Bob.zip"]
    for count in (1, 2, 3, 7):
        owners = [[i for i in range(1, count + 1) if Shard(i, count).holds(n)] for n in names]
        assert all(len(o) == 1 for o in owners)
        # the documented rule, worked by hand: SHA-256 of the name, first 8 bytes, modulo N
        assert all(
            o == [int.from_bytes(hashlib.sha256(n.encode()).digest()[:8], "big") % count + 1]
            for n, o in zip(names, owners, strict=True)
        )
        if count > 1:  # a class of 300 lands on every shard: a rule that put all in one would fail
            assert {o[0] for o in owners} == set(range(1, count + 1))


def write_small_class(klass: Path) -> None:
    """Honest, wrong in the graded function, broken, empty and a zip: every kind of row."""
    for name in ("ada", "bo", "cy"):
        make_submission(klass / name)
    wrong = next(v for v in all_variants("MUTANTS") if v.function == ONLY)
    make_submission(klass / "dee", wrong)
    broken = make_submission(klass / "eve")
    (broken / "exercises" / "attention.py").write_text("def causal_mask(:\n")
    (klass / "fay").mkdir()


def seqlab(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "seqlab", *map(str, args)], capture_output=True, text=True, timeout=900
    )


GRADE = ("--seed", 5, "--only", ONLY, "--no-labs", "--sandbox", "none", "--similarity")


@pytest.mark.bank
@pytest.mark.slow
def test_three_shards_merged_are_one_run(tmp_path):
    """The same class, seed and options: once whole, once as three shards (two into one shared
    folder, one into its own); the merge's gradebook.csv, LMS files and similarity section are
    one run's, byte for byte, and every shard wrote its own gradebook only."""
    klass = tmp_path / "class"
    write_small_class(klass)
    whole = tmp_path / "whole"
    one = seqlab("grade-all", klass, "--out", whole, "--jobs", 2, *GRADE)
    assert one.returncode == 1, one.stderr[-2000:]  # fay is no hand-in's shape: not graded
    shared, own = tmp_path / "shared", tmp_path / "own"
    for index, out in ((1, shared), (2, shared), (3, own)):
        part = seqlab("grade-all", klass, "--out", out, "--shard", f"{index}/3", *GRADE)
        assert part.returncode in (0, 1), part.stderr[-2000:]
        assert (out / f"gradebook-shard-{index}-of-3.csv").is_file()
    for out in (shared, own):
        assert not (out / "gradebook.csv").exists() and not (out / "lms").exists()
        assert not (out / "class_report.html").exists()
    merged = tmp_path / "merged"
    done = seqlab("gradebook", shared, "--shard-out", own, "--submissions", klass, "--out", merged, "--similarity")
    assert done.returncode == 1, done.stderr[-2000:]
    assert (merged / "gradebook.csv").read_bytes() == (whole / "gradebook.csv").read_bytes()
    for lms in sorted((whole / "lms").iterdir()):
        assert (merged / "lms" / lms.name).read_bytes() == lms.read_bytes(), lms.name
    rows = (whole / "gradebook.csv").read_text().splitlines()
    assert len(rows) == 7 and [r.split(",")[1] for r in rows[1:]].count("graded") == 5
    # the class report: the same but for where each report.html lies (in its shard's folder)
    report, alone = (merged / "class_report.md").read_text(), (whole / "class_report.md").read_text()
    links = re.findall(r"\]\(([^)]*report\.html)\)", report)
    assert len(links) == 5 and all((merged / link).is_file() for link in links)
    assert re.sub(r"\]\([^)]*\)", "]", report) == re.sub(r"\]\([^)]*\)", "]", alone)
    assert "imilar" in report


def test_a_shard_that_never_ran_leaves_rows_that_say_so_and_the_cli_refuses_a_lone_scheduler(tmp_path, capsys):
    """Hand-ins that cannot be read grade in an instant, so the merge's bookkeeping is seen
    without a grading: shard 1 of 2 ran, shard 2 did not; every hand-in still has its row."""
    from seqlab.batch import ClassRun, grade_all
    from seqlab.cli import main
    from seqlab.engines.shards import merge_shards
    from tests.batch.test_class_faults import _settings

    klass, out = tmp_path / "class", tmp_path / "out"
    names = [f"n{i}" for i in range(8)]
    for name in names:
        (klass / name).mkdir(parents=True)  # no exercises/: "not a hand-in's shape", an error row
    first = {n for n in names if Shard(1, 2).holds(n)}
    assert first and first != set(names)
    rows = grade_all(klass, out, _settings(), ClassRun(shard=Shard(1, 2)))
    assert {r["submission"] for r in rows} == first and (out / "gradebook-shard-1-of-2.csv").is_file()
    merged, lms = merge_shards([out], klass, tmp_path / "merged")
    assert [r["submission"] for r in merged] == names
    assert {r["submission"]: r["status"] for r in merged} == {n: "error" if n in first else "pending" for n in names}
    assert "canvas.csv" in lms and (tmp_path / "merged" / "gradebook.csv").is_file()
    assert main(["grade-all", str(klass), "--out", str(out), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "needs --engine dask" in capsys.readouterr().err
