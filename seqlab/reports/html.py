"""A self-contained HTML report (no external assets), from templates/report.html.j2."""

from __future__ import annotations

from pathlib import Path

from ..results import GradingResult
from .fixfirst import fix_first
from .render import render


def write(result: GradingResult, path: Path) -> Path:
    figures = {}
    if result.meta.get("lab_runs"):  # matplotlib only when a lab ran
        from ..labs.figures import report_figures

        figures = report_figures(result.meta["lab_runs"])
    text = render("report.html.j2", result, figures=figures, fix_first=fix_first(result))
    Path(path).write_text(text, encoding="utf-8", errors="replace")
    return Path(path)
