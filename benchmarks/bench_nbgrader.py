"""`nbgrader autograde` vs `seqlab nbgrader autograde --jobs 2` on the same class, side by side in one run.

A class of generated students (student 0 answers everything from solutions/, student 1 hands in
the stubs, every other one a seeded mix per function: correct, a known-wrong variant from
tests/mutants/, or the stub) hands in the notebooks of the chosen topics. The course is copied
after the hand-in, so both graders start from the same files: nbgrader autogrades one copy (one
`nbgrader autograde TOPIC` per topic, a kernel and a grading server per notebook), seqlab the
other (one `seqlab nbgrader autograde COURSE TOPIC... --jobs 2`). Then the two gradebooks are
compared function by function (every generated submission is honest, so they must be identical)
and the ratio of the wall times is printed.
Floor: seqlab >= 10x faster on a class of at least 20 students.

    .venv/bin/python benchmarks/bench_nbgrader.py [--students 20] [--topics optimizers,rnn] [--jobs 2] [--keep DIR]

nbgrader autograde of one student's seven notebooks takes about 85 s on a quiet machine: the
default run (20 students, every topic) takes about half an hour of nbgrader alone. Progress is
printed per topic as it goes, so a run cut short still shows what it measured.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
VENV_BIN = Path(sys.executable).parent
FLOOR = 10.0
# Both paths write the points the hidden graders give, rounded to 6 decimals before nbgrader parses
# them (kernel.hidden_points and seqlab.nbgrader.feedback); anything above that is a real difference.
SCORE_TOLERANCE = 1e-6


def log(message: str) -> None:
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"[{time.strftime('%H:%M:%S')} load {load}] {message}", flush=True)


def run(args, cwd: Path) -> None:
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("NBGRADER_EXECUTION", None)
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(map(str, args))} failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        )


def main() -> int:
    from seqlab import contract
    from seqlab.nbgrader.course import build_course
    from seqlab.nbgrader.gradebook import function_scores
    from tests.nbgrader._class import hand_in_class

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--topics", default=",".join(contract.MODULES), help="comma-separated (default: all seven)")
    parser.add_argument(
        "--jobs", type=int, default=2, help="seqlab's --jobs (default 2: the cores of the course machine)"
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--keep", type=Path, default=None, help="work here and keep both courses")
    args = parser.parse_args()
    topics = [t.strip() for t in args.topics.split(",") if t.strip()]
    unknown = [t for t in topics if t not in contract.MODULES]
    if unknown or not topics:
        parser.error(f"unknown topics {unknown}; choose from {', '.join(contract.MODULES)}")
    work = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="seqlab-bench-nbgrader-"))
    if work.exists() and any(work.iterdir()):
        parser.error(f"{work} is not empty")
    work.mkdir(parents=True, exist_ok=True)
    try:
        log(f"{args.students} students x {len(topics)} topics ({', '.join(topics)}); work in {work}")
        nb_course = build_course(work / "nbgrader-course", seed=args.seed).course_dir
        for topic in topics:
            run([VENV_BIN / "nbgrader", "generate_assignment", topic], cwd=nb_course)
        hand_in_class(nb_course, topics, args.students, args.seed)
        sq_course = work / "seqlab-course"
        shutil.copytree(nb_course, sq_course)
        log("class written; nbgrader autograde first")

        started = time.perf_counter()
        for n, topic in enumerate(topics, 1):
            run([VENV_BIN / "nbgrader", "autograde", topic], cwd=nb_course)
            elapsed = time.perf_counter() - started
            log(
                f"nbgrader autograde: {n}/{len(topics)} topics done ({topic}), {elapsed:.0f} s so far, "
                f"{elapsed / (n * args.students):.1f} s per notebook"
            )
        nbgrader_s = time.perf_counter() - started

        started = time.perf_counter()
        run([VENV_BIN / "seqlab", "nbgrader", "autograde", sq_course, *topics, "--jobs", args.jobs], cwd=work)
        seqlab_s = time.perf_counter() - started
        log(f"seqlab nbgrader autograde --jobs {args.jobs}: {seqlab_s:.1f} s")

        differences = []
        compared = 0
        for topic in topics:
            theirs, ours = function_scores(nb_course, topic), function_scores(sq_course, topic)
            if set(theirs) != set(ours):
                differences.append(f"{topic}: students {sorted(set(theirs) ^ set(ours))} in only one gradebook")
            for student in sorted(set(theirs) & set(ours)):
                for qualname, (score, _) in theirs[student].items():
                    compared += 1
                    mine = ours[student].get(qualname, (None, None))[0]
                    if mine is None or abs(mine - score) > SCORE_TOLERANCE:
                        differences.append(f"{student} {qualname}: nbgrader {score}, seqlab {mine}")
        notebooks = args.students * len(topics)
        ratio = nbgrader_s / seqlab_s
        print(f"\n{args.students} students x {len(topics)} notebooks ({notebooks} notebooks):")
        print(
            f"  nbgrader autograde                    {nbgrader_s:8.1f} s  ({nbgrader_s / notebooks:.2f} s a notebook)"
        )
        print(
            f"  seqlab nbgrader autograde --jobs {args.jobs:<4d} {seqlab_s:8.1f} s  ({seqlab_s / notebooks:.2f} s a notebook)"
        )
        print(
            f"  ratio {ratio:.1f}x (floor {FLOOR:g}x); {compared} function grades compared, "
            f"{len(differences)} different"
        )
        for line in differences[:20]:
            print(f"    DIFFERENT {line}")
        return 0 if ratio >= FLOOR and not differences else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
