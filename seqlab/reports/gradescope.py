"""Gradescope's autograder ``results.json``.

The fields Gradescope's autograder specification defines: top-level ``score``,
``execution_time``, ``output``, ``output_format``, ``test_output_format``, ``test_name_format``,
``visibility``, ``stdout_visibility``, ``extra_data`` and ``tests[]``, each test with ``name``,
``name_format``, ``number``, ``score``, ``max_score``, ``status``, ``output``, ``output_format``,
``tags``, ``visibility`` and ``extra_data``. seqlab's own: the top-level ``max_score`` and what
it keeps in ``extra_data``. ``schemas/gradescope_results.schema.json`` says which is whose and
validates the file.

On Gradescope the review flags (``GradingResult.review_flags``) are tests worth nothing with
``hidden`` visibility, listed last (``review_tests``, added by the autograder only): Gradescope
shows them to the course's staff, never to the student.

Students see the structure of ``report.html``: tests are numbered ``function.test`` in the
course's order (Gradescope sorts and groups by ``number``), tagged with their module and function,
and their output is Markdown: the message line by line as inert text, the hint in bold, each
hint once per function.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..escape import markdown_inline
from ..results import GradingResult
from .fixfirst import fix_first
from .render import public_text, rounded


def _round(x: float) -> float:
    return round(float(x), 4)


def markdown_lines(lines: list[str]) -> str:
    """Lines of text as inert Markdown, one per line (a hard line break between them)."""
    return "  \n".join(markdown_inline(line) for line in lines if line.strip())


def _test_output(t, result: GradingResult, hint_said: set[str]) -> str:
    lines = public_text(t.output, result).splitlines()
    if t.hint and t.hint not in hint_said:
        hint_said.add(t.hint)
        return "\n\n".join(
            filter(None, [markdown_lines(lines), f"**Looks like:** {markdown_inline(public_text(t.hint, result))}"])
        )
    return markdown_lines(lines)


def to_gradescope(result: GradingResult) -> dict[str, Any]:
    header = [f"seqlab: {_round(result.score):g} / {_round(result.max_score):g} points"]
    if result.seed is not None:
        header.append(f"seed {result.seed} (rerun with --seed {result.seed} to reproduce)")
    header.append(f"device {result.device}")
    header += [f"notice: {public_text(n, result)}" for n in result.notices]
    header += [f"error: {public_text(e, result)}" for e in result.errors]
    first = fix_first(result)
    if first:  # report.html's and summary.md's "Fix first", for students who see only Gradescope
        header.append("Fix first (they failed tests, and other functions of yours run them):")
        header += [
            f"{i}. {e.function} ({rounded(e.score)} / {rounded(e.max_score)}): {e.why}."
            for i, e in enumerate(first.entries, 1)
        ]
        if first.more:
            header.append(f"and {first.more} more failing functions that others run.")
    functions = {fn: i for i, fn in enumerate(result.by_function(), start=1)}
    counts: dict[str, int] = {}
    hints: dict[str, set[str]] = {}
    tests = []
    for t in result.tests:
        counts[t.function] = counts.get(t.function, 0) + 1
        tests.append(
            {
                "name": t.name,
                "name_format": "text",
                "number": f"{functions[t.function]}.{counts[t.function]}",
                "score": _round(t.score),
                "max_score": _round(t.max_score),
                "status": t.status,
                "output": _test_output(t, result, hints.setdefault(t.function, set())),
                "output_format": "md",
                "tags": [t.module, t.function],
                "visibility": t.visibility,
                "extra_data": {"function": t.function, "hint": t.hint},
            }
        )
    return {
        "score": _round(result.score),
        "max_score": _round(result.max_score),
        "execution_time": _round(result.execution_time),
        "output": markdown_lines(header),
        "output_format": "md",
        "test_output_format": "md",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {"seed": result.seed, "device": result.device},
        "tests": tests,
    }


def review_tests(result: GradingResult) -> list[dict[str, Any]]:
    """The review flags (seqlab/grading/flags.py) for the instructor's Gradescope view: one test
    each, worth nothing and ``hidden``, which Gradescope shows to the course's staff and never to
    the student (as report_instructor.html beside the student's report.html). Only the Gradescope
    autograder adds them: ``seqlab grade``'s own results.json may reach the student."""
    number, tests = len(result.by_function()) + 1, []
    for i, flag in enumerate(result.review_flags, start=1):
        rule, where, line = flag.get("rule", ""), flag.get("where", ""), flag.get("line", "")
        tests.append(
            {
                "name": f"review.{rule}: {where}, line {line} (for review, no points taken)",
                "name_format": "text",
                "number": f"{number}.{i}",
                "score": 0.0,
                "max_score": 0.0,
                "status": "failed",
                "output": markdown_lines(
                    [
                        f"{where}, line {line}: {flag.get('evidence', '')}",
                        "For the course's staff only: a construct the grading cannot hold soundly and no "
                        "honest hand-in of this course needs. No points were taken; read the code and decide.",
                    ]
                ),
                "output_format": "md",
                "tags": ["review", str(rule)],
                "visibility": "hidden",
                "extra_data": {"function": str(where), "hint": ""},
            }
        )
    return tests


def write(result: GradingResult, path: Path) -> Path:
    """Write atomically, so a reader never sees half a file (batch grading resumes on it)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(to_gradescope(result), indent=2, ensure_ascii=False), encoding="utf-8", errors="replace")
    os.replace(tmp, path)
    return path
