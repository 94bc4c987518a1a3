"""The `seqlab` command: parses arguments and hands over to the modules that do the work.

Each command lives with its module; a module registers itself with ``add_parser(subparsers)``
and sets ``func`` to a callable taking the parsed arguments and returning an exit code. A
problem the user can fix is a :class:`seqlab.errors.SeqlabError`, caught here and only here.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
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
    "seqlab.commands.regenerate",
    "seqlab.commands.check_exercise",
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


def run() -> None:
    """The console command (`seqlab`, `python -m seqlab`): :func:`main`, then out of the process
    without the interpreter's teardown.

    That teardown frees every module and object one by one. After a grading (torch, pytest,
    thousands of tensors) it takes about a second on these machines and serves nothing: the
    reports are written and closed. Every exit handler still runs first (the fork server's
    shutdown, temporary folders), because this one is registered before any of them and atexit
    runs its handlers last-registered first; then the standard streams are flushed and the
    process ends with the command's exit code. In-process callers of ``main`` (the tests) keep
    the normal exit.
    """
    code = [1]  # an uncaught exception leaves it at 1, as Python's own exit would
    atexit.register(_leave, code)
    try:
        code[0] = main()
    except SystemExit as exc:  # argparse's --help and usage errors
        code[0] = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        raise
    sys.exit(code[0])


def _leave(code: list[int]) -> None:
    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or its reader left
            pass
    os._exit(code[0])


if __name__ == "__main__":
    run()
