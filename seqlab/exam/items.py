"""Item analysis of a graded exam: how each question behaved across the class.

Per question (over the students whose paper had it: pools leave some out):

- ``mean``       mean score as a fraction of the question's points;
- ``full``       share of students with full marks;
- ``r_rest``     discrimination as the corrected item-total correlation: Pearson's r between the
                 question's score and the student's score on the *rest* of the exam (the
                 question itself is left out, or it would correlate with itself);
- ``d27``        the upper-minus-lower index: mean fraction in the top 27% of the class (by the
                 rest score) minus the bottom 27% (Kelley's 27%, which maximises the difference
                 between the groups while keeping them large enough to compare);
- the most common named mistakes (``details["mistake"]`` of each graded answer).

A question is flagged when it does not separate strong from weak students: everyone scores the
same (no spread: r is undefined), or ``r_rest`` < ``FLAG_BELOW``. Written to ``item_analysis.csv``
beside the gradebook and as a table with small inline-SVG plots in ``class_report.html``
(self-contained: no scripts, no network).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..gradebook import csv_text, write_text_atomic
from .examfile import Exam

# Flag threshold for r_rest. Ebel's classic scale calls items below 0.20 "poor"; we flag below
# 0.10 ("near zero") and every negative value, because with a class of about 30 the standard
# error of a correlation near 0 is about 1/sqrt(n - 1) ~ 0.19: a stricter threshold would flag
# sound questions by chance, and the instructor should read the flag as "review this question".
FLAG_BELOW = 0.10
# Kelley's upper/lower group share.
GROUP_SHARE = 0.27
# Fewer students than this and r or D say nothing (a group of 27% would hold a single student).
MIN_STUDENTS = 8
TOP_MISTAKES = 3


@dataclass
class ItemStats:
    id: str
    title: str
    points: float
    n: int
    mean: float | None = None  # fraction of the points
    full: float | None = None  # share with full marks
    r_rest: float | None = None
    d27: float | None = None
    groups: tuple[float, float, float] | None = None  # mean fraction: lower 27%, middle, upper 27%
    mistakes: list[tuple[str, int]] = field(default_factory=list)
    flag: str = ""


def _pearson(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 2:
        return None
    sx, sy = statistics.pstdev(xs), statistics.pstdev(ys)
    if sx == 0 or sy == 0:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (len(xs) * sx * sy)


def _question_key(test_name: str) -> str:
    return test_name.split(":", 1)[0][len("exam.") :]


def analyse(exam: Exam, rows: list) -> list[ItemStats]:
    """One ``ItemStats`` per question of the exam file, in file order, from graded batch rows."""
    graded = [r.result for r in rows if r.result is not None]
    per_student = []
    for result in graded:
        per_student.append(({_question_key(t.name): t for t in result.tests}, result.score))
    stats = []
    for eq in exam.questions:
        qid, points = eq.id, eq.points
        had = [(tests[qid], total) for tests, total in per_student if qid in tests]
        item = ItemStats(id=qid, title=eq.question.title, points=points, n=len(had))
        stats.append(item)
        if not had:
            item.flag = "not on any graded paper"
            continue
        fractions = [t.score / points for t, _ in had]
        rest = [total - t.score for t, total in had]
        item.mean = statistics.fmean(fractions)
        item.full = sum(t.score >= points - 1e-9 for t, _ in had) / len(had)
        counts = Counter(t.details.get("mistake") for t, _ in had if t.details.get("mistake"))
        item.mistakes = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_MISTAKES]
        if len(had) < MIN_STUDENTS:
            # a small class gets one notice (class_notice), not the same flag on every question;
            # a pool's question few students drew, in a class large enough, is flagged
            if len(graded) >= MIN_STUDENTS:
                item.flag = f"too few students ({len(had)} < {MIN_STUDENTS}) to judge discrimination"
            continue
        item.r_rest = _pearson(fractions, rest)
        order = sorted(range(len(had)), key=lambda i: rest[i])
        size = max(1, math.ceil(GROUP_SHARE * len(had)))
        lower = [fractions[i] for i in order[:size]]
        upper = [fractions[i] for i in order[-size:]]
        middle = [fractions[i] for i in order[size:-size]] or [statistics.fmean(fractions)]
        item.groups = (statistics.fmean(lower), statistics.fmean(middle), statistics.fmean(upper))
        item.d27 = item.groups[2] - item.groups[0]
        if statistics.pstdev(fractions) == 0:
            item.flag = (
                "no spread: everyone got full marks" if item.full == 1 else "no spread: everyone scored the same"
            ) + " (it cannot separate students)"
        elif item.r_rest is None:
            item.flag = "the rest of the exam has no spread"
        elif item.r_rest < 0:
            item.flag = f"negative discrimination (r = {item.r_rest:.2f}): stronger students do worse on it"
        elif item.r_rest < FLAG_BELOW:
            item.flag = f"near-zero discrimination (r = {item.r_rest:.2f} < {FLAG_BELOW})"
    return stats


def class_notice(rows: list) -> str:
    """One line for a class too small to judge any question's discrimination ("" otherwise)."""
    graded = sum(1 for r in rows if r.result is not None)
    if graded >= MIN_STUDENTS:
        return ""
    return (
        f"item analysis: {graded} graded paper(s), fewer than {MIN_STUDENTS}: no question's "
        "discrimination is judged (means and mistakes are still listed)"
    )


def _fmt(x: float | None, digits: int = 3) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def item_analysis_csv(stats: list[ItemStats]) -> str:
    header = [
        "question",
        "title",
        "points",
        "students",
        "mean_fraction",
        "full_marks_share",
        "discrimination_r_rest",
        "discrimination_d27",
        "flag",
        "common_mistakes",
    ]
    return csv_text(
        header,
        (
            [
                s.id,
                s.title,
                f"{s.points:g}",
                s.n,
                _fmt(s.mean),
                _fmt(s.full),
                _fmt(s.r_rest),
                _fmt(s.d27),
                s.flag,
                "; ".join(f"{name} ({count})" for name, count in s.mistakes),
            ]
            for s in stats
        ),
    )


def groups_svg(groups: tuple[float, float, float] | None) -> str:
    """Three bars (lower 27%, middle, upper 27%): a rising staircase is a discriminating question."""
    if groups is None:
        return ""
    width, height, bar = 66, 28, 18
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="mean score lower {groups[0]:.2f}, middle {groups[1]:.2f}, upper {groups[2]:.2f}">',
        f'<line x1="0" y1="{height - 0.5}" x2="{width}" y2="{height - 0.5}" stroke="#999"/>',
    ]
    for i, (value, colour) in enumerate(zip(groups, ("#c0504d", "#999999", "#4f81bd"))):
        h = max(1.0, round(value * (height - 2), 1))
        parts.append(f'<rect x="{2 + i * (bar + 4)}" y="{height - 1 - h}" width="{bar}" height="{h}" fill="{colour}"/>')
    parts.append("</svg>")
    return "".join(parts)


def histogram_svg(percents: list[float], bins: int = 10) -> str:
    """Distribution of the class's total scores (percent), bins of 10 points."""
    counts = [0] * bins
    for p in percents:
        counts[min(bins - 1, int(p / (100 / bins)))] += 1
    width, height, bar = 24 * bins, 80, 20
    top = max(counts) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 14}" role="img" '
        'aria-label="distribution of total scores">'
    ]
    for i, c in enumerate(counts):
        h = round(c / top * height, 1)
        parts.append(
            f'<rect x="{i * 24 + 2}" y="{height - h}" width="{bar}" height="{h}" fill="#4f81bd">'
            f"<title>{i * 10}-{i * 10 + 10}%: {c}</title></rect>"
        )
        parts.append(f'<text x="{i * 24 + 2}" y="{height + 12}" font-size="9">{i * 10}</text>')
    parts.append("</svg>")
    return "".join(parts)


def class_report_html(exam: Exam, rows: list, stats: list[ItemStats]) -> str:
    from markupsafe import Markup

    from .markdown import environment

    graded = [r.result for r in rows if r.result is not None]
    percents = [r.percent for r in graded]
    context = {
        "exam": exam,
        "stats": stats,
        "graded": len(graded),
        "files": len(rows),
        "mean": statistics.fmean(percents) if percents else None,
        "median": statistics.median(percents) if percents else None,
        "histogram": Markup(histogram_svg(percents)),
        "plots": {s.id: Markup(groups_svg(s.groups)) for s in stats},
        "flag_below": FLAG_BELOW,
        "group_share": GROUP_SHARE,
        "min_students": MIN_STUDENTS,
        "flagged": [s for s in stats if s.flag],
        "notice": class_notice(rows),
    }
    return environment().get_template("class_report.html.j2").render(context).rstrip() + "\n"


def write_item_analysis(exam: Exam, rows: list, out: Path) -> list[Path]:
    stats = analyse(exam, rows)
    csv_path, html_path = Path(out) / "item_analysis.csv", Path(out) / "class_report.html"
    write_text_atomic(csv_path, item_analysis_csv(stats))
    write_text_atomic(html_path, class_report_html(exam, rows, stats))
    return [csv_path, html_path]
