"""linear_scan's complexity rule under load: how often it is wrong, in both directions.

Grades a class of submissions with `seqlab grade-all`'s own machinery (seqlab.batch.grade_all:
worker processes, each with its fork server, the bubblewrap sandbox), ``--jobs 2``, only the
linear_scan tests, while two extra processes spin (``python -c "while True: pass"``) on the
2-core machine. Every submission is the reference solutions with linear_scan replaced by one of
the variants of tests/attacks/scan_variants.py (and the bank's numpy loop):

- honest scans of O(log T) depth, which must keep the complexity points: the reference
  (Blelloch-style up/down sweep), Hillis-Steele doubling (O(T log T) work, the slowest honest
  one), a recursive odd/even doubling interleaved with stack/cat, and a chunked scan;
- loops over time, which must lose them: torch tensors, Python floats, Python floats behind a
  cache keyed on the input, Python floats with a module-level __getattr__ that spends the same
  again on any missing name, and numpy vectors.

A loop the language subset refuses before any timing (tests/attacks/scan_variants.py's
OUTSIDE_THE_SUBSET) is graded in a second class with the subset switched off, under the same
load, so that what it measures is the timing rule beneath the subset.

Prints, per variant and per kind, the gradings, the false negatives (an honest scan that lost
the complexity points) and false positives (a loop that kept them) with their rates, any other
points lost (there should be none: every variant's values are right), and the load average.
Acceptance: 0 false negatives in at least 500 gradings of honest scans, every loop variant
losing every time; the script exits with status 1 on any wrong verdict.

    .venv/bin/python benchmarks/bench_scan_rule.py [--gradings 200] [--jobs 2] [--busy 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
COMPLEXITY = "O(log T)"  # in the complexity test's title


def variants() -> dict[str, tuple[str, str, str]]:
    """name -> (kind, prelude, source)."""
    from tests.attacks import ATTACKS
    from tests.attacks.scan_variants import HONEST, LOOPS

    numpy_loop = next(a for a in ATTACKS if a.name == "numpy-loop-in-linear-scan")
    found = {name: ("honest", *code) for name, code in HONEST.items()}
    found.update({name: ("loop", *code) for name, code in LOOPS.items()})
    found[numpy_loop.name] = ("loop", numpy_loop.prelude, numpy_loop.source)
    return found


def make_class(folder: Path, gradings: int, loop_share: float) -> dict[str, str]:
    """``gradings`` submission folders, in a shuffled order; returns folder name -> variant.
    The variants outside the subset go to ``folder``'s sibling ``<folder>-beneath``."""
    from tests.attacks import Attack, build
    from tests.attacks.scan_variants import OUTSIDE_THE_SUBSET

    table = variants()
    honest = [n for n, v in table.items() if v[0] == "honest"]
    loops = [n for n, v in table.items() if v[0] == "loop"]
    loop_count = max(len(loops), round(gradings * loop_share)) if gradings >= 2 * len(loops) else 0
    plan = [honest[i % len(honest)] for i in range(gradings - loop_count)]
    plan += [loops[i % len(loops)] for i in range(loop_count)]
    random.Random(0).shuffle(plan)  # honest and loops interleaved: each grading is under the others' load
    names = {}
    for i, variant in enumerate(plan):
        _, prelude, source = table[variant]
        name = f"s{i:04d}-{variant}"
        where = beneath(folder) if variant in OUTSIDE_THE_SUBSET else folder
        build(Attack(name, "selective_scan.linear_scan", source, prelude=prelude), where)
        names[name] = variant
    return names


def beneath(folder: Path) -> Path:
    return folder.with_name(folder.name + "-beneath")


def verdicts(out: Path, names: dict[str, str]) -> list[dict]:
    rows = []
    for name, variant in names.items():
        path = out / name / "results.json"
        path = path if path.is_file() else beneath(out) / name / "results.json"
        row = {"name": name, "variant": variant, "kind": variants()[variant][0], "graded": path.is_file()}
        if row["graded"]:
            tests = json.loads(path.read_text())["tests"]
            complexity = [t for t in tests if COMPLEXITY in t["name"]]
            row["kept"] = bool(complexity) and all(t["score"] >= t["max_score"] for t in complexity)
            row["other_lost"] = sum(t["max_score"] - t["score"] for t in tests if COMPLEXITY not in t["name"])
            row["message"] = next((t.get("output", "") for t in complexity if t["score"] < t["max_score"]), "")
        rows.append(row)
    return rows


def report(rows: list[dict], seconds: float, loads: list[float]) -> int:
    by_variant: dict[str, Counter] = {}
    for row in rows:
        counts = by_variant.setdefault(row["variant"], Counter())
        counts["gradings"] += 1
        if not row["graded"]:
            counts["not graded"] += 1
            continue
        wrong = row["kept"] if row["kind"] == "loop" else not row["kept"]
        counts["wrong"] += wrong
        counts["other points lost"] += row["other_lost"] > 0
    kinds = variants()
    print(f"{'variant':40} {'kind':7} {'gradings':>8} {'wrong':>6} {'rate':>7} {'other lost':>10} {'ungraded':>8}")
    totals = {"honest": Counter(), "loop": Counter()}
    for variant, counts in sorted(by_variant.items(), key=lambda item: (kinds[item[0]][0], item[0])):
        kind = kinds[variant][0]
        totals[kind].update(counts)
        rate = counts["wrong"] / max(counts["gradings"] - counts["not graded"], 1)
        print(
            f"{variant:40} {kind:7} {counts['gradings']:8d} {counts['wrong']:6d} {rate:7.2%} "
            f"{counts['other points lost']:10d} {counts['not graded']:8d}"
        )
    for kind, label in (
        ("honest", "false negatives (honest scans that lost the points)"),
        ("loop", "false positives (loops that kept them)"),
    ):
        counts = totals[kind]
        graded = counts["gradings"] - counts["not graded"]
        print(f"{label}: {counts['wrong']} of {graded} ({counts['wrong'] / max(graded, 1):.2%})")
    for row in rows:
        if row["graded"] and (row["kept"] if row["kind"] == "loop" else not row["kept"]):
            print(f"  wrong: {row['name']}: {row['message'][:300]}")
    print(f"{len(rows)} gradings in {seconds:.0f} s; load average during the run: {min(loads):.1f}-{max(loads):.1f}")
    bad = sum(c["wrong"] + c["not graded"] + c["other points lost"] for c in totals.values())
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gradings", type=int, default=200, help="submissions graded in all (default 200)")
    parser.add_argument("--loop-share", type=float, default=0.25, help="share of them that are loops (0.25)")
    parser.add_argument("--jobs", type=int, default=2, help="grade-all workers (2, as --jobs 2)")
    parser.add_argument("--busy", type=int, default=2, help="extra spinning processes during the run (2)")
    args = parser.parse_args()

    from seqlab.batch import ClassRun, grade_all
    from seqlab.grading import grading_settings
    from seqlab.student.sandbox import probe

    if probe():
        print(f"bench_scan_rule: the sandbox cannot run here: {probe()}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="seqlab-bench-scan-rule-") as tmp:
        submissions, out = Path(tmp) / "class", Path(tmp) / "out"
        names = make_class(submissions, args.gradings, args.loop_share)
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
        loads = [os.getloadavg()[0]]

        class Progress:
            def start(self, total, already):
                self.done, self.total = 0, total

            def advance(self, name, status):
                self.done += 1
                loads.append(os.getloadavg()[0])
                if self.done % 20 == 0 or self.done == self.total:
                    print(f"  {self.done}/{self.total} graded (load {loads[-1]:.1f})", flush=True)

            def stop(self):
                pass

        started = time.perf_counter()
        try:
            settings = grading_settings(only="selective_scan.linear_scan", sandbox="bwrap")
            grade_all(submissions, out, settings, ClassRun(jobs=args.jobs), progress=Progress())
            if beneath(submissions).is_dir():
                beneath_settings = dataclasses.replace(settings, static_policy=False)
                grade_all(
                    beneath(submissions), beneath(out), beneath_settings, ClassRun(jobs=args.jobs), progress=Progress()
                )
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
        return report(verdicts(out, names), time.perf_counter() - started, loads)


if __name__ == "__main__":
    sys.exit(main())
