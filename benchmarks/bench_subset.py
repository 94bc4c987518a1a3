"""The language subset's cost: checking the references' modules, and grading them through the
guards vs as plain Python, side by side.

Each round grades the reference solutions in-process twice, once inside the subset (every
attribute read, item read, write and iteration a guard call) and once as plain Python
(``static_policy=False``), alternating, and times ``seqlab.subset.read_modules`` on the seven
modules (read, decode, transform, compile). Medians are compared, because these machines are noisy.

Floor: grading inside the subset within 1.5x plain Python, and the check of all seven modules
under 0.5 s. Exits 1 below either.

    .venv/bin/python benchmarks/bench_subset.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RATIO_FLOOR = 1.5
CHECK_FLOOR_S = 0.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from seqlab.grading import grade_submission, grading_settings
    from seqlab.regions import strip_markers
    from seqlab.subset import check, read_modules

    with tempfile.TemporaryDirectory() as tmp:
        submission = Path(tmp)
        (submission / "exercises").mkdir()
        for path in sorted((ROOT / "solutions").glob("*.py")):
            (submission / "exercises" / path.name).write_text(strip_markers(path.read_text()))
        grade_submission(submission, grading_settings(isolated=False, seed=1))  # warm: imports, caches
        times: dict[str, list[float]] = {"subset": [], "plain": [], "check": []}
        for _ in range(args.rounds):
            for name, subset in (("subset", True), ("plain", False)):
                started = time.perf_counter()
                result = grade_submission(submission, grading_settings(isolated=False, seed=1, static_policy=subset))
                times[name].append(time.perf_counter() - started)
                assert result.score == result.max_score, (name, result.score)
            check.cache_clear()  # the check is cached per text within a process: time it afresh
            started = time.perf_counter()
            read_modules(submission / "exercises")
            times["check"].append(time.perf_counter() - started)
    median = {k: statistics.median(v) for k, v in times.items()}
    ratio = median["subset"] / median["plain"]
    print(f"{'':28s}{'median':>10s}")
    print(f"{'grade, plain Python':28s}{median['plain']:9.2f}s")
    print(f"{'grade, in the subset':28s}{median['subset']:9.2f}s   {ratio:.2f}x (floor {RATIO_FLOOR}x)")
    print(f"{'check of 7 modules':28s}{median['check']:9.3f}s   (floor {CHECK_FLOOR_S} s)")
    return 0 if ratio <= RATIO_FLOOR and median["check"] <= CHECK_FLOOR_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
