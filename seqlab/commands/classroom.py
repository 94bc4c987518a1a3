"""GitHub autograding, the instructor's side (the private course repository).

seqlab ci-workflow [OUT]          write the instructor's grading workflow (a GitHub Actions matrix)
seqlab ci-matrix --roster CSV --uploads DIR
                                  the matrix of submissions, as one line of JSON (the workflow's first job)
seqlab gradebook RESULTS_DIR      gradebook.csv, class report and summary.md from per-submission results
"""

from __future__ import annotations

import json
from pathlib import Path

from ..classroom import DEFAULT_MAX_PARALLEL, DEFAULT_ROSTER, DEFAULT_UPLOADS
from ..defaults import SUBMISSION_TIMEOUT_S
from ..errors import UserError
from .options import path_option, print_class_summary


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("ci-workflow", help="write the instructor's GitHub Actions grading workflow")
    p.add_argument("out", type=Path, nargs="?", default=Path(".github/workflows/grade.yml"))
    p.add_argument("--roster", default=DEFAULT_ROSTER, help="CSV of student repositories (in the course repo)")
    p.add_argument("--uploads", default=DEFAULT_UPLOADS, help="folder of uploaded submissions (folders or zips)")
    p.add_argument(
        "--timeout",
        type=int,
        default=SUBMISSION_TIMEOUT_S,
        help=f"seconds one submission may take to grade (default {SUBMISSION_TIMEOUT_S})",
    )
    p.add_argument(
        "--max-parallel",
        type=int,
        default=DEFAULT_MAX_PARALLEL,
        help=f"grading jobs running at once (default {DEFAULT_MAX_PARALLEL})",
    )
    p.set_defaults(func=run_ci_workflow)

    p = subparsers.add_parser("ci-matrix", help="list submissions as the grading workflow's matrix (JSON)")
    path_option(p, "--roster", "CSV of student repositories to grade (default: none)")
    path_option(p, "--uploads", "folder of uploaded submissions, folders or zips (default: none)")
    p.add_argument("--ref", default="", help="branch, tag or commit for roster entries without their own")
    p.set_defaults(func=run_ci_matrix)

    p = subparsers.add_parser("gradebook", help="assemble gradebook.csv and summary.md from per-submission results")
    p.add_argument("results", type=Path, help="folder with one results folder per submission")
    path_option(p, "--out", "where to write (default: RESULTS)")
    path_option(p, "--expect", "the grading matrix: submissions without results still get a row", metavar="MATRIX_JSON")
    from .shard_merge import add_merge_options

    add_merge_options(p)
    p.set_defaults(func=run_gradebook)


def run_ci_workflow(args) -> int:
    from .. import classroom

    kwargs = {
        "roster": args.roster,
        "uploads": args.uploads,
        "timeout_s": args.timeout,
        "max_parallel": args.max_parallel,
    }
    text = classroom.render_grade_workflow(**kwargs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(
        f"wrote {args.out}; next: add the roster ({args.roster}) and the STUDENT_REPOS_TOKEN secret, see docs/github.md"
    )
    return 0


def run_ci_matrix(args) -> int:
    from .. import classroom

    entries = classroom.build_matrix(roster=args.roster, uploads=args.uploads, ref=args.ref)
    print(json.dumps(entries, separators=(",", ":")))
    return 0


def run_gradebook(args) -> int:
    from .. import classroom

    if not args.results.is_dir():
        raise UserError(f"{args.results}: not a folder")
    if args.submissions is not None:  # grade-all's shards: seqlab.engines.shards
        from .shard_merge import run_merge

        return run_merge(args)
    expect = None
    if args.expect is not None:
        try:
            expect = json.loads(args.expect.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"{args.expect}: not a readable matrix ({exc})") from None
    rows = classroom.assemble_gradebook(args.results, args.out, expect=expect)
    out = args.out or args.results
    print_class_summary(rows, f"wrote {out / 'gradebook.csv'}, {out / 'summary.md'}, {out / 'class_report.html'}")
    return 0
