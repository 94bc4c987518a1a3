"""Solution regions: the one place that knows the ``### BEGIN/END SOLUTION`` markers.

A reference module marks the lines students must write::

    def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
        \"\"\"docstring, kept\"\"\"
        ### BEGIN SOLUTION
        return torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h)
        ### END SOLUTION

Everything that reads those markers goes through :class:`SolutionRegions`: the stub builder
(``seqlab build``), the student release and its leak check, the nbgrader notebooks and the
demo submission. The transformation follows nbgrader's ``ClearSolutions`` preprocessor: the
delimiters are configured once, a region is replaced by ``# YOUR CODE HERE`` and
``raise NotImplementedError()`` at the BEGIN marker's indentation, and everything outside the
regions is copied verbatim. Markers that do not pair up are an error naming the line, never a
silently half-cleared file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import SeqlabError

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
STUB_LINES = ("# YOUR CODE HERE", "raise NotImplementedError()")

# The one header of every stub, in exercises/ and in the student release alike, so the release
# ships exercises/ byte for byte. It names neither the instructor package nor the references:
# the release's leak check would (rightly) stop a file that does.
STUB_HEADER = (
    "# Exercises: {module}. Fill in every `raise NotImplementedError()` below; keep the signatures.\n"
    "# Public tests: test_{module}.py (run `pytest -k {module}`).\n"
)


class SolutionRegionError(SeqlabError, ValueError):
    """A solution file whose BEGIN/END markers do not pair up."""


@dataclass(frozen=True)
class Region:
    """One solution region: the marker lines (1-based) and the lines between them."""

    begin_line: int
    end_line: int
    indent: str
    body: tuple[str, ...]


class SolutionRegions:
    """Parse and transform the solution regions of a source text, with delimiters set once."""

    def __init__(self, begin: str = BEGIN, end: str = END, stub_lines: tuple[str, ...] = STUB_LINES):
        self.begin, self.end, self.stub_lines = begin, end, stub_lines
        # A marker is alone on its line (any indentation, trailing blanks): a marker inside a
        # string or after code is not one, so a docstring may talk about the markers.
        self._marker = re.compile(rf"^(?P<indent>[ \t]*)(?P<what>{re.escape(begin)}|{re.escape(end)})[ \t]*$")

    def is_marker(self, line: str) -> bool:
        """Whether ``line`` is a BEGIN or END marker line."""
        return bool(self._marker.match(line.rstrip("\r\n")))

    def _walk(self, source: str, filename: str):
        """Yield ``(lineno, line, kind, indent)`` for every line, kind being "begin", "end",
        "inside" or "outside"; raise SolutionRegionError on a marker out of place."""
        open_at: int | None = None
        for lineno, line in enumerate(source.splitlines(keepends=True), start=1):
            marker = self._marker.match(line.rstrip("\r\n"))
            if marker and marker["what"] == self.begin:
                if open_at is not None:
                    raise SolutionRegionError(
                        f"{filename}:{lineno}: {self.begin} inside the region opened at line {open_at}"
                    )
                open_at = lineno
                yield lineno, line, "begin", marker["indent"]
            elif marker:
                if open_at is None:
                    raise SolutionRegionError(f"{filename}:{lineno}: {self.end} without a matching {self.begin}")
                open_at = None
                yield lineno, line, "end", marker["indent"]
            else:
                yield lineno, line, ("outside" if open_at is None else "inside"), ""
        if open_at is not None:
            raise SolutionRegionError(f"{filename}:{open_at}: {self.begin} is never closed")

    def regions(self, source: str, filename: str = "<source>") -> list[Region]:
        """Every region of ``source``, in order (validates that the markers pair up)."""
        found: list[Region] = []
        body: list[str] = []
        begin_line, indent = 0, ""
        for lineno, line, kind, marker_indent in self._walk(source, filename):
            if kind == "begin":
                begin_line, indent, body = lineno, marker_indent, []
            elif kind == "inside":
                body.append(line.rstrip("\r\n"))
            elif kind == "end":
                found.append(Region(begin_line, lineno, indent, tuple(body)))
        return found

    def has_regions(self, source: str, filename: str = "<source>") -> bool:
        return bool(self.regions(source, filename))

    def clear(self, source: str, filename: str = "<source>") -> str:
        """``source`` with every region replaced by the stub lines (what students get)."""
        out: list[str] = []
        for _, line, kind, indent in self._walk(source, filename):
            if kind == "begin":
                out.extend(f"{indent}{stub}\n" for stub in self.stub_lines)
            elif kind == "outside":
                out.append(line)
        return "".join(out)

    def strip(self, source: str, filename: str = "<source>") -> str:
        """``source`` with the marker lines removed (the reference as a reader sees it)."""
        return "".join(line for _, line, kind, _ in self._walk(source, filename) if kind not in ("begin", "end"))

    def split(self, source: str, filename: str = "<source>") -> tuple[list[tuple[int, str]], list[str]]:
        """``(inside, outside)``: (line number, text) of every line inside a region, and the text
        of every line outside one (markers in neither), for the release's leak check."""
        inside, outside = [], []
        for lineno, line, kind, _ in self._walk(source, filename):
            if kind == "inside":
                inside.append((lineno, line.rstrip("\r\n")))
            elif kind == "outside":
                outside.append(line.rstrip("\r\n"))
        return inside, outside


SOLUTION_REGIONS = SolutionRegions()
clear_solutions = SOLUTION_REGIONS.clear
strip_markers = SOLUTION_REGIONS.strip


# A module with nothing to write (the package's __init__) says so instead.
PROVIDED_HEADER = "# Exercises: given as it is, nothing to fill in here.\n"


def stub_module(source: str, module: str, filename: str = "<source>") -> str:
    """The student stub of a whole reference module: the one header, then the cleared source."""
    header = STUB_HEADER if SOLUTION_REGIONS.has_regions(source, filename) else PROVIDED_HEADER
    return header.format(module=module) + clear_solutions(source, filename=filename)
