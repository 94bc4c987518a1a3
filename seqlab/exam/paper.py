"""Grading one paper: every question of one student's variant, as one ``GradingResult``.

One ``TestResult`` per question, in paper order, named ``exam.<question id>: Q<number> <title>``
(the id and the number the paper prints), in the shared result model, so the Gradescope writer
and the gradebook work as for code grading.
"""

from __future__ import annotations

import reprlib
import time
from pathlib import Path
from typing import Any

from ..results import GradingResult, TestResult
from ..seeds import derive_seed
from .answers import check_readable, load_answers
from .draws import check_student_id
from .errors import AnswersError
from .examfile import Exam
from .marking import answer_shapes, grade_variant
from .variants import ExamInstance, make_instance

# The symbolic checks' sample points: 8 bytes of the derived seed, as since the first exam graded.
SAMPLE_SEED_BYTES = 8


def by_bank_id(inst: ExamInstance, answers: dict[str, Any]) -> dict[str, Any]:
    """``answers`` keyed by bank id: the paper's student-facing ids ("q33", ``answer_id``) mapped
    to the question they number; a bank id (older answers files, the grader's own tests) kept."""
    numbered = {v.answer_id: v.id for v in inst.variants}
    return {numbered.get(k, k): a for k, a in answers.items()}


def grade_answers(
    exam: Exam, student: str, answers: dict[str, Any], *, instance: ExamInstance | None = None, source: str = ""
) -> GradingResult:
    start = time.perf_counter()
    inst = instance or make_instance(exam, student)
    answers = by_bank_id(inst, answers)
    tests: list[TestResult] = []
    errors: list[str] = []
    unknown = sorted(set(answers) - set(exam.ids()))
    if unknown:
        shown = ", ".join(repr(u[:40]) for u in unknown[:10]) + (" ..." if len(unknown) > 10 else "")
        errors.append(f"answers for unknown question id(s) ignored: {shown}")
    not_drawn = sorted((set(answers) & set(exam.ids())) - {v.id for v in inst.variants})
    if not_drawn:
        errors.append(f"answers for question(s) not on this student's paper ignored: {', '.join(not_drawn[:10])}")
    for v in inst.variants:
        mark = grade_variant(
            v, answers.get(v.id), seed=derive_seed(exam.seed, inst.student, v.id, nbytes=SAMPLE_SEED_BYTES)
        )
        shown = _shown(answers.get(v.id))
        tests.append(
            TestResult(
                name=f"exam.{v.id}: Q{v.number} {v.question.title}",
                score=round(mark.score, 4),
                max_score=v.points,
                output=mark.output,
                visibility=exam.visibility,
                details={
                    "question": v.number,
                    "verdict": mark.verdict,
                    "answer": shown,
                    "sections": list(v.question.sections),
                    **mark.details,
                },
            )
        )
    meta = {"kind": "exam", "exam": exam.title, "student": inst.student, "exam_seed": str(exam.seed)}
    if source:
        meta["answers_file"] = source
    return GradingResult(
        tests=tests,
        submission=inst.student,
        seed=exam.seed if isinstance(exam.seed, int) else None,
        execution_time=time.perf_counter() - start,
        errors=errors,
        meta=meta,
    )


def _shown(raw: Any) -> Any:
    """The answer as kept in the report: short, and never a full ``str()`` of a nested structure
    (a YAML alias bomb would be huge once printed)."""
    if raw is None or isinstance(raw, (bool, int, float)):
        return raw
    if isinstance(raw, str):
        return raw if len(raw) <= 200 else raw[:200] + f"... ({len(raw)} characters)"
    return reprlib.repr(raw)[:200]


def check_answers(exam: Exam, student: str, answers: dict[str, Any]) -> list[str]:
    """What ``seqlab exam check`` reports: every answer the grader could not read, by number,
    through the same parser and shape rules as grading. Never whether an answer is right."""
    inst = make_instance(exam, student)
    answers = by_bank_id(inst, answers)
    problems = []
    unknown = sorted(set(answers) - set(exam.ids()))
    if unknown:
        problems.append(
            "unknown question id(s), these answers are not graded: " + ", ".join(repr(u[:40]) for u in unknown[:10])
        )
    not_drawn = sorted((set(answers) & set(exam.ids())) - {v.id for v in inst.variants})
    if not_drawn:
        problems.append("question(s) not on your paper, these answers are not graded: " + ", ".join(not_drawn[:10]))
    numbered = {v.id: v.answer_id for v in inst.variants}
    return problems + check_readable(
        answer_shapes(inst), {numbered.get(k, k): a for k, a in answers.items()}, quiet=True
    )


def grade_file(exam: Exam, path: str | Path, student: str | None = None) -> GradingResult:
    file_student, answers = load_answers(path)
    assert file_student is not None  # require_student: load_answers refuses a file without one
    if student is not None and check_student_id(student) != file_student:
        raise AnswersError(f"{path}: the file is for student {file_student!r}, not {student!r}")
    return grade_answers(exam, file_student, answers, source=str(path))
