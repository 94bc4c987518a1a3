"""Unseen-mistake banks: mistakes written from the student release alone, by someone who has not
read the graders or this folder, one file each (the format: tests/heldout/README.md).

A bank file is a header of comment lines (``# function:``, ``# mistake:``, ``# class:``,
``# confirmed:``; a line indented after ``#`` continues the key above it), then the whole
replacement of one contract function, helpers first if it has any. ``load_bank`` reads a folder
of them into ``Variant`` s that ``make_submission`` swaps into the reference solutions, and says
what is wrong with a file rather than skipping it: a bank that loads short measures the wrong
thing. benchmarks/bench_unseen.py grades them.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from seqlab import contract
from tests.mutants import Variant

KEYS = ("function", "mistake", "class", "confirmed")
# "# key: text" opens a key; "#   more text" (two spaces or more after the #) continues the last.
_KEY = re.compile(r"#\s?(\w+):\s*(.*)$")
_MORE = re.compile(r"#\s{2,}(\S.*)$")


class BankError(ValueError):
    """A bank file that does not follow the format (the message names the file and the rule)."""


@dataclass(frozen=True)
class BankMistake:
    file: str  # the file's name in the bank, e.g. "03_rnn_rnn_cell_no_bias.py"
    function: str  # "module.function"
    mistake: str  # the bank's own sentence: what is wrong, as a teacher would say it
    klass: str  # the bank's family name ("missing term", "wrong axis", ...)
    confirmed: str  # how its writer showed it is wrong
    source: str  # everything after the header: helpers and imports, then the def

    @property
    def variant(self) -> Variant:
        return Variant(self.function, f"unseen {self.file}: {self.mistake}", self.source)


def parse(text: str, name: str = "<bank file>") -> BankMistake:
    """One bank file's text, checked: the header's keys, a contract function, and exactly one
    top-level def of it in a source that parses."""
    lines = text.splitlines()
    header: dict[str, str] = {}
    last = ""
    body_at = len(lines)
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            body_at = i
            break
        more, key = _MORE.match(stripped), _KEY.match(stripped)
        if more and last:  # a continuation is tried first: "#   see: x" continues, it opens nothing
            header[last] += " " + more.group(1).strip()
        elif key and key.group(1).lower() in KEYS:
            last = key.group(1).lower()
            header[last] = key.group(2).strip()
    missing = [k for k in ("function", "mistake") if not header.get(k)]
    if missing:
        raise BankError(f"{name}: the header has no {' or '.join(missing)}")
    function = header["function"].split()[0]
    if function not in contract.table()["signatures"]:
        raise BankError(f"{name}: {function!r} is not a contract function")
    source = "\n".join(lines[body_at:]).strip("\n") + "\n"
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise BankError(f"{name}: the source does not parse ({exc.msg}, line {exc.lineno})") from exc
    fn = function.split(".", 1)[1]
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fn]
    if len(defs) != 1:
        raise BankError(f"{name}: {len(defs)} top-level defs of {fn}(), not one")
    return BankMistake(
        file=name,
        function=function,
        mistake=header["mistake"],
        klass=header.get("class", ""),
        confirmed=header.get("confirmed", ""),
        source=source,
    )


def load_bank(folder: Path) -> list[BankMistake]:
    """Every ``NN_*.py`` of ``folder``, in name order (a README or a DONE file is not a mistake)."""
    files = sorted(p for p in Path(folder).glob("*.py") if re.match(r"\d+_", p.name))
    if not files:
        raise BankError(f"{folder}: no NN_<module>_<function>_<slug>.py files")
    return [parse(p.read_text(encoding="utf-8"), p.name) for p in files]
