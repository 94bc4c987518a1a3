"""`seqlab build [--check]`: regenerate exercises/ from solutions/."""

from __future__ import annotations

import sys
from pathlib import Path

from .. import build as builder
from ..paths import EXERCISES_DIR, SOLUTIONS_DIR


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("build", help="generate the student stubs in exercises/ from solutions/")
    p.add_argument("--check", action="store_true", help="only check; exit 1 when exercises/ is stale")
    p.add_argument("--solutions", type=Path, default=SOLUTIONS_DIR)
    p.add_argument("--exercises", type=Path, default=EXERCISES_DIR)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.check:
        stale = builder.stale_files(args.solutions, args.exercises)
        if stale:
            print(f"exercises/ is stale ({', '.join(stale)}): run `seqlab build`", file=sys.stderr)
            return 1
        print("exercises/ is up to date")
        return 0
    changed = builder.build(args.solutions, args.exercises)
    print(f"wrote {len(changed)} file(s): {', '.join(changed)}" if changed else "exercises/ already up to date")
    return 0
