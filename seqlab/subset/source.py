"""A module's bytes as the text Python would compile, and the shape of a problem report."""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass

from . import rules


@dataclass(frozen=True)
class Problem:
    """One break of the subset: where, which rule, and what to write instead."""

    line: int
    rule: str
    instead: str = ""

    def render(self, filename: str) -> str:
        text = f"{filename}, line {self.line}: {self.rule}"
        return f"{text} ({self.instead})" if self.instead else text


class SourceRefused(ValueError):
    """The bytes of a module cannot be read as the UTF-8 Python source they must be."""

    def __init__(self, problem: Problem):
        super().__init__(problem.rule)
        self.problem = problem


def decode_source(data: bytes) -> str:
    """The text Python would compile from ``data``, or ``SourceRefused``.

    The encoding is decided as Python decides it (a BOM, else a coding cookie on line 1 or 2,
    else UTF-8), and anything but UTF-8 is refused: a ``coding: utf-7`` cookie or a Latin-1 one
    makes the interpreter read other code than a UTF-8 reader (or a person) sees.
    """
    if len(data) > rules.MAX_SOURCE_BYTES:
        raise SourceRefused(
            Problem(1, f"{len(data)} bytes, more than {rules.MAX_SOURCE_BYTES}: not an exercise module")
        )
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceRefused(Problem(exc.lineno or 1, f"unreadable encoding declaration: {exc.msg}")) from None
    if codecs.lookup(encoding).name not in ("utf-8", "utf-8-sig"):
        raise SourceRefused(
            Problem(1, f"the file declares the encoding {encoding!r}", "save it as UTF-8 and remove the coding line")
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SourceRefused(Problem(line, "bytes that are not UTF-8", "save the file as UTF-8")) from None
    if "\x00" in text:
        raise SourceRefused(Problem(text[: text.index("\x00")].count("\n") + 1, "a NUL character in the source"))
    return text
