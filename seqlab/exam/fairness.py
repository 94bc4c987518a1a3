"""Fairness by construction, measured: equal pools, and the spread of papers over a class.

``pool_findings``: every question of a pool must ask for the same work, not only the same kind
and points (``pools.parse_pool`` refuses those): the same number of answer entries and of entries
the student computes (``work``) on every draw, and median-student minutes (``timing``, the time
model) within ``MINUTES_BAND`` of each other.
A pool that gives one student a computation and another a shape whose entries are printed in
the question (the audit's ``vision`` pool) fails here, with the counts.

``paper_spread``: over many students' papers of an exam, the median student's minutes
(``timing.estimate``), the points and the work of each paper; ``seqlab exam lint`` prints it, ``tests/exam/test_fairness_pools.py`` bounds it.

Work is counted in answer entries a student cannot copy: a numeric entry earns it unless 0 or a
number printed in the question would be accepted for it (``marking.earning_entries``, the rule
per-entry credit pays by); a formula, a choice or a true/false is one entry.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from . import timing
from .examfile import Exam
from .markdown import render_texts
from .marking import earning_entries, expected_entries
from .model import NUMERIC, Variant
from .variants import make_instance, make_variant

# Two questions of a pool may differ in time by this share of the longer one's median minutes:
# reading a few more words is not another kind of work, but a computation beside a read-off (the
# audit's pool: about 2 minutes against under 1) is refused.
MINUTES_BAND = 0.35


def work(v: Variant) -> int:
    """The entries of ``v``'s answer the student computes (module doc)."""
    if v.question.kind != NUMERIC:
        return 1
    return sum(earning_entries(v))


def _shape(v: Variant) -> tuple[int, int]:
    entries = len(expected_entries(v)) if v.question.kind == NUMERIC else 1
    return entries, work(v)


def pool_findings(exam: Exam, students: list[str]) -> list[str]:
    """Each pool whose questions differ in minutes, entries or work on some draw: one line each."""
    out = []
    for pool in exam.pools:
        members = [eq for eq in exam.questions if eq.pool == pool.name]
        seen: dict[str, set[tuple[int, int]]] = {}
        minutes: dict[str, float] = {}
        for eq in members:
            variants = [make_variant(exam, eq, s, 1) for s in students]
            seen[eq.id] = {_shape(v) for v in variants}
            minutes[eq.id] = statistics.median(timing.work(v, eq).minutes(timing.MEDIAN) for v in variants)
        shapes = {frozenset(s) for s in seen.values()}
        if max(minutes.values()) - min(minutes.values()) > MINUTES_BAND * max(minutes.values()):
            detail = ", ".join(f"{k}: {m:.1f}" for k, m in minutes.items())
            out.append(f"pool {pool.name!r}: its questions take a median student different minutes ({detail})")
        if len(shapes) > 1 or any(len(s) > 1 for s in seen.values()):
            detail = "; ".join(
                f"{k}: " + ", ".join(f"{e} entries, {w} computed" for e, w in sorted(s)) for k, s in seen.items()
            )
            out.append(f"pool {pool.name!r}: its questions ask for different work ({detail})")
    return out


@dataclass(frozen=True)
class Spread:
    papers: int
    minutes: tuple[float, float, float]  # min, median, max over the papers
    points: tuple[float, float, float]
    work: tuple[float, float, float]

    def lines(self) -> list[str]:
        def row(name: str, values: tuple[float, float, float]) -> str:
            lo, mid, hi = values
            return f"  {name:<8} min {lo:g}  median {mid:g}  max {hi:g}  (spread {hi - lo:g})"

        return [
            f"spread over {self.papers} papers:",
            row("minutes", self.minutes),
            row("points", self.points),
            row("work", self.work),
        ]


def _three(values: list[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


def paper_spread(exam: Exam, students: list[str]) -> Spread:
    minutes, points, works = [], [], []
    for s in students:
        inst = render_texts(make_instance(exam, s))
        minutes.append(round(timing.estimate(inst)["median"], 1))
        points.append(sum(v.points for v in inst.variants))
        works.append(float(sum(work(v) for v in inst.variants)))
    return Spread(len(students), _three(minutes), _three(points), _three(works))
