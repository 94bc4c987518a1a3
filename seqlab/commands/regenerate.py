"""`seqlab regenerate [--check] [--recorded] [--only PART ...]`: everything derived, in one command.

A change to ``solutions/``, ``graders/``, the notebooks' prose, ``grading_config.yaml`` or the
exam bank leaves files behind that are written from them, never by hand. This writes them all,
in the order they depend on each other:

- ``stubs``: ``exercises/`` from ``solutions/`` (``seqlab build``);
- ``docs``: the generated figures and tables of ``docs/`` (``seqlab.docs_figures``);
- ``coverage``: ``docs/coverage.md`` from the exam bank (``seqlab exam coverage``);
- ``hedges``: the course notes' hedged sentences, ``exams/notes_hedges.json``, which the exam
  lint reads (only where the notes are at hand, ``../shared/course-notes``);
- ``digests``: the exam digests, ``tests/recorded/exams/digests.json`` (the project's checkout);
- ``recorded``: the recorded grades of the mutant, attack and probe banks,
  ``tests/recorded/*.json`` (a few hundred gradings: only with ``--recorded``).

``--check`` writes nothing and exits 1 while any part is stale (``make check``; the suite checks
the same parts, the recorded grades in ``make test-banks``). A recorded grade or digest that
changes is a regrade: regenerate them on purpose, and say why in the commit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from argparse import Namespace
from collections.abc import Callable

from .. import build as builder
from .. import docs_figures
from ..errors import UserError
from ..paths import COURSE_ROOT, EXERCISES_DIR, SOLUTIONS_DIR

DOCS_DIR = COURSE_ROOT / "docs"
# The banks whose grades are recorded (tests/_recorded.py): every one a grading per submission.
RECORDED_TESTS = ("tests/grading/test_mutants.py", "tests/student/test_attacks.py", "tests/student/test_probes.py")
DIGEST_TESTS = ("tests/exam/test_recorded.py",)


def _stubs(check: bool) -> list[str]:
    if check:
        return builder.stale_files(SOLUTIONS_DIR, EXERCISES_DIR)
    return builder.build(SOLUTIONS_DIR, EXERCISES_DIR)


def _docs(check: bool) -> list[str]:
    return docs_figures.regenerate(DOCS_DIR, check=check)


def _coverage(check: bool) -> list[str]:
    from .exam import run_coverage

    return ["coverage.md"] if run_coverage(Namespace(check=check, out=None)) else []


def _hedges(check: bool) -> list[str]:
    from ..exam.lint_text import NOTES, write_hedges

    if not NOTES.is_dir():  # a clone without the notes beside it keeps the record it has
        print(f"hedges: {NOTES} is not here; exams/notes_hedges.json is kept as recorded", flush=True)
        return []
    return write_hedges(check)


def _recordings() -> dict[str, bytes]:
    """Every recording's bytes, by path: what a recording run rewrote is what differs after it."""
    folder = COURSE_ROOT / "tests" / "recorded"
    return {str(f.relative_to(COURSE_ROOT)): f.read_bytes() for f in sorted(folder.rglob("*.json"))}


def _pytest(tests: tuple[str, ...], check: bool, jobs: int, select: str | None = None) -> list[str]:
    """The project's tests that compare with a recording; without ``check`` they rewrite it
    (``select``: pytest's ``-k``, the entries of one function; the others are kept as they are)."""
    missing = [t for t in tests if not (COURSE_ROOT / t).is_file()]
    if missing:
        raise UserError(f"{', '.join(missing)}: not in {COURSE_ROOT} (the recordings live in seqlab's own checkout)")
    env = {**os.environ, "SEQLAB_RECORD": "" if check else "1"}
    workers = ["-n", str(jobs)] if jobs > 1 else []
    chosen = ["-k", select] if select else []
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers, *chosen, *tests]
    print("$", ("" if check else "SEQLAB_RECORD=1 ") + " ".join(command[1:]), flush=True)
    before = {} if check else _recordings()
    run = subprocess.run(command, cwd=COURSE_ROOT, env=env)
    if run.returncode in (0, 5):  # 5: -k selected nothing, so nothing was recorded
        # what it rewrote, said as such: "up to date" after a rewrite misled a maintainer trial
        return [] if check else [path for path, data in _recordings().items() if before.get(path) != data]
    if check:
        return list(tests)
    raise UserError(f"recording with {' '.join(tests)} failed (exit {run.returncode}); see its output above")


PARTS: dict[str, Callable[[Namespace], list[str]]] = {
    "stubs": lambda a: _stubs(a.check),
    "docs": lambda a: _docs(a.check),
    "coverage": lambda a: _coverage(a.check),
    "hedges": lambda a: _hedges(a.check),
    "digests": lambda a: _pytest(DIGEST_TESTS, a.check, 1),
    "recorded": lambda a: _pytest(RECORDED_TESTS, a.check, a.jobs, a.select),
}
FAST = ("stubs", "docs", "coverage", "digests")  # what runs without --recorded


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("regenerate", help="rewrite everything derived: stubs, docs tables, coverage, digests")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 while any part is stale")
    p.add_argument("--recorded", action="store_true", help="the recorded grades of the banks too (slow)")
    p.add_argument("--only", nargs="+", choices=list(PARTS), metavar="PART", help=f"only these ({', '.join(PARTS)})")
    p.add_argument("--jobs", type=int, default=2, help="pytest workers for the recorded grades (default 2)")
    p.add_argument("-k", dest="select", help="the recorded grades of the tests pytest's -k selects (one function's)")
    p.set_defaults(func=run)


def run(args) -> int:
    parts = args.only or [*FAST, *(["recorded"] if args.recorded else [])]
    stale = {}
    for name in PARTS:  # in dependency order, whatever the order asked
        if name in parts:
            changed = PARTS[name](args)
            if changed:
                stale[name] = changed
            verb = "stale" if args.check else "rewrote"
            print(f"{name}: {verb} {', '.join(changed)}" if changed else f"{name}: up to date", flush=True)
    if args.check and stale:
        print(f"stale: {', '.join(stale)}: run `seqlab regenerate --only {' '.join(stale)}`", file=sys.stderr)
        return 1
    return 0
