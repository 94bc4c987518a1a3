"""solutions/<topic>.py cut into the pieces a notebook is made of.

A topic module is read once, as text, and split at its top-level statements:

* the **header**: the module docstring and everything before the first function (imports);
* **chunks**, one per top-level function, with the comment lines just above it. A chunk holding
  a ``### BEGIN SOLUTION`` region is an *answer* (a contract function, or a helper the student
  writes); a chunk without one is *provided* code students get as it is. Statements between
  functions become provided chunks too.

The notebook shows the chunks in order; the export puts the same header and chunks back together
with the student's answer cells in place of the answers, so a notebook and a module agree line
for line outside the answers.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from .. import contract
from ..errors import SeqlabError
from ..regions import BEGIN, SOLUTION_REGIONS, clear_solutions

# The module a notebook's setup cell imports the stand-ins from: seqlab/nbgrader/provided.py,
# shipped beside the notebook under this name (seqlab.nbgrader.course.SHIPPED).
PROVIDED_MODULE = "seqlab_provided"


class SourceError(SeqlabError, ValueError):
    """A solution module the notebook builder cannot cut into cells."""


@dataclass(frozen=True)
class Chunk:
    name: str  # the function's name (or the first name a provided block binds)
    source: str  # exactly as in solutions/, regions included
    answer: bool  # holds a solution region: students write it
    qualname: str | None  # "topic.function" when it is a contract function

    @property
    def stub(self) -> str:
        return clear_solutions(self.source)


@dataclass(frozen=True)
class TopicSource:
    topic: str
    path: Path
    text: str  # the whole module
    docstring: str
    header: str  # everything before the first chunk, verbatim (docstring included)
    chunks: tuple[Chunk, ...] = field(default_factory=tuple)

    @property
    def answers(self) -> list[Chunk]:
        return [c for c in self.chunks if c.answer]

    @property
    def functions(self) -> list[Chunk]:
        """The contract functions, in the order of the module."""
        return [c for c in self.chunks if c.qualname]

    def header_imports(self) -> list[ast.stmt]:
        return [s for s in ast.parse(self.header).body if isinstance(s, (ast.Import, ast.ImportFrom))]

    def cross_topic_imports(self) -> dict[str, list[str]]:
        """``{"attention": ["causal_mask", "multi_head_attention"]}`` for ``from .attention import ...``."""
        found: dict[str, list[str]] = {}
        for stmt in self.header_imports():
            if (
                isinstance(stmt, ast.ImportFrom)
                and stmt.level == 1
                and stmt.module is not None
                and stmt.module in contract.MODULES
            ):
                found.setdefault(stmt.module, []).extend(a.name for a in stmt.names)
        return found

    def function_imports(self) -> dict[str, list[str]]:
        """``{"optimizers": ["adam"]}`` for ``from .optimizers import adam`` inside a function: a
        lab imports what it needs of other topics there, so that a topic that fails to load costs
        the lab alone, not every function of the module importing it."""
        found: dict[str, list[str]] = {}
        for chunk in self.chunks:
            for node in ast.walk(ast.parse(chunk.source)):
                if (
                    isinstance(node, ast.ImportFrom)
                    and node.level == 1
                    and node.module
                    and node.module in contract.MODULES
                ):
                    names = found.setdefault(node.module, [])
                    names.extend(a.name for a in node.names if a.name not in names)
        return found

    def notebook_setup(self) -> str:
        """The header's code as a notebook cell: the same imports, except that ``from __future__``
        goes and a relative import of another topic's functions comes from ``seqlab_provided``
        (a kernel has no package to be relative to), the copy of ``seqlab.nbgrader.provided`` that
        the course ships beside the notebook (the student's kernel has no seqlab)."""
        lines = self.header.splitlines()
        out: list[str] = []
        tree = ast.parse(self.header)
        for stmt in tree.body:
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
                and stmt is tree.body[0]
            ):
                continue  # the module docstring becomes the notebook's prose
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                continue
            if isinstance(stmt, ast.ImportFrom) and stmt.level:
                if stmt.level != 1 or stmt.module not in contract.MODULES:
                    raise SourceError(
                        f"{self.path}: line {stmt.lineno}: a relative import the notebook cannot "
                        f"reproduce (only `from .<topic> import <contract functions>` is supported)"
                    )
                names = ", ".join(a.name if not a.asname else f"{a.name} as {a.asname}" for a in stmt.names)
                out.append(
                    f"# {', '.join(a.name for a in stmt.names)}: from the {stmt.module} assignment; here a "
                    f"correct version built on PyTorch's\n# own operations (the grader uses a correct one "
                    f"too, so your marks never depend on your {stmt.module} answers)."
                )
                out.append(f"from {PROVIDED_MODULE} import {names}")
                continue
            out.append("\n".join(lines[stmt.lineno - 1 : stmt.end_lineno]))
        inside = self.function_imports()
        if inside:
            listed = "; ".join(f"{', '.join(names)} ({topic})" for topic, names in inside.items())
            out.append(
                f"# The functions below import {listed} inside themselves, as the graded module does;\n"
                "# in this notebook `from .<topic> import ...` finds correct stand-ins (the grader runs your own).\n"
                f"from {PROVIDED_MODULE} import stand_in_package\n\n"
                f"__package__ = stand_in_package({inside!r})"
            )
        return "\n".join(out).strip() + "\n"


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


def _bound_name(node: ast.stmt) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    for target in getattr(node, "targets", []) or [getattr(node, "target", None)]:
        if isinstance(target, ast.Name):
            return target.id
    return f"line_{node.lineno}"


def parse_topic(path: Path, topic: str | None = None) -> TopicSource:
    path = Path(path)
    topic = topic or path.stem
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise SourceError(f"{path}: line {exc.lineno}: {exc.msg}") from None
    lines = text.splitlines(keepends=True)
    docstring = ast.get_docstring(tree) or ""
    body = tree.body
    first_def = next(
        (i for i, s in enumerate(body) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))),
        len(body),
    )
    if first_def == len(body):
        raise SourceError(f"{path}: no function in it")

    # Where each chunk starts: its first statement's first line, pulled up over the comment lines
    # directly above it (blank lines stay with the chunk before).
    def start_of(stmt: ast.stmt, floor: int) -> int:
        start = _first_line(stmt)
        while start - 1 > floor and lines[start - 2].lstrip().startswith("#"):
            start -= 1
        return start

    groups: list[list[ast.stmt]] = []
    for stmt in body[first_def:]:
        is_def = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        if is_def or not groups or isinstance(groups[-1][-1], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            groups.append([stmt])
        else:
            groups[-1].append(stmt)
    # end_lineno is None only on nodes built by hand; these come from ast.parse
    header_end = (body[first_def - 1].end_lineno or 0) if first_def else 0
    starts = []
    floor = header_end
    for group in groups:
        starts.append(start_of(group[0], floor))
        floor = group[-1].end_lineno or floor
    header = "".join(lines[: starts[0] - 1])
    chunks = []
    for i, group in enumerate(groups):
        end = starts[i + 1] - 1 if i + 1 < len(groups) else len(lines)
        chunk_text = "".join(lines[starts[i] - 1 : end]).strip("\n") + "\n"
        name = _bound_name(group[0])
        answer_regions = SOLUTION_REGIONS.regions(chunk_text, filename=f"{path}:{name}")
        qualname = f"{topic}.{name}" if f"{topic}.{name}" in contract.SIGNATURES and len(group) == 1 else None
        if qualname and not answer_regions:
            raise SourceError(f"{path}: {qualname} has no {BEGIN} region, so students would have nothing to write")
        chunks.append(Chunk(name=name, source=chunk_text, answer=bool(answer_regions), qualname=qualname))
    if any(SOLUTION_REGIONS.is_marker(line) for line in header.splitlines()):
        raise SourceError(f"{path}: a solution region before the first function (imports are given, not written)")
    missing = [q for q in contract.functions_of(topic) if q not in {c.qualname for c in chunks}]
    if missing:
        raise SourceError(f"{path}: contract function(s) {', '.join(missing)} not defined at top level")
    return TopicSource(topic=topic, path=path, text=text, docstring=docstring, header=header, chunks=tuple(chunks))


def load_topics(solutions_dir: Path, topics=contract.MODULES) -> list[TopicSource]:
    return [parse_topic(Path(solutions_dir) / f"{topic}.py", topic) for topic in topics]
