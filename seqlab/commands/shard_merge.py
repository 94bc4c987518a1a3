"""``seqlab gradebook OUT --submissions SUBS [--shard-out DIR ...]``: the shards of
``grade-all --shard i/N`` merged into one gradebook, with the LMS files and the class report
(and its similarity section) written once, as one grade-all run writes them."""

from __future__ import annotations

import argparse
from pathlib import Path

from .options import path_option, print_class_summary


def add_merge_options(parser: argparse.ArgumentParser) -> None:
    path_option(
        parser,
        "--submissions",
        "the class folder the shards graded (grade-all --shard): merge them into one gradebook, "
        "with the LMS files and the class report",
        metavar="SUBS",
    )
    parser.add_argument(
        "--shard-out",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="with --submissions: another shard's output folder (one per shard not written into RESULTS)",
    )
    parser.add_argument(
        "--similarity", action="store_true", help="with --submissions: the class report's similarity section"
    )
    from ..lms import add_options

    add_options(parser)


def run_merge(args) -> int:
    from ..engines.shards import merge_shards
    from ..errors import UserError

    for folder in (args.submissions, *args.shard_out):
        if not folder.is_dir():
            raise UserError(f"{folder}: not a folder")
    out = args.out or args.results
    rows, lms = merge_shards(
        [args.results, *args.shard_out],
        args.submissions,
        out,
        similarity=args.similarity,
        assignment=args.lms_assignment,
        roster=args.lms_roster,
    )
    print_class_summary(rows, f"gradebook: {out / 'gradebook.csv'}; class report: {out / 'class_report.html'}")
    print(lms)
    missed = [row["submission"] for row in rows if row["status"] != "graded"]
    return 1 if missed else 0
