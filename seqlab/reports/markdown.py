"""A Markdown summary, ready for ``$GITHUB_STEP_SUMMARY`` or a PR comment."""

from __future__ import annotations

from pathlib import Path

from ..results import GradingResult
from .fixfirst import fix_first
from .render import render


def to_markdown(result: GradingResult) -> str:
    return render("summary.md.j2", result, fix_first=fix_first(result))


def write(result: GradingResult, path: Path) -> Path:
    Path(path).write_text(to_markdown(result), encoding="utf-8", errors="replace")
    return Path(path)
