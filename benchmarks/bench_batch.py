"""`seqlab grade-all --jobs 2` vs `--jobs 1` over 20 submissions, side by side in one run.

Rounds alternate the two settings (jobs 1, jobs 2, jobs 1, ...) on the same 20 submissions
(references, stubs and buggy ones, a realistic class) and compare median wall times.
Floor: throughput with 2 jobs >= 1.7x that with 1 job on a 2-core machine.

    .venv/bin/python benchmarks/bench_batch.py [--rounds 1] [--submissions 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FLOOR = 1.7


def make_class(folder: Path, count: int) -> None:
    from tests.mutants import all_variants, make_submission

    mutants = all_variants("MUTANTS")
    for i in range(count):
        if i % 5 == 4:
            shutil.copytree(ROOT / "exercises", folder / f"student{i:02d}" / "exercises")
        else:
            make_submission(folder / f"student{i:02d}", mutants[(7 * i) % len(mutants)] if i % 2 else None)


def run(jobs: int, submissions: Path, out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "seqlab",
            "grade-all",
            str(submissions),
            "--out",
            str(out),
            "--jobs",
            str(jobs),
            "--seed",
            "1",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=ROOT,
    )
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--submissions", type=int, default=20)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="seqlab-batch-"))
    make_class(work / "class", args.submissions)
    times = {1: [], 2: []}
    for _ in range(args.rounds):
        for jobs in (1, 2):
            times[jobs].append(run(jobs, work / "class", work / f"out{jobs}"))
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(
        f"{args.submissions} submissions: --jobs 1 {one:.1f} s ({args.submissions / one:.2f}/s), "
        f"--jobs 2 {two:.1f} s ({args.submissions / two:.2f}/s); speed-up {one / two:.2f}x "
        f"(floor {FLOOR:g}x)"
    )
    return 0 if one / two >= FLOOR else 1


if __name__ == "__main__":
    sys.exit(main())
