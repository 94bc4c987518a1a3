"""One exam per student: parameters drawn from (exam seed, student id, question id).

Everything here is a pure function of its inputs, so rendering the same exam for the same
student gives the same bytes on any machine: the generator is seeded by SHA-256 (never Python's
salted ``hash``), parameters are plain decimals, and answers come from float64 reference code.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

import sympy

from .examfile import Exam, ExamQuestion
from .model import CHOICE, NUMERIC, SYMBOLIC, TRUEFALSE, Question, Variant, rng_for

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


class StudentIdError(ValueError):
    pass


def check_student_id(student: object) -> str:
    if isinstance(student, int) and not isinstance(student, bool):
        student = str(student)
    if not isinstance(student, str) or not STUDENT_ID.match(student):
        raise StudentIdError(f"bad student id {str(student)[:80]!r}: use 1-64 letters, digits, '_', '.', '@', '-'")
    return student


def sample_params(q: Question, exam_seed, student: str) -> dict:
    return q.sample(rng_for(exam_seed, student, q.id))


def format_number(x: float) -> str:
    """How a key writes a number: integers as integers, others with 10 significant digits."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return format(x, ".10g")


def format_answer(kind: str, answer) -> str:
    if kind == NUMERIC:
        return ", ".join(format_number(v) for v in answer) if isinstance(answer, (list, tuple)) else format_number(answer)
    if kind == SYMBOLIC:
        return sympy.sstr(answer)
    return str(answer)


def make_variant(exam: Exam, eq: ExamQuestion, student: str, number: int, *, render: bool = True) -> Variant:
    q = eq.question
    params = sample_params(q, exam.seed, student)
    answer = q.answer(params)
    if q.kind == NUMERIC and isinstance(answer, tuple):
        answer = list(answer)
    if q.kind in (CHOICE, TRUEFALSE):
        answer = str(answer)
    variant = Variant(question=q, number=number, points=eq.points, params=params, answer=answer,
                      key=format_answer(q.kind, answer),
                      partial={"per_element": eq.per_element, "mistakes": dict(eq.mistakes)},
                      tolerance=eq.tolerance or q.tolerance)
    if render:
        from .render import render_question

        variant.text, variant.solution = render_question(variant)
    return variant


@dataclass
class ExamInstance:
    exam: Exam
    student: str
    variants: list[Variant]
    questions: list[ExamQuestion] = field(default_factory=list)   # this paper's, after pools

    def by_id(self) -> dict[str, Variant]:
        return {v.id: v for v in self.variants}


@contextmanager
def one_thread() -> Iterator[None]:
    """The reference calls work on tensors of a few numbers: thread pools only add overhead
    (tens of milliseconds per call on a loaded 2-core machine), so use one thread meanwhile."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def make_instance(exam: Exam, student: str, *, render: bool = True) -> ExamInstance:
    from .pools import questions_for

    student = check_student_id(student)
    questions = questions_for(exam, student)
    with one_thread():
        variants = [make_variant(exam, eq, student, i + 1, render=render) for i, eq in enumerate(questions)]
    return ExamInstance(exam=exam, student=student, variants=variants, questions=questions)
