"""Student repository and GitHub autograding commands.

seqlab release OUT_DIR            write the student repository (stubs, public tests, README,
                                  pyproject.toml, .github/workflows/check.yml), leak-checked
seqlab release --scan DIR         only run the leak check on an existing folder
seqlab ci-workflow [OUT]          write the instructor's grading workflow (a GitHub Actions matrix)
seqlab ci-matrix --roster CSV --uploads DIR
                                  the matrix of submissions, as one line of JSON (the workflow's first job)
seqlab gradebook RESULTS_DIR      gradebook.csv, class report and summary.md from per-submission results
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..classroom import DEFAULT_MAX_PARALLEL, DEFAULT_ROSTER, DEFAULT_UPLOADS
from ..defaults import SUBMISSION_TIMEOUT_S
from ..errors import UserError


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("release", help="write the student repository (leak-checked; identical bytes each time)")
    p.add_argument("out_dir", type=Path, nargs="?", help="the folder to write (an empty one, or an earlier release)")
    p.add_argument(
        "--scan",
        type=Path,
        default=None,
        metavar="DIR",
        help="only check DIR for leaks (solution text, graders, seqlab, secrets); exit 1 if any",
    )
    p.add_argument("--force", action="store_true", help="write into a folder that holds other files")
    p.add_argument("--torch", default=None, help="torch version the student workflow installs (CPU build)")
    p.add_argument("--python", default=None, help="Python version of the student workflow")
    p.add_argument(
        "--public-tests", type=Path, default=None, help="folder of the public tests (default: public_tests/)"
    )
    p.set_defaults(func=run_release)

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
    p.add_argument("--torch", default=None)
    p.add_argument("--python", default=None)
    p.set_defaults(func=run_ci_workflow)

    p = subparsers.add_parser("ci-matrix", help="list submissions as the grading workflow's matrix (JSON)")
    p.add_argument("--roster", type=Path, default=None)
    p.add_argument("--uploads", type=Path, default=None)
    p.add_argument("--ref", default="", help="branch, tag or commit for roster entries without their own")
    p.set_defaults(func=run_ci_matrix)

    p = subparsers.add_parser("gradebook", help="assemble gradebook.csv and summary.md from per-submission results")
    p.add_argument("results", type=Path, help="folder with one results folder per submission")
    p.add_argument("--out", type=Path, default=None, help="where to write (default: RESULTS)")
    p.add_argument(
        "--expect",
        type=Path,
        default=None,
        metavar="MATRIX_JSON",
        help="the grading matrix: submissions without results still get a row",
    )
    p.set_defaults(func=run_gradebook)


def run_release(args) -> int:
    from .. import release as rel

    if args.scan is not None:
        if not args.scan.is_dir():
            raise UserError(f"{args.scan}: not a folder")
        leaks = rel.scan(rel.read_tree(args.scan), rel.collect_secrets())
        for leak in leaks:
            print(leak)
        print(f"{len(leaks)} leak(s) in {args.scan}", file=sys.stderr if leaks else sys.stdout)
        return 1 if leaks else 0
    if args.out_dir is None:
        raise UserError("give OUT_DIR (or --scan DIR)")
    render = {}
    if args.torch:
        render["torch_version"] = args.torch
    if args.python:
        render["python_version"] = args.python
    if args.public_tests:
        render["public_tests_dir"] = args.public_tests
    try:
        report = rel.release(args.out_dir, force=args.force, **render)
    except rel.LeakError as exc:
        print(f"seqlab release: {exc}", file=sys.stderr)
        return 1
    print(
        f"{args.out_dir}: {len(report.files)} files, {len(report.written)} written, "
        f"{len(report.files) - len(report.written)} unchanged"
        + (f", {len(report.removed)} removed ({', '.join(report.removed)})" if report.removed else "")
        + "; leak check passed"
    )
    return 0


def run_ci_workflow(args) -> int:
    from .. import classroom

    kwargs = {
        "roster": args.roster,
        "uploads": args.uploads,
        "timeout_s": args.timeout,
        "max_parallel": args.max_parallel,
    }
    if args.torch:
        kwargs["torch_version"] = args.torch
    if args.python:
        kwargs["python_version"] = args.python
    text = classroom.render_grade_workflow(**kwargs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(
        f"wrote {args.out}; next: add the roster ({args.roster}) and the STUDENT_REPOS_TOKEN secret, "
        f"see the README's 'For instructors: autograding on GitHub'"
    )
    return 0


def run_ci_matrix(args) -> int:
    from .. import classroom

    try:
        entries = classroom.build_matrix(roster=args.roster, uploads=args.uploads, ref=args.ref)
    except (OSError, ValueError) as exc:
        raise UserError(str(exc)) from None
    print(json.dumps(entries, separators=(",", ":")))
    return 0


def run_gradebook(args) -> int:
    from .. import classroom

    if not args.results.is_dir():
        raise UserError(f"{args.results}: not a folder")
    expect = None
    if args.expect is not None:
        try:
            expect = json.loads(args.expect.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"{args.expect}: not a readable matrix ({exc})") from None
    rows = classroom.assemble_gradebook(args.results, args.out, expect=expect)
    out = args.out or args.results
    graded = sum(r["status"] == "graded" for r in rows)
    print(
        f"{graded} of {len(rows)} graded; wrote {out / 'gradebook.csv'}, {out / 'summary.md'}, "
        f"{out / 'class_report.html'}"
    )
    for row in rows:
        if row["status"] != "graded":
            print(f"  not graded: {row['submission']}: {row['reason']}")
    return 0
