"""`seqlab config [--check] [--graders DIR] [PATH]`: validate grading_config.yaml, list its points.

Validation covers the file itself (every key, every value, a reason for every tolerance) and
its agreement with the graders: a ``test_weights`` or ``test_visibility`` pattern must match a
grader test of its function (the graders are collected, never run). ``--check`` validates without the listing,
for CI; either way a problem exits 2 with ``file: key.path: what is wrong``.
"""

from __future__ import annotations

from pathlib import Path

from ..config import check_test_patterns, load_config
from ..grader_index import titles_by_function
from ..paths import GRADERS_DIR


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("config", help="validate grading_config.yaml and list points per function")
    p.add_argument("path", nargs="?", default=None, help="the grading config (default: grading_config.yaml)")
    p.add_argument("--check", action="store_true", help="only validate (no listing); exit 2 on a problem")
    p.add_argument("--graders", type=Path, default=GRADERS_DIR, help="the graders the config must agree with")
    p.set_defaults(func=run)


def run(args) -> int:
    config = load_config(args.path)
    check_test_patterns(config, titles_by_function(args.graders))
    if args.check:
        print(f"{config.source}: valid ({len(config.functions)} functions, {config.max_score:g} points)")
        return 0
    for name, rules in config.functions.items():
        extra = f" (+ complexity {rules.complexity_points:g} of it)" if rules.complexity_points else ""
        print(f"{name:42s} {rules.points:5g}{extra}")
    print(f"{'total':42s} {config.max_score:5g}")
    for dtype, tol in config.tolerances.items():
        print(f"{dtype}: rtol={tol.rtol:g} atol={tol.atol:g}")
    return 0
