"""`seqlab grade-all SUBMISSIONS_DIR --out DIR --jobs N`: grade a whole class."""

from __future__ import annotations

import time
from pathlib import Path

from ..defaults import SUBMISSION_TIMEOUT_S
from .options import (
    add_config_option,
    add_jobs_option,
    add_labs_option,
    add_sandbox_option,
    grading_settings_of,
    print_class_summary,
)


class Progress:
    """A progress bar with ETA (rich), or one line per submission without a terminal."""

    def __init__(self):
        self.bar = None

    def start(self, total: int, already: int) -> None:
        self.total, self.done, self.t0 = total, already, time.perf_counter()
        self.fresh = 0
        try:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as Bar

            self.bar = Bar(
                TextColumn("grading"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                TextColumn("{task.description}"),
            )
            self.bar.start()
            self.task = self.bar.add_task("", total=total, completed=already)
        except ImportError:
            self.bar = None
        if already:
            print(f"{already} of {total} already graded (use --force to regrade)")

    def skip(self, entry: str, why: str) -> None:
        print(f"skipped: {entry} ({why})", flush=True)

    def advance(self, name: str, status: dict) -> None:
        self.done += 1
        self.fresh += 1
        note = name if status["status"] == "graded" else f"{name}: {status.get('reason', '')[:60]}"
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=note)
        else:
            elapsed = time.perf_counter() - self.t0
            eta = elapsed / self.fresh * (self.total - self.done)
            print(f"[{self.done}/{self.total}] {note} (ETA {eta:.0f} s)", flush=True)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("grade-all", help="grade every submission in a folder (folders or zips)")
    p.add_argument("submissions", type=Path)
    p.add_argument("--out", type=Path, required=True)
    add_jobs_option(p)
    p.add_argument("--force", action="store_true", help="regrade submissions that already have results")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--device", default="cpu")
    p.add_argument(
        "--timeout",
        type=float,
        default=float(SUBMISSION_TIMEOUT_S),
        help="seconds per submission before it is given up",
    )
    p.add_argument(
        "--only",
        default=None,
        metavar="PATTERN",
        help="grade only these functions, as seqlab grade --only (a quick look at one exercise)",
    )
    p.add_argument("--in-process", action="store_true", help="(trusted code only) grade without isolation")
    add_config_option(p)
    p.add_argument(
        "--similarity",
        action="store_true",
        help="list the most similar pairs of submissions per function in the class report "
        "(a lead for a human to check, never a penalty)",
    )
    add_sandbox_option(p)
    add_labs_option(p)
    from ..lms import add_options

    add_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..batch import ClassRun, grade_all

    # once, before any worker starts: --sandbox bwrap fails here, and every worker grades in this
    # one, its reason kept
    settings = grading_settings_of(args)
    run = ClassRun(jobs=args.jobs, force=args.force, timeout=args.timeout, similarity=args.similarity)
    rows = grade_all(args.submissions, args.out, settings, run, progress=Progress())
    print_class_summary(
        rows, f"gradebook: {args.out / 'gradebook.csv'}; class report: {args.out / 'class_report.html'}"
    )
    from ..lms import report, write_lms

    results = [row["result"] for row in rows if row["result"] is not None]
    grades = {row["submission"]: row["result"].score if row["result"] else None for row in rows}
    max_score = max((r.max_score for r in results), default=0.0)
    print(report(*write_lms(args.out, grades, max_score, assignment=args.lms_assignment, roster_path=args.lms_roster)))
    return 0 if all(row["status"] == "graded" for row in rows) else 1
