"""A self-contained HTML report (no external assets), from templates/report.html.j2."""

from __future__ import annotations

from pathlib import Path

from ..results import GradingResult
from .render import render


def write(result: GradingResult, path: Path) -> Path:
    Path(path).write_text(render("report.html.j2", result), encoding="utf-8", errors="replace")
    return Path(path)
