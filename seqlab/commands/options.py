"""What several commands take or print alike, written once so that it cannot drift apart.

A command module declares its own arguments; an option two commands share (``--sandbox``,
``--jobs``, ``--config``), the spelling of an optional file argument, and the closing lines of a
class run (how many were graded, which were not and why) live here. ``--sandbox``'s choices and
help are seqlab.student.sandbox's, which the nbgrader grading server reads too.
Nothing heavy is imported at module level: every ``seqlab`` command and the server import this.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_sandbox_option(parser: argparse.ArgumentParser, *, note: str = "") -> None:
    """``--sandbox auto|bwrap|none``; ``note`` says what is particular to this command."""
    from ..student.sandbox import MODES, MODES_HELP

    parser.add_argument("--sandbox", choices=MODES, default="auto", help=MODES_HELP + (f"; {note}" if note else ""))


def resolve_sandbox(args):
    """The sandbox the student's process will run in (None with ``--in-process``); says loudly on
    stderr when there is none. A missing bubblewrap under ``--sandbox bwrap`` fails here, once,
    before any grading starts."""
    from ..student.sandbox import resolve

    if args.in_process:
        return None
    box = resolve(args.sandbox)  # SandboxUnavailable: a SeqlabError naming --sandbox's mode
    if box.notice:
        print(f"WARNING: {box.notice}", file=sys.stderr, flush=True)
    return box


def grading_settings_of(args, *, protected_dirs=()):
    """The one GradingSettings of a grading command's options (``--config``, ``--in-process``,
    ``--sandbox``, ``--device``, ``--seed``, ``--only``, ``--no-labs``), each checked now, before any grading
    starts: a bad device or a missing bubblewrap fails here, once, naming the option."""
    from ..grading import grading_settings
    from ..grading.settings import choose_device

    box = resolve_sandbox(args)
    # auto never takes a GPU the student's child cannot reach; where it takes the CPU on a
    # machine with a GPU driver, one line says why
    device, why = choose_device(args.device, box)
    if why:
        print(why, file=sys.stderr, flush=True)
    return grading_settings(
        config=args.config,
        isolated=not args.in_process,
        sandbox=box,
        device=device,
        seed=args.seed,
        only=args.only,
        protected_dirs=protected_dirs,
        labs=getattr(args, "labs", None),
    )


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def add_jobs_option(parser: argparse.ArgumentParser, *, note: str = "") -> None:
    """``--jobs N``: submissions graded at once, at least one."""
    parser.add_argument(
        "--jobs",
        type=_at_least_one,
        default=1,
        help="submissions graded at once (default 1" + (f"; {note})" if note else ")"),
    )


def add_config_option(parser: argparse.ArgumentParser, *, what: str = "grading config") -> None:
    """``--config FILE``: the grading config (None: the course's grading_config.yaml)."""
    path_option(parser, "--config", f"{what} (default: grading_config.yaml)")


def path_option(parser: argparse.ArgumentParser, flag: str, help: str, *, metavar: str | None = None) -> None:
    """An optional file or folder argument: a Path when given, None when not (the command decides
    what None means and says it in ``help``)."""
    parser.add_argument(flag, type=Path, default=None, metavar=metavar, help=help)


def print_class_summary(rows: list[dict], wrote: str) -> None:
    """The end of a class run: how many of the rows were graded, what was written, and every
    submission that was not graded with its reason (never silently dropped)."""
    from ..escape import one_line

    graded = sum(r["status"] == "graded" for r in rows)
    print(f"{graded} of {len(rows)} graded; {wrote}")
    for row in rows:
        if row["status"] != "graded":  # one line each, no escape sequence: a reason can quote a student
            print(f"  not graded: {one_line(row['submission'])}: {one_line(row['reason'])}")


def add_labs_option(parser: argparse.ArgumentParser) -> None:
    """``--no-labs``: leave the labs out (their training costs seconds of CPU per submission)."""
    parser.add_argument(
        "--no-labs",
        dest="labs",
        action="store_false",
        default=None,
        help="leave the labs out of the grading and its points (default: graded; SEQLAB_LABS=0 too)",
    )


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """``--shard i/N``, ``--engine local|dask``, ``--scheduler ADDRESS``: a class beyond one
    process pool (seqlab.engines; docs/cluster.md)."""
    from ..engines.shards import parse_shard

    parser.add_argument(
        "--shard",
        type=parse_shard,
        default=None,
        metavar="I/N",
        help="grade only shard I of N (1 <= I <= N; by each hand-in's name, the same on every machine); "
        "merge the shards with `seqlab gradebook OUT --submissions SUBS`",
    )
    parser.add_argument(
        "--engine",
        choices=("local", "dask"),
        default="local",
        help="who runs the tasks: local (--jobs grading processes) or dask (Dask distributed: a "
        "LocalCluster of --jobs workers, or the cluster of --scheduler)",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="with --engine dask: an existing Dask scheduler (tcp://host:8786) instead of a LocalCluster",
    )
