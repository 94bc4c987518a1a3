"""One exam per student: the paper's questions (after pools) drawn and, when asked, rendered.

Every draw is ``draws.draw``'s pure function of (exam seed, student id, question id), so the same
exam for the same student gives the same bytes on any machine. The per-question names
(``draw``, ``sample_params``, ``check_student_id``, ``format_answer``, ...) are re-exported here,
where callers have always found them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .draws import (
    FORM_KEY,
    MAX_DRAWS,
    STUDENT_ID,
    DrawError,
    StudentIdError,
    check_student_id,
    draw,
    exam_form,
    format_answer,
    format_number,
    one_thread,
    sample_params,
)
from .examfile import Exam, ExamQuestion
from .markdown import render_question
from .model import CHOICE, NUMERIC, TRUEFALSE, Variant
from .pools import questions_for

# the names callers import from here: this module's own, and the per-question draws' it re-exports
__all__ = [
    "FORM_KEY",
    "MAX_DRAWS",
    "STUDENT_ID",
    "DrawError",
    "ExamInstance",
    "StudentIdError",
    "check_student_id",
    "draw",
    "exam_form",
    "format_answer",
    "format_number",
    "make_instance",
    "make_variant",
    "one_thread",
    "sample_params",
]


def make_variant(exam: Exam, eq: ExamQuestion, student: str, number: int, *, render: bool = True) -> Variant:
    q = eq.question
    params, answer, mistakes = draw(q, exam.seed, student, form=eq.form, tolerance=eq.tolerance)
    if q.kind == NUMERIC and isinstance(answer, tuple):
        answer = list(answer)
    if q.kind in (CHOICE, TRUEFALSE):
        answer = str(answer)
    variant = Variant(
        question=q,
        number=number,
        points=eq.points,
        params=params,
        answer=answer,
        key=format_answer(q.kind, answer),
        partial={"per_element": eq.per_element, "mistakes": dict(eq.mistakes)},
        tolerance=eq.tolerance or q.tolerance,
        form=exam_form(q, exam.seed, eq.form),
        mistakes=dict(mistakes),
    )
    if render:
        variant.text, variant.solution = render_question(variant)
    return variant


@dataclass
class ExamInstance:
    exam: Exam
    student: str
    variants: list[Variant]
    questions: list[ExamQuestion] = field(default_factory=list)  # this paper's, after pools

    def by_id(self) -> dict[str, Variant]:
        return {v.id: v for v in self.variants}


def make_instance(exam: Exam, student: str, *, render: bool = True) -> ExamInstance:
    student = check_student_id(student)
    questions = questions_for(exam, student)
    with one_thread():
        variants = [make_variant(exam, eq, student, i + 1, render=render) for i, eq in enumerate(questions)]
    return ExamInstance(exam=exam, student=student, variants=variants, questions=questions)
