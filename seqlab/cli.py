"""The `seqlab` command: parses arguments and hands over to the modules that do the work.

Each command lives with its module; a module registers itself with ``add_parser(subparsers)``
and sets ``func`` to a callable taking the parsed arguments and returning an exit code. A
problem the user can fix is a :class:`seqlab.errors.SeqlabError`, caught here and only here.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from .errors import SeqlabError

# Modules that contribute commands, in the order `seqlab --help` lists them.
COMMAND_MODULES = (
    "seqlab.commands.build",
    "seqlab.commands.config",
    "seqlab.commands.grade",
    "seqlab.commands.demo",
    "seqlab.commands.grade_all",
    "seqlab.commands.exam",
    "seqlab.commands.nbgrader",
    "seqlab.commands.release",
    "seqlab.commands.gradescope",
    "seqlab.commands.classroom",
)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seqlab", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except SeqlabError as exc:
        print(f"seqlab {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `seqlab config | head`: the reader left, nothing to report
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"seqlab {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
