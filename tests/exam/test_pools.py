"""Question pools: per-student draws, keys follow the draw, bad pools refused with a clear message."""

from __future__ import annotations

import csv
import io

import pytest

from seqlab.exam.examfile import ExamError, exam_from_dict, load_exam
from seqlab.exam.grading import BatchRow, gradebook_csv
from seqlab.exam.markdown import exam_markdown
from seqlab.exam.paper import grade_answers
from seqlab.exam.pools import drawn_ids
from seqlab.exam.render import key_answers
from seqlab.exam.variants import make_instance
from seqlab.paths import DEFAULT_EXAM as FINAL_EXAM

POOLED = {
    "title": "Pooled quiz",
    "seed": 7,
    "parts": [
        {
            "title": "A",
            "questions": [
                {"id": "attn.var_qk", "points": 2},
                {
                    "pool": "optim",
                    "draw": 2,
                    "points": 3,
                    "questions": ["opt.momentum_steps", "opt.adam_steps", "opt.rmsprop_steps", "opt.clip_vector"],
                },
            ],
        },
        {
            "title": "B",
            "questions": [
                {
                    "pool": "concepts",
                    "points": 1,
                    "questions": ["concept.bottleneck", "concept.why_mask", "concept.lstm_vs_gru"],
                },
            ],
        },
    ],
}
STUDENTS = [f"s{i:04d}" for i in range(200)]


def test_200_ids_get_different_draws_every_key_scores_full_and_papers_are_stable():
    exam = exam_from_dict(POOLED)
    assert exam.max_score == 2 + 2 * 3 + 1
    draws = {}
    for student in STUDENTS:
        inst = make_instance(exam, student)
        ids = [v.id for v in inst.variants]
        assert len(ids) == 1 + 2 + 1 and ids[0] == "attn.var_qk"
        assert [v.number for v in inst.variants] == [1, 2, 3, 4]
        result = grade_answers(exam, student, key_answers(inst)["answers"], instance=inst)
        assert result.score == result.max_score == exam.max_score, student
        draws[student] = tuple(ids)
    # 4 choose 2 times 3 = 18 possible papers: 200 students see many of them, each candidate drawn
    assert len(set(draws.values())) >= 12
    for pool_ids in (POOLED["parts"][0]["questions"][1]["questions"], POOLED["parts"][1]["questions"][0]["questions"]):
        for qid in pool_ids:
            assert any(qid in d for d in draws.values()), qid
    # the same id always gets the same paper: again, from a freshly loaded exam, and rendered
    again = exam_from_dict(POOLED)
    for student in STUDENTS[:20]:
        assert tuple(v.id for v in make_instance(again, student).variants) == draws[student]
    assert exam_markdown(make_instance(exam, "s0001")) == exam_markdown(make_instance(again, "s0001"))


def test_draw_is_a_stable_hash_of_seed_student_and_pool():
    exam = exam_from_dict(POOLED)
    pool = exam.pools[0]
    assert drawn_ids(pool, 7, "s0001") == drawn_ids(pool, 7, "s0001")
    assert len({drawn_ids(pool, seed, "s0001") for seed in range(40)}) > 1


def test_answers_to_questions_not_drawn_are_ignored_with_a_note_and_gradebook_leaves_them_empty():
    exam = exam_from_dict(POOLED)
    inst = make_instance(exam, "s0001")
    drawn = {v.id for v in inst.variants}
    not_drawn = next(q.id for q in exam.questions if q.id not in drawn)
    answers = {**key_answers(inst)["answers"], not_drawn: "1"}
    result = grade_answers(exam, "s0001", answers, instance=inst)
    assert result.score == exam.max_score
    assert any(not_drawn in e and "not on this student's paper" in e for e in result.errors)
    rows = list(
        csv.DictReader(io.StringIO(gradebook_csv(exam, [BatchRow("a.yaml", "s0001", "graded", result=result)])))
    )
    column = {header.split(" ")[-1]: header for header in rows[0]}  # "Q3 opt.adam_steps": number and id
    assert rows[0][column[not_drawn]] == "" and column[not_drawn] == not_drawn  # drawn by no one: no number
    assert all(rows[0][column[v.id]] != "" and column[v.id] == f"Q{v.number} {v.id}" for v in inst.variants)


@pytest.mark.parametrize(
    "pool, message",
    [
        (
            {
                "pool": "p",
                "questions": [{"id": "opt.adam_steps", "points": 2}, {"id": "opt.momentum_steps", "points": 3}],
            },
            "every question must be worth the same points (opt.adam_steps: 2, opt.momentum_steps: 3)",
        ),
        (
            {"pool": "p", "points": 2, "questions": ["opt.adam_steps", "concept.bottleneck"]},
            "every question must be of the same kind (opt.adam_steps: numeric, concept.bottleneck: choice)",
        ),
        (
            {"pool": "p", "draw": 2, "questions": ["opt.adam_steps", "opt.momentum_steps"]},
            "must be an integer from 1 to 1",
        ),
        ({"pool": "p", "questions": ["opt.adam_steps"]}, "needs a list of at least 2 questions"),
        ({"pool": "p", "questions": ["opt.adam_steps", "opt.adam_steps"]}, "appears twice"),
        ({"pool": "p", "pick": 1, "questions": ["opt.adam_steps", "opt.momentum_steps"]}, "unknown key(s) pick"),
    ],
)
def test_bad_pools_are_refused_with_a_message_naming_the_pool(pool, message):
    data = {"title": "t", "seed": 1, "parts": [{"title": "A", "questions": [pool]}]}
    with pytest.raises(ExamError) as info:
        exam_from_dict(data, "quiz.yaml")
    assert message in str(info.value)
    assert str(info.value).startswith("quiz.yaml: parts[0].questions[0]")


def test_the_final_exam_pools_are_valid_and_keys_score_full():
    exam = load_exam(FINAL_EXAM)
    assert exam.pools, "exams/final.yaml draws at least one question from a pool"
    for student in STUDENTS[:10]:
        inst = make_instance(exam, student)
        result = grade_answers(exam, student, key_answers(inst)["answers"], instance=inst)
        assert result.score == result.max_score == exam.max_score


def test_notebook_and_check_follow_the_draw():
    from seqlab.exam.markdown import partial_credit_rule
    from seqlab.exam.notebook import exam_notebook
    from seqlab.exam.paper import check_answers

    # the final exam: a pool before questions with partial credit, so a rule shifted by the
    # pool's undrawn candidates would land on the wrong question
    final = load_exam(FINAL_EXAM)
    inst = make_instance(final, STUDENTS[0])
    texts = [c.source for c in exam_notebook(inst).cells if c.source.startswith("## Question")]
    assert len(texts) == len(inst.variants)
    for text, v, eq in zip(texts, inst.variants, inst.questions):
        rule = partial_credit_rule(v, eq)
        assert (f"*Partial credit:* {rule}." in text) if rule else ("*Partial credit:*" not in text), v.id
    exam = exam_from_dict(POOLED)
    drawn = [v.id for v in make_instance(exam, STUDENTS[0]).variants]
    missed = next(q for q in exam.ids() if q not in drawn)
    problems = check_answers(exam, STUDENTS[0], {missed: "1"})
    assert any("not on your paper" in p and missed in p for p in problems)
