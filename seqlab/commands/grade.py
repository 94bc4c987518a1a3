"""`seqlab grade SUBMISSION`: grade one submission and write every report."""

from __future__ import annotations

import sys
from pathlib import Path

from .options import add_config_option, add_labs_option, add_sandbox_option, grading_settings_of, path_option


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "grade", help="grade a submission: a folder holding exercises/ or the module files, or a .zip of one"
    )
    p.add_argument("submission", type=Path)
    path_option(p, "--out", "where to write the reports (default: SUBMISSION/seqlab-out)")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda (default: auto)")
    p.add_argument("--seed", type=int, default=None, help="input seed (default: fresh each run, printed in the report)")
    p.add_argument(
        "--only",
        default=None,
        metavar="PATTERN",
        help="grade only these functions: comma-separated module or module.function names (fnmatch)",
    )
    p.add_argument(
        "--fail-under", type=float, default=None, metavar="P", help="exit 1 when the score is under P percent"
    )
    p.add_argument(
        "--in-process",
        action="store_true",
        help="import the submission into the grader (fast; only for code you trust)",
    )
    add_sandbox_option(p)
    add_config_option(p)
    add_labs_option(p)
    p.add_argument("--quiet", action="store_true", help="no table, only the score line")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..submission import opened

    out = (args.out or args.submission / "seqlab-out").resolve()
    settings = grading_settings_of(args, protected_dirs=(out,))
    with opened(args.submission) as submission:
        if settings.sandbox is not None:
            from ..student.children import prespawn

            # The child (or the fork server) imports torch while this process does the same,
            # for the copy that is graded.
            prespawn(submission / "exercises", settings.sandbox)
        from ..grading import grade_submission  # imports torch: after the child's start, not before

        result = grade_submission(submission, settings)
    from ..reports import write_all
    from ..reports.table import print_table

    paths = write_all(result, out)
    if args.quiet:
        print(f"{result.score:.4g} / {result.max_score:.4g} ({result.percent:.1f}%)")
    else:
        print_table(result)
        print(f"reports: {out}/ (" + ", ".join(paths) + f")\nHTML report: {paths['report.html']}")
    if args.fail_under is not None and result.percent < args.fail_under:
        print(f"score {result.percent:.1f}% is under --fail-under {args.fail_under:g}%", file=sys.stderr)
        return 1
    return 0
