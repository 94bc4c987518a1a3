"""The numbers and tables of docs/ that the config and ``solutions/`` determine, written between
markers so that no doc holds a hand-written copy.

A generated part of a doc is ``<!-- generated: NAME [ARG] -->...<!-- /generated -->``: a block
(a table, its markers on lines of their own) or a figure inside a sentence. ``seqlab
regenerate`` rewrites what is between the markers; ``seqlab regenerate --check`` (and
tests/project/test_derived_figures.py) fails while a doc differs from what it would write.
Everything outside the markers is the doc's own text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from . import contract
from .config import Figures, course_figures
from .errors import SeqlabError

# The body never holds another opening marker: an opening without its close is left alone, never
# paired with the next part's close (which would swallow the text between them).
MARKED = re.compile(
    r"<!-- generated: (?P<name>[\w-]+)(?: (?P<arg>[\w.-]+))? -->(?P<body>(?:(?!<!-- generated: ).)*?)<!-- /generated -->",
    re.S,
)


class DocsFigureError(SeqlabError):
    """A doc names a generated part that does not exist, or one for a function or topic that
    is not in the contract."""


def _num(value: float) -> str:
    return f"{value:g}"


def _topics_table(f: Figures, _arg: str | None) -> str:
    rows = ["| topic | exercises | labs | points |", "|---|---|---|---|"]
    for topic in f.topics:
        names = [n.partition(".")[2] for n in f.points if n.partition(".")[0] == topic]
        exercises = ", ".join(f"`{n}`" for n in names if f"{topic}.{n}" not in f.labs) or "-"
        labs = ", ".join(f"`{n}`" for n in names if f"{topic}.{n}" in f.labs) or "-"
        rows.append(f"| `{topic}` | {exercises} | {labs} | {_num(f.topic_points(topic))} |")
    rows.append(f"| **total** | {len(f.exercises)} | {len(f.labs)} | {_num(f.total_points)} |")
    return "\n" + "\n".join(rows) + "\n"


def _classroom_table(f: Figures, _arg: str | None) -> str:
    """GitHub Classroom's autograding tests, one per topic (docs/github.md)."""
    rows = ["| test name | run command | points |", "|---|---|---:|"]
    rows += [f"| {t} | `pytest tests/test_{t}.py` | {_num(f.topic_points(t))} |" for t in f.topics]
    return "\n" + "\n".join(rows) + "\n"


def _points_of(f: Figures, arg: str | None) -> str:
    if arg not in f.points:
        raise DocsFigureError(f"`points {arg}`: {arg!r} is not a contract function with points")
    return _num(f.points[arg])


def _topic_points(f: Figures, arg: str | None) -> str:
    if arg not in f.topics:
        raise DocsFigureError(f"`topic-points {arg}`: {arg!r} is not a topic")
    return _num(f.topic_points(arg))


FIGURES: dict[str, Callable[[Figures, str | None], str]] = {
    "topics-table": _topics_table,
    "classroom-table": _classroom_table,
    "total-points": lambda f, _a: _num(f.total_points),
    "exercise-points": lambda f, _a: _num(f.exercise_points),
    "lab-points": lambda f, _a: _num(f.lab_points),
    "functions": lambda f, _a: str(f.functions),
    "exercises": lambda f, _a: str(len(f.exercises)),
    "labs": lambda f, _a: str(len(f.labs)),
    "topics": lambda f, _a: str(len(f.topics)),
    "points": _points_of,
    "topic-points": _topic_points,
}


def render(text: str, figures: Figures, source: str = "<doc>") -> str:
    """``text`` with every generated part rewritten from ``figures``."""

    def one(match: re.Match[str]) -> str:
        name, arg = match["name"], match["arg"]
        if name not in FIGURES:
            raise DocsFigureError(
                f"{source}: `<!-- generated: {name} -->` names no figure (one of: {', '.join(FIGURES)})"
            )
        return f"<!-- generated: {name}{' ' + arg if arg else ''} -->{FIGURES[name](figures, arg)}<!-- /generated -->"

    return MARKED.sub(one, text)


def strip_generated(text: str) -> str:
    """``text`` without its generated parts (what is left is written by hand)."""
    return MARKED.sub("", text)


def docs_with_figures(docs_dir: Path) -> list[Path]:
    return sorted(p for p in docs_dir.rglob("*.md") if "<!-- generated: " in p.read_text(encoding="utf-8"))


def regenerate(docs_dir: Path, *, check: bool = False) -> list[str]:
    """Rewrite the generated parts of every doc under ``docs_dir``; the names of the docs that
    changed (with ``check``: that would change, nothing written)."""
    figures = course_figures()
    contract.table()  # a broken solutions/ fails here, before any doc is rewritten
    changed = []
    for path in docs_with_figures(docs_dir):
        text = path.read_text(encoding="utf-8")
        new = render(text, figures, str(path))
        if new != text:
            changed.append(path.name)
            if not check:
                path.write_text(new, encoding="utf-8")
    return changed
