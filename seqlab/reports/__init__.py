"""Result model -> the formats graders use. Each writer reads a GradingResult only."""

from __future__ import annotations

from pathlib import Path

from ..results import GradingResult


def write_all(result: GradingResult, out_dir: Path, *, html: bool = True) -> dict[str, Path]:
    """Write results.json, junit.xml, summary.md (and report.html); returns the paths."""
    from . import gradescope, junit, markdown

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    result.save(out_dir / "seqlab_result.json")  # the full model: batch gradebooks read it back
    paths = {
        "results.json": gradescope.write(result, out_dir / "results.json"),
        "junit.xml": junit.write(result, out_dir / "junit.xml"),
        "summary.md": markdown.write(result, out_dir / "summary.md"),
    }
    if html:
        from . import html as html_report

        paths["report.html"] = html_report.write(result, out_dir / "report.html")
        if result.review_flags:  # the instructor's copy, with the review flags
            paths[html_report.INSTRUCTOR_REPORT] = out_dir / html_report.INSTRUCTOR_REPORT
    return paths
