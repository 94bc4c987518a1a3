"""`seqlab config [--check] [PATH]`: validate and summarise grading_config.yaml."""
from __future__ import annotations

from ..config import load_config


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("config", help="validate grading_config.yaml and list points per function")
    p.add_argument("path", nargs="?", default=None)
    p.set_defaults(func=run)


def run(args) -> int:
    config = load_config(args.path)
    for name, rules in config.functions.items():
        extra = f" (+ complexity {rules.complexity_points:g} of it)" if rules.complexity_points else ""
        print(f"{name:42s} {rules.points:5g}{extra}")
    print(f"{'total':42s} {config.max_score:5g}")
    for dtype, tol in config.tolerances.items():
        print(f"{dtype}: rtol={tol.rtol:g} atol={tol.atol:g}")
    return 0
