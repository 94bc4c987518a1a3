"""The student repository.

seqlab release OUT_DIR            write the student repository (stubs, public tests, README,
                                  pyproject.toml, .github/workflows/check.yml), leak-checked
seqlab release --scan DIR         only run the leak check on an existing folder

The instructor's side of GitHub autograding is seqlab.commands.classroom.
"""

from __future__ import annotations

import sys
from pathlib import Path

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
