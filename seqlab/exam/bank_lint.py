"""``seqlab exam lint``: every rule of the bank lint over an exam's papers, and the papers' spread.

The rules, each on the papers as rendered for many students (every pool member is drawn by some):

- ``lint.lint_paper``: a stem printing another question's numeric key or formula, a copyable
  answer, per-entry credit that cannot be earned, a title promising what the question drops;
- ``lint_text.lint_texts``: a stem or title carrying another question's key in words or its own
  statement's truth value, a key its explanation contradicts, a hedge of the notes lost;
- ``lint_draws``: a degenerate draw of any numeric question of the exam, every form, over
  ``draws`` students (more than the papers: a draw is cheap, a rendered paper is not);
- ``fairness.pool_findings``: a pool whose questions ask for different work.

``--bank`` lints the whole bank as one exam (``examfile.all_questions_exam``), the way
``tests/exam/test_lint_rules.py`` requires it clean.
"""

from __future__ import annotations

from collections.abc import Iterable

from .draws import draw
from .examfile import Exam
from .fairness import Spread, paper_spread, pool_findings
from .lint import lint_paper
from .lint_draws import degenerate
from .lint_text import lint_texts
from .markdown import render_texts
from .model import NUMERIC, Question
from .variants import make_instance


def students(n: int, prefix: str = "lint") -> list[str]:
    return [f"{prefix}{i:05d}" for i in range(n)]


def lint_bank_draws(questions: Iterable[Question], seed: int | str, students: list[str]) -> list[str]:
    """Every degenerate draw of ``questions`` (every form) for ``students``: "id (student): why"."""
    out = []
    for q in questions:
        if q.kind != NUMERIC:
            continue
        for form in q.forms or (None,):
            for student in students:
                params, answer, _ = draw(q, seed, student, form=form)
                why = degenerate(q, params, answer)
                if why:
                    out.append(f"{q.id} ({student}{', ' + form if form else ''}): {why}")
    return out


def lint_findings(exam: Exam, papers: int, draws: int, *, coincidences: bool = True) -> list[str]:
    """Every finding of every rule (module doc), one line each; [] for a clean exam.

    ``coincidences=False`` leaves out a number printed in one question that equals another's key
    (``lint``'s numeric leak): on the whole bank as one paper, a hundred questions' keys meet the
    printed numbers of a hundred others by chance (10 of 40 bank papers had one, between
    unrelated questions: an Adam step's 0.998 and an attention weight), which no exam's paper
    holds; an exam file is linted with them."""
    out: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for student in students(papers):
        inst = render_texts(make_instance(exam, student))
        found = [(f.id, f.rule, f.what, f"{student} question {f.number}") for f in lint_paper(inst)]
        found += [(f.id, f.rule, f.what, f"{student} question {f.number}") for f in lint_texts(inst.variants)]
        if not coincidences:
            found = [f for f in found if not (f[1] == "leak" and f[2].startswith("prints ") and "formula" not in f[2])]
            # and a stem stating a concept item's key (``stated_keys``): the bank as one paper
            # holds every calculation beside every concept item, as no exam does; an exam file
            # puts the pair on one paper only by choice, and is linted with them
            found = [f for f in found if not (f[1] == "giveaway" and f[2].startswith("states question"))]
        for qid, rule, what, where in found:
            # one line per (question, rule, finding): the same giveaway on 200 papers is one problem
            if (qid, rule, what) not in seen:
                seen.add((qid, rule, what))
                out.append(f"{where} ({qid}): {rule}: {what}")
    questions = {eq.id: eq.question for eq in exam.questions}
    out += [f"draw {line}" for line in lint_bank_draws(questions.values(), exam.seed, students(draws, "draw"))]
    out += pool_findings(exam, students(min(papers, 100), "pool"))
    return out


def spread(exam: Exam, papers: int) -> Spread:
    return paper_spread(exam, students(papers, "spread"))
