"""The labs' cost: each lab's CPU time, and `seqlab grade` with the labs vs `--no-labs`.

Each round grades the reference submission three ways as fresh processes, in turn: `python -c
"import torch"`, `seqlab grade --no-labs` and `seqlab grade` (the labs on), all isolated in the
default sandbox. The labs' own times come from the graded run (results: ``meta.lab_runs``): the
student's training in the child (CPU seconds, as the kernel counts them) and the parent's
evaluation (the reference's own run on the same inputs and the held-out measure).

Floors: every lab's training <= its CPU budget (seqlab.labs.CPU_BUDGET_S, 5 s) and
all of them together <= 15 s; the grade without labs within 3x the torch import; with them, at
most the labs' own time (child + parent CPU, 1.5x for a busy machine's wall clock) on top; and
the class estimate (300 submissions on 2 cores, each costing the with-labs grade less the torch
import, which grade-all's workers pay once) under 45 minutes. Exits 1 when one is missed.

    .venv/bin/python benchmarks/bench_labs.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CLASS, CORES, CLASS_MINUTES = 300, 2, 45.0
TORCH_FLOOR = 3.0
ALL_LABS_S = 15.0


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from seqlab.labs import LABS
    from tests.mutants import make_submission

    work = Path(tempfile.mkdtemp(prefix="seqlab-bench-labs-"))
    submission = make_submission(work / "submission")
    grade = [sys.executable, "-m", "seqlab", "grade", str(submission), "--quiet", "--seed", "1"]
    commands = {
        "import torch": [sys.executable, "-c", "import torch"],
        "seqlab grade --no-labs": [*grade, "--out", str(work / "without"), "--no-labs"],
        "seqlab grade (labs)": [*grade, "--out", str(work / "with")],
    }
    timed(commands["seqlab grade --no-labs"])  # warm the page cache and bytecode caches
    times = {name: [] for name in commands}
    runs: dict[str, list[dict]] = {}
    for _ in range(args.rounds):
        for name, command in commands.items():
            times[name].append(timed(command))
        result = json.loads((work / "with" / "seqlab_result.json").read_text())
        for function, run in result["meta"].get("lab_runs", {}).items():
            runs.setdefault(function, []).append(run)
    failures = []
    print(f"{'lab':32s} {'train CPU s':>11s} {'parent CPU s':>12s} {'budget s':>9s}")
    lab_total = 0.0
    for function, found in runs.items():
        child = statistics.median(r["cpu_s"] for r in found)
        parent = statistics.median(r["parent_cpu_s"] for r in found)
        budget = LABS[function].cpu_budget_s
        lab_total += child + parent
        print(f"{function:32s} {child:11.2f} {parent:12.2f} {budget:9.1f}")
        if child > budget:
            failures.append(f"{function} trained for {child:.2f} s, over its budget")
    trained = sum(statistics.median(r["cpu_s"] for r in found) for found in runs.values())
    if trained > ALL_LABS_S:
        failures.append(f"the labs together train for {trained:.1f} s, over {ALL_LABS_S:g} s")
    base = statistics.median(times["import torch"])
    without, with_labs = (
        statistics.median(times["seqlab grade --no-labs"]),
        statistics.median(times["seqlab grade (labs)"]),
    )
    print(f"\n{'command':28s} {'median s':>9s} {'ratio':>7s}")
    for name, values in times.items():
        print(f"{name:28s} {statistics.median(values):9.2f} {statistics.median(values) / base:7.2f}x")
    print(f"labs add {with_labs - without:.2f} s of wall time; their own CPU time is {lab_total:.2f} s")
    # grade-all's workers import torch once, not once a submission: a submission costs its grade
    # less the interpreter's and torch's start
    class_minutes = CLASS * (with_labs - base) / CORES / 60
    print(
        f"a class of {CLASS} on {CORES} cores, with the labs: about {class_minutes:.0f} minutes (floor {CLASS_MINUTES:g})"
    )
    if without / base > TORCH_FLOOR:
        failures.append(f"grade --no-labs is {without / base:.2f}x import torch, over {TORCH_FLOOR:g}x")
    if with_labs - without > 1.5 * lab_total + 1.0:
        failures.append(f"the labs add {with_labs - without:.1f} s, more than their own {lab_total:.1f} s")
    if class_minutes > CLASS_MINUTES:
        failures.append(f"the class would take {class_minutes:.0f} minutes")
    for failure in failures:
        print("FLOOR MISSED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
