"""Known-wrong and alternative-correct implementations, to test the graders themselves.

Each topic file (``tests/mutants/<module>.py``) lists ``MUTANTS`` (one wrong function each:
the grader must take points from that function and only from it) and ``ALTERNATIVES``
(a different but valid way to write a function: the grader must give full marks).
A variant is the whole replacement ``def`` of one contract function; ``make_submission``
copies the reference solutions and swaps that one function in.
"""
from __future__ import annotations

import ast
import importlib
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

from seqlab.contract import MODULES

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Variant:
    function: str        # "module.function"
    description: str     # what is wrong (or different) about it
    source: str          # the replacement `def ...` (may be preceded by helper defs/imports)
    hint: str = ""       # for mutants: a word the feedback's "looks like" hint must contain

    @property
    def module(self) -> str:
        return self.function.split(".")[0]

    @property
    def id(self) -> str:
        return f"{self.function}:{self.description}"


Mutant = Variant
Alternative = Variant


def replace_function(module_source: str, name: str, new_source: str) -> str:
    tree = ast.parse(module_source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
            lines = module_source.splitlines(keepends=True)
            return "".join(lines[:start]) + textwrap.dedent(new_source).strip("\n") + "\n" + "".join(lines[node.end_lineno:])
    raise KeyError(f"{name} not found")


def make_submission(target: Path, variant: Variant | None = None, solutions: Path = ROOT / "solutions") -> Path:
    """A submission folder at ``target``: the reference solutions, with one function swapped."""
    exercises = target / "exercises"
    exercises.mkdir(parents=True, exist_ok=True)
    for path in solutions.glob("*.py"):
        shutil.copy(path, exercises / path.name)
    if variant is not None:
        path = exercises / f"{variant.module}.py"
        fn = variant.function.split(".", 1)[1]
        path.write_text(replace_function(path.read_text(), fn, variant.source))
    return target


def all_variants(kind: str) -> list[Variant]:
    found = []
    for module in MODULES:
        try:
            topic = importlib.import_module(f"tests.mutants.{module}")
        except ModuleNotFoundError:
            continue
        found += list(getattr(topic, kind, []))
    return found
