"""`seqlab demo`: grade the bundled example submission (a few realistic bugs) and show the report."""
from __future__ import annotations

from pathlib import Path

from ..paths import EXAMPLES_DIR


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("demo", help="grade the bundled example submission and show the report")
    p.add_argument("--out", type=Path, default=Path("seqlab-out/demo"))
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--device", default="auto")
    p.add_argument("--in-process", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    from . import grade

    submission = EXAMPLES_DIR / "demo_submission"
    print(f"Grading the example submission {submission} (it has a few realistic bugs)...")
    args.submission, args.only, args.fail_under, args.config, args.quiet = submission, None, None, None, False
    return grade.run(args)
