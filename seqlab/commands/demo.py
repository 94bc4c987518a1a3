"""`seqlab demo`: grade the bundled example submission (a few realistic bugs) and show the report."""

from __future__ import annotations

from pathlib import Path

from .options import add_sandbox_option


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("demo", help="grade the bundled example submission and show the report")
    p.add_argument("--out", type=Path, default=Path("seqlab-out/demo"))
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--device", default="auto")
    p.add_argument("--in-process", action="store_true")
    add_sandbox_option(p)  # demo runs grade.run with these arguments
    p.set_defaults(func=run)


def run(args) -> int:
    from ..demo import assemble, load_bugs
    from . import grade

    submission = assemble(args.out / "submission")
    print(
        f"Grading the example submission {submission} (the references with {len(load_bugs())} realistic "
        f"bugs from examples/demo_bugs.py)..."
    )
    args.submission, args.only, args.fail_under, args.config, args.quiet = submission, None, None, None, False
    args.out = args.out / "report"
    return grade.run(args)
