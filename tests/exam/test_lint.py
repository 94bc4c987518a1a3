"""The bank lint (``seqlab.exam.lint``): planted problems are each found; the bank and the final are clean."""

from __future__ import annotations

import pytest
import sympy

from seqlab.exam.draws import format_answer
from seqlab.exam.examfile import Exam, all_questions_exam, load_exam
from seqlab.exam.lint import lint_exam, lint_paper
from seqlab.exam.model import FOUR_DIGITS, NUMERIC, SYMBOLIC, Question, Variant
from seqlab.exam.variants import ExamInstance
from seqlab.paths import DEFAULT_EXAM


def _q(qid: str, kind: str = NUMERIC, title: str = "A question") -> Question:
    return Question(
        id=qid,
        kind=kind,
        sample=lambda rng: {},
        answer=lambda p: 0.0,
        template="",
        title=title,
        sections=("L5 §5.1",),
        tolerance=FOUR_DIGITS if kind == NUMERIC else None,
    )


def _v(number, q, params, answer, text, per_element=False) -> Variant:
    return Variant(
        question=q,
        number=number,
        points=2.0,
        params=params,
        answer=answer,
        key=format_answer(q.kind, answer),
        partial={"per_element": per_element, "mistakes": {}},
        tolerance=q.tolerance,
        text=text,
    )


def planted_paper() -> ExamInstance:
    """A paper with one question per problem the lint knows, and two clean ones."""
    beta1, t = sympy.symbols("beta1 t", positive=True)
    variants = [
        _v(1, _q("p.key"), {"x": 0.3}, 0.1234567, "What is $f(0.3)$?"),
        _v(2, _q("p.prints_key"), {"y": 2.0}, 4.0, "Given $f(0.3) = 0.1235$ and $y = 2$, what is $y^2$?"),
        _v(3, _q("p.formula", SYMBOLIC), {}, 1 / (1 - beta1**t), "Give the bias-correction factor `c`."),
        _v(
            4,
            _q("p.prints_formula"),
            {"g": 1.5},
            0.7,
            r"Adam computes $\hat m_t = m_t / (1 - \beta_1^t)$; what is ...?",
        ),
        _v(5, _q("p.copyable"), {"E": [[1.6, 1.1, 2.0], [0.0, 0.7, 1.4]]}, [1.6, 1.1, 2.0], "Which row is token 0?"),
        _v(6, _q("p.unearnable"), {"B": 3, "H": 25}, [3.0, 12.5], "Shape and half the width?", per_element=True),
        _v(
            7,
            _q("p.title", title="Recurrent-weight and initial-state gradients"),
            {"w": 0.4},
            0.25,
            "What is the gradient of the loss with respect to the recurrent weight $w$?",
        ),
        _v(
            8,
            _q("p.clean", title="Cell and hidden state"),
            {"a": 0.2},
            [0.875, -0.5],
            "What are the cell state and the hidden state?",
            per_element=True,
        ),
    ]
    exam = Exam(title="planted", seed=1, questions=(), parts=("A",))
    return ExamInstance(exam=exam, student="planted", variants=variants)


def test_each_planted_problem_is_found_and_nothing_else():
    found = {(f.number, f.rule) for f in lint_paper(planted_paper())}
    assert found == {(2, "leak"), (4, "leak"), (5, "copyable"), (6, "unearnable"), (7, "title")}, found


@pytest.mark.bank  # every question of the bank and the final for a few ids: about 15 s
def test_the_bank_and_the_final_are_clean_for_several_ids():
    ids = ["s0001", "s0002", "jane.doe@uni.edu", "Q9"]
    assert not [str(f) for f in lint_exam(all_questions_exam(seed=20261215), ids)]
    assert not [str(f) for f in lint_exam(load_exam(DEFAULT_EXAM), ids + [f"x{i}" for i in range(8)])]
