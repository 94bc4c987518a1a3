"""`seqlab grade-all SUBMISSIONS_DIR --out DIR --jobs N`: grade a whole class."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..defaults import SUBMISSION_TIMEOUT_S
from .options import (
    add_config_option,
    add_engine_options,
    add_jobs_option,
    add_labs_option,
    add_sandbox_option,
    grading_settings_of,
    print_class_summary,
)


class Progress:
    """A progress bar with ETA (rich), or one line per submission without a terminal. Nothing a
    student named is read as rich markup (``[/]`` in a file name stopped the class with a
    MarkupError): the bar's text goes through :func:`seqlab.escape.terminal`, and its console
    reads no markup or emoji code in what is printed while it runs."""

    def __init__(self):
        self.bar = None
        self.renamed: list[str] = []  # said again at the end: their LMS rows need matching by hand

    def start(self, total: int, already: int) -> None:
        self.total, self.done, self.t0 = total, already, time.perf_counter()
        self.fresh = 0
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as Bar

            self.bar = Bar(
                TextColumn("grading"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                TextColumn("{task.description}"),  # escaped by seqlab.escape.terminal
                # markup off: what is printed while the bar runs goes through this console too
                console=Console(markup=False, emoji=False, highlight=False),
            )
            self.bar.start()
            self.task = self.bar.add_task("", total=total, completed=already)
        except ImportError:
            self.bar = None
        if already:
            print(f"{already} of {total} already graded (use --force to regrade)")

    def skip(self, entry: str, why: str) -> None:
        print(f"skipped: {entry} ({why})", flush=True)

    def rename(self, entry: str, name: str, why: str) -> None:
        if not _read_by_lms(entry):  # an LMS download's name binds by its LMS id, whatever its seqlab name
            self.renamed.append(f"{entry} as {name!r}")
        print(f"renamed: {entry} is graded as {name!r} ({why})", flush=True)

    def advance(self, name: str, status: dict) -> None:
        self.done += 1
        self.fresh += 1
        note = name if status["status"] == "graded" else f"{name}: {status.get('reason', '')[:60]}"
        if self.bar is not None:
            from ..escape import terminal

            self.bar.update(self.task, advance=1, description=terminal(note))
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
    add_engine_options(p)
    from ..lms import add_options

    add_options(p)
    p.set_defaults(func=run)


def _read_by_lms(entry: str) -> bool:
    """Whether a hand-in's name is an LMS bulk download's that names its student (lms_names)."""
    from ..submission.lms_names import LmsNameError, read_lms_name

    try:
        return read_lms_name(entry) is not None
    except LmsNameError:
        return False


def run(args) -> int:
    """Exit status: 0 when every hand-in was graded; 1 when at least one was not (the last line
    says how many, each is named above it and in its gradebook row); 2 when the run could not
    start (seqlab's usual ``error:``). Not the count itself: an exit status is one byte (256 not
    graded would read as 0) and 2 already means the grader could not run."""
    from ..batch import ClassRun, grade_all
    from ..engines.shards import write_class_lms
    from ..errors import UserError

    if args.scheduler is not None and args.engine != "dask":
        raise UserError("--scheduler is a Dask scheduler's address: it needs --engine dask")
    # once, before any worker starts: --sandbox bwrap fails here, and every worker grades in this
    # one, its reason kept
    settings = grading_settings_of(args)
    engine = None
    if args.engine == "dask":
        from ..engines.dask_engine import DaskEngine

        # a task under --device cuda goes only to a worker started with --resources GPU=1
        gpu = {"GPU": 1} if str(settings.device).startswith("cuda") else None
        engine = DaskEngine(workers=args.jobs, scheduler=args.scheduler, resources=gpu)
    run = ClassRun(
        jobs=args.jobs,
        force=args.force,
        timeout=args.timeout,
        similarity=args.similarity,
        shard=args.shard,
        engine=engine,
    )
    wrote: list[str] = []

    def record(rows: list[dict]) -> None:
        """The LMS files, written once every grade is in gradebook.csv, before the class report."""
        lms = write_class_lms(args.out, rows, args.submissions, assignment=args.lms_assignment, roster=args.lms_roster)
        wrote.append(lms)

    progress = Progress()
    # a shard writes no LMS file nor class report: `seqlab gradebook` writes them once for all
    rows = grade_all(
        args.submissions, args.out, settings, run, progress=progress, record=None if args.shard else record
    )
    if args.shard:
        wrote.append(f"once every shard is done: seqlab gradebook {args.out} --submissions {args.submissions}")
        summary = f"shard {args.shard.index} of {args.shard.count}: {args.out / args.shard.gradebook}"
    else:
        summary = f"gradebook: {args.out / 'gradebook.csv'}; class report: {args.out / 'class_report.html'}"
    print_class_summary(rows, summary)
    for line in wrote:
        print(line)
    if progress.renamed:
        print(
            f"note: {len(progress.renamed)} hand-in(s) graded under a name not their own, so an LMS roster "
            f"will not match them: {'; '.join(progress.renamed)}"
        )
    missed = [row["submission"] for row in rows if row["status"] != "graded"]
    if missed:
        print(f"grade-all: {len(missed)} of {len(rows)} hand-ins not graded: {', '.join(missed)}", file=sys.stderr)
    return 1 if missed else 0
