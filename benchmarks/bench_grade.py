"""Full `seqlab grade` of one submission vs `python -c "import torch"`, side by side.

Each round runs, in turn: the torch import, the isolated grade in the bubblewrap sandbox (the
default where bwrap works), the isolated grade without it (``--sandbox none``) and the
in-process grade, each as a fresh process, so every side pays interpreter start-up alike.
Rounds are interleaved and the medians compared, because these machines are noisy.

Floor: the full grade without the labs (``--no-labs``), sandboxed,
isolated and in-process, within 3x the torch import.
Exits 1 when a median ratio is above 3.

    .venv/bin/python benchmarks/bench_grade.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FLOOR = 3.0


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from tests.mutants import make_submission

    work = Path(tempfile.mkdtemp(prefix="seqlab-bench-"))
    submission = make_submission(work / "submission")
    # the exercises alone: the labs add their own training time (benchmarks/bench_labs.py)
    seqlab = [sys.executable, "-m", "seqlab", "grade", str(submission), "--quiet", "--seed", "1", "--no-labs"]
    commands = {
        "import torch": [sys.executable, "-c", "import torch"],
        "seqlab grade (sandboxed)": [*seqlab, "--out", str(work / "box"), "--sandbox", "bwrap"],
        "seqlab grade --sandbox none": [*seqlab, "--out", str(work / "iso"), "--sandbox", "none"],
        "seqlab grade --in-process": [*seqlab, "--out", str(work / "inp"), "--in-process"],
    }
    from seqlab.student.sandbox import probe

    if probe():  # without bwrap there is nothing to measure on that line; say why
        print(f"no sandbox here ({probe()}): measuring without it")
        del commands["seqlab grade (sandboxed)"]
    timed(commands["seqlab grade --sandbox none"])  # warm the page cache and bytecode caches
    times = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, command in commands.items():
            times[name].append(timed(command))
    base = statistics.median(times["import torch"])
    print(f"{'command':28s} {'median s':>9s} {'ratio':>7s}   (floor: <= {FLOOR:g}x import torch)")
    worst = 0.0
    for name, values in times.items():
        ratio = statistics.median(values) / base
        if name != "import torch":
            worst = max(worst, ratio)
        print(f"{name:28s} {statistics.median(values):9.2f} {ratio:7.2f}x")
    return 0 if worst <= FLOOR else 1


if __name__ == "__main__":
    sys.exit(main())
