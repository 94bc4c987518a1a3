"""A self-contained HTML report (no external assets), from templates/report.html.j2.

``report.html`` is the student's. Where the grading raised review flags
(``GradingResult.review_flags``), ``report_instructor.html`` beside it is the instructor's copy:
the same report with a "For review" section first, the flags and their evidence. The student's
report never holds them.
"""

from __future__ import annotations

from pathlib import Path

from ..results import GradingResult
from .fixfirst import fix_first
from .render import render

INSTRUCTOR_REPORT = "report_instructor.html"


def write(result: GradingResult, path: Path) -> Path:
    figures = {}
    if result.meta.get("lab_runs"):  # matplotlib only when a lab ran
        from ..labs.figures import report_figures

        figures = report_figures(result.meta["lab_runs"])
    first = fix_first(result)
    text = render("report.html.j2", result, figures=figures, fix_first=first, instructor=False)
    Path(path).write_text(text, encoding="utf-8", errors="replace")
    copy = Path(path).with_name(INSTRUCTOR_REPORT)
    if result.review_flags:  # the figures drawn once for both copies
        text = render("report.html.j2", result, figures=figures, fix_first=first, instructor=True)
        copy.write_text(text, encoding="utf-8", errors="replace")
    else:
        copy.unlink(missing_ok=True)  # a regrade without flags leaves no stale copy behind
    return Path(path)
