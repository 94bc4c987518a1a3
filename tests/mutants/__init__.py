"""Known-wrong and alternative-correct implementations, to test the graders themselves.

Each topic file (``tests/mutants/<module>.py``) lists ``MUTANTS`` (one wrong function each:
the grader must take points from that function and only from it) and ``ALTERNATIVES``
(a different but valid way to write a function: the grader must give full marks).
A variant is the whole replacement ``def`` of one contract function; ``make_submission``
copies the reference solutions and swaps that one function in.
"""

from __future__ import annotations

import importlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from seqlab.build import replace_function
from seqlab.contract import MODULES

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Variant:
    function: str  # "module.function"
    description: str  # what is wrong (or different) about it
    source: str  # the replacement `def ...` (may be preceded by helper defs/imports)
    hint: str = ""  # for mutants: a word the feedback's "looks like" hint must contain

    @property
    def module(self) -> str:
        return self.function.split(".")[0]

    @property
    def id(self) -> str:
        return f"{self.function}:{self.description}"


Mutant = Variant
Alternative = Variant


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
    if kind == "MUTANTS":  # the example student's bugs are known-wrong variants too (held once)
        from seqlab.demo import load_bugs

        found += [Variant(fn, description, source, hint) for fn, description, hint, source in load_bugs()]
    for module in MODULES:
        try:
            topic = importlib.import_module(f"tests.mutants.{module}")
        except ModuleNotFoundError:
            continue
        found += list(getattr(topic, kind, []))
    return found
