"""One exam per student: the paper's questions (after pools), each drawn for that student.

Every draw is ``draws.draw``'s pure function of (exam seed, student id, question id), so the same
exam for the same student gives the same parameters and keys on any machine. This is the paper's
data: nothing here renders. The texts are the renderers' (``markdown.render_texts`` fills them in,
and every output that shows a text calls it), so grading a class draws without templates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .draws import check_student_id, draw, exam_form, format_answer, one_thread
from .examfile import Exam, ExamQuestion
from .model import CHOICE, NUMERIC, TRUEFALSE, Variant
from .pools import drawn_ids


def questions_for(exam: Exam, student: str) -> list[ExamQuestion]:
    """The questions on this student's paper, in file order (a pool's drawn ones among them)."""
    if not exam.pools:
        return list(exam.questions)
    chosen: set[str] = set()
    for pool in exam.pools:
        chosen |= drawn_ids(pool, exam.seed, student)
    return [q for q in exam.questions if not q.pool or q.id in chosen]


def make_variant(exam: Exam, eq: ExamQuestion, student: str, number: int) -> Variant:
    q = eq.question
    params, answer, mistakes = draw(q, exam.seed, student, form=eq.form, tolerance=eq.tolerance)
    if q.kind == NUMERIC and isinstance(answer, tuple):
        answer = list(answer)
    if q.kind in (CHOICE, TRUEFALSE):
        answer = str(answer)
    return Variant(
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


@dataclass
class ExamInstance:
    exam: Exam
    student: str
    variants: list[Variant]
    questions: list[ExamQuestion] = field(default_factory=list)  # this paper's, after pools

    def by_id(self) -> dict[str, Variant]:
        return {v.id: v for v in self.variants}


def make_instance(exam: Exam, student: str) -> ExamInstance:
    student = check_student_id(student)
    questions = questions_for(exam, student)
    with one_thread():
        variants = [make_variant(exam, eq, student, i + 1) for i, eq in enumerate(questions)]
    # whether the paper fits the duration is the renderers' check (``timing.check_fits``): it
    # measures the rendered text, which grading never renders
    return ExamInstance(exam=exam, student=student, variants=variants, questions=questions)
