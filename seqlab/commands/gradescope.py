"""`seqlab gradescope OUT_DIR`: write autograder.zip for a Gradescope programming assignment."""

from __future__ import annotations

import zipfile
from pathlib import Path

from .options import add_config_option


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("gradescope", help="write autograder.zip for a Gradescope programming assignment")
    p.add_argument("out_dir", type=Path, help="folder to write autograder.zip into")
    add_config_option(p, what="grading config baked into the bundle")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..config import load_config
    from ..gradescope import build_bundle

    path = build_bundle(args.out_dir, config_path=args.config)
    config = load_config(args.config)
    with zipfile.ZipFile(path) as zf:
        count, size = len(zf.infolist()), path.stat().st_size
    print(f"wrote {path} ({count} files, {size / 1024:.0f} KiB; {config.max_score:g} points)")
    print(
        "next: on Gradescope, create a Programming Assignment with an autograder, upload this zip, "
        "and set the assignment's total to the same points (docs/gradescope.md)"
    )
    return 0
