"""Known-wrong and alternative-correct implementations, to test the graders themselves.

Each topic file (``tests/mutants/<module>.py``) lists ``MUTANTS`` (one wrong function each:
the grader must take points from that function and only from it) and ``ALTERNATIVES``
(a different but valid way to write a function: the grader must give full marks).
A variant is the whole replacement ``def`` of one contract function; ``make_submission``
copies the reference solutions and swaps that one function in.

A mistake a grader's table already declares is not written here again: ``FromTable`` names the
row, and the mutant is the one tests/mutants/derived.py writes from it, kept under the
description its recorded grade (tests/recorded/mutants.json) is filed by.
"""

from __future__ import annotations

import importlib
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from seqlab.build import replace_function
from seqlab.contract import MODULES

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Variant:
    function: str  # "module.function"
    description: str  # what is wrong (or different) about it
    source: str  # the replacement `def ...` (may be preceded by helper defs/imports)
    # for mutants: what the feedback's "looks like" hint must contain (for one taken from a table,
    # or a lab's wrong loop: the row's or the slip's name, the mistake as the grader declares it)
    hint: str = ""
    # for a mutant derived from a grader's table: the row's function, or its switches as written
    # (what tells apart rows that share a name)
    form: str = ""
    # for mutants: a name no hint may contain (a table row this mistake coincides with in one
    # case only: saying it would name a mistake the student did not make)
    wrong: str = ""

    @property
    def module(self) -> str:
        return self.function.split(".")[0]

    @property
    def id(self) -> str:
        return f"{self.function}:{self.description}"


Mutant = Variant
Alternative = Variant


@dataclass(frozen=True)
class FromTable:
    """The mutant that the row named ``row`` of ``function``'s mistake table gives, filed as
    ``function:description``; ``form`` picks one of the rows that share a name (slips the grader
    cannot tell apart by their outputs, and so names alike), by the row's function."""

    function: str
    description: str
    row: str
    form: str = ""

    def derived(self) -> Variant:
        from tests.mutants.derived import derived_mutants

        found = [
            m
            for m in derived_mutants()
            if m.function == self.function and m.hint == self.row and self.form in ("", m.form)
        ]
        assert found, f"{self.function}: no mistake table gives a mutant for the row {self.row!r}"
        assert len(found) == 1, f"{self.function}: rows named {self.row!r} are {[m.form for m in found]}: say which"
        return found[0]

    def resolve(self) -> Variant:
        return replace(self.derived(), description=self.description)


def table_rows() -> set[str]:
    """The ids of the derived mutants the topic files take from a grader's table."""
    return {v.derived().id for module in _topics() for v in getattr(module, "MUTANTS", []) if isinstance(v, FromTable)}


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
    for topic in _topics():
        found += [v.resolve() if isinstance(v, FromTable) else v for v in getattr(topic, kind, [])]
    return found


def _topics() -> list:
    found = []
    for module in MODULES:
        try:
            found.append(importlib.import_module(f"tests.mutants.{module}"))
        except ModuleNotFoundError:
            continue
    return found
