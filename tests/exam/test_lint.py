"""The bank lint (``seqlab.exam.lint``): planted problems are each found; the bank and the final are clean.

Also the paper's time: an exam whose worst draw declares more minutes than its duration is
refused, and the final's declared minutes fit its duration for 1000 ids.
"""

from __future__ import annotations

import pytest
import sympy

from seqlab.cli import main
from seqlab.exam.draws import format_answer
from seqlab.exam.examfile import Exam, ExamError, all_questions_exam, exam_from_dict, load_exam, most_minutes
from seqlab.exam.lint import lint_exam, lint_paper
from seqlab.exam.model import FOUR_DIGITS, NUMERIC, SYMBOLIC, Question, Variant
from seqlab.exam.variants import ExamInstance, questions_for
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
        minutes=2,
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


def _short(duration):
    return {
        "title": "t",
        "seed": 1,
        "duration": duration,
        "parts": [
            {
                "questions": [
                    "opt.momentum_steps",
                    {"pool": "p", "draw": 1, "points": 1, "questions": ["rnn.cell_step", "rnn.bptt_param_grads"]},
                ]
            }
        ],
    }


def test_an_exam_longer_than_its_duration_is_refused_at_its_worst_draw(tmp_path, capsys):
    # 5 minutes fixed, and the pool's worst draw is 6 more: 10 minutes do not suffice for everyone
    assert most_minutes(exam_from_dict(_short(11))) == 11
    with pytest.raises(ExamError, match="up to 11 minutes, more than the 10 minutes"):
        exam_from_dict(_short(10))
    import yaml

    (tmp_path / "short.yaml").write_text(yaml.safe_dump(_short(10)))
    (tmp_path / "x.yaml").write_text("student: s1\nanswers: {}\n")
    for command in (
        ["render", "--student", "s1", "--out", str(tmp_path / "o")],
        ["check", str(tmp_path / "x.yaml"), "--student", "s1"],
    ):
        assert main(["exam", command[0], "--exam", str(tmp_path / "short.yaml"), *command[1:]]) != 0
        assert "duration" in capsys.readouterr().err


def test_the_final_fits_its_duration_for_1000_ids_with_margin():
    exam = load_exam(DEFAULT_EXAM)
    assert exam.duration == 120 and exam.max_score == 100
    worst = max(sum(eq.question.minutes for eq in questions_for(exam, f"s{i:05d}")) for i in range(1000))
    assert worst <= most_minutes(exam) <= 0.9 * exam.duration
    assert {aid for aid, _ in exam.aids} >= {"calculator", "computer"} and "numbered from 0" in exam.conventions
