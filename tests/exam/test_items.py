"""Item analysis in `seqlab exam grade-all`: 30 planted answer files, the table, the flags."""

from __future__ import annotations

import csv
import json

import yaml

from seqlab.cli import main
from seqlab.exam.draws import format_answer
from seqlab.exam.examfile import exam_from_dict
from seqlab.exam.grading import BatchRow
from seqlab.exam.items import analyse, class_notice, class_report_html, groups_svg
from seqlab.exam.paper import grade_answers
from seqlab.exam.render import key_answers
from seqlab.exam.variants import make_instance

QUIZ = {
    "title": "Item analysis quiz",
    "seed": 11,
    "parts": [
        {
            "title": "A",
            "questions": [
                {"id": "opt.momentum_steps", "points": 2},
                {"id": "opt.adam_steps", "points": 2, "partial": {"mistakes": {"no_bias_correction": 0.5}}},
                {"id": "attn.var_qk", "points": 2},
                {"id": "rnn.param_count", "points": 2},
                {"id": "tf.layer_norm", "points": 2},
                {"id": "concept.bottleneck", "points": 2},
                {"id": "concept.permutation", "points": 2},  # planted: everyone right
                {"id": "opt.clip_vector", "points": 2},  # planted: the strongest students get it wrong
            ],
        }
    ],
}
# how strong a student must be (ability in [0, 1]) to answer each normal question right
THRESHOLDS = {
    "opt.momentum_steps": 0.15,
    "opt.adam_steps": 0.55,
    "attn.var_qk": 0.35,
    "rnn.param_count": 0.25,
    "tf.layer_norm": 0.7,
    "concept.bottleneck": 0.45,
}
EASY, INVERTED = "concept.permutation", "opt.clip_vector"


def _wrong(v) -> str:
    """A wrong answer: the question's first named mistake where it has one, else a clearly wrong value."""
    kind = v.question.kind
    if v.question.mistakes:
        mistake = next(iter(v.question.mistakes(v.params).values()))
        return format_answer(kind, mistake.value)
    if kind == "choice":
        return "A" if v.answer != "A" else "B"
    if kind == "truefalse":
        return "false" if v.answer == "true" else "true"
    return ", ".join("12345.5" for _ in (v.answer if isinstance(v.answer, list) else [v.answer]))


def _class(tmp_path):
    exam_path = tmp_path / "quiz.yaml"
    exam_path.write_text(yaml.safe_dump(QUIZ), encoding="utf-8")
    exam = exam_from_dict(QUIZ)
    answers_dir = tmp_path / "answers"
    answers_dir.mkdir()
    for i in range(30):
        student, ability = f"s{i:03d}", i / 29
        inst = make_instance(exam, student)
        answers = dict(key_answers(inst)["answers"])
        for v in inst.variants:
            if v.id == INVERTED:
                right = ability < 0.5
            elif v.id == EASY:
                right = True
            else:
                right = ability >= THRESHOLDS[v.id]
            if not right:
                answers[v.id] = _wrong(v)
        (answers_dir / f"{student}.yaml").write_text(
            json.dumps({"student": student, "answers": answers}), encoding="utf-8"
        )
    return exam_path, answers_dir


def test_grade_all_writes_item_analysis_with_discrimination_and_flags(tmp_path):
    exam_path, answers_dir = _class(tmp_path)
    out = tmp_path / "class"
    assert main(["exam", "grade-all", str(answers_dir), "--exam", str(exam_path), "--out", str(out)]) == 0
    rows = {r["question"]: r for r in csv.DictReader((out / "item_analysis.csv").open(encoding="utf-8"))}
    assert list(rows) == [q["id"] for q in QUIZ["parts"][0]["questions"]]
    for qid in THRESHOLDS:
        assert rows[qid]["students"] == "30"
        assert float(rows[qid]["discrimination_r_rest"]) > 0.3, rows[qid]
        assert float(rows[qid]["discrimination_d27"]) >= 0.4, rows[qid]  # partial credit halves some
        assert rows[qid]["flag"] == "", rows[qid]
    assert rows[EASY]["full_marks_share"] == "1.000"
    assert "no spread: everyone got full marks" in rows[EASY]["flag"]
    assert float(rows[INVERTED]["discrimination_r_rest"]) < 0
    assert float(rows[INVERTED]["discrimination_d27"]) < 0
    assert "negative discrimination" in rows[INVERTED]["flag"]
    # named mistakes are counted: the weak half answered adam without bias correction
    adam_wrong = sum(1 for i in range(30) if i / 29 < THRESHOLDS["opt.adam_steps"])
    assert rows["opt.adam_steps"]["common_mistakes"] == f"no_bias_correction ({adam_wrong})"
    assert float(rows["opt.adam_steps"]["mean_fraction"]) == round((30 - adam_wrong + 0.5 * adam_wrong) / 30, 3)

    html = (out / "class_report.html").read_text(encoding="utf-8")
    assert "Item analysis" in html and "<svg" in html and "no_bias_correction" in html
    assert "<script" not in html and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert html.count('<tr class="flagged">') == 2


def test_a_class_too_small_gets_one_notice_not_a_flag_per_question():
    exam = exam_from_dict(QUIZ)
    rows = []
    for student in ("a1", "a2", "a3"):
        inst = make_instance(exam, student)
        rows.append(
            BatchRow(
                f"{student}.yaml",
                student,
                "graded",
                result=grade_answers(exam, student, key_answers(inst)["answers"], instance=inst),
            )
        )
    stats = analyse(exam, rows)
    assert all(s.r_rest is None and not s.flag for s in stats)
    assert stats[0].mean == 1.0 and stats[0].full == 1.0
    assert "3 graded paper(s)" in class_notice(rows)
    assert "3 graded paper(s), fewer than 8" in class_report_html(exam, rows, stats)


def test_group_plot_is_inline_svg_with_three_bars():
    svg = groups_svg((0.1, 0.5, 0.9))
    assert svg.startswith("<svg") and svg.count("<rect") == 3 and "mean score lower 0.10" in svg
    assert groups_svg(None) == ""
