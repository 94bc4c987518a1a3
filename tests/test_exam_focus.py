"""The questions added for the exam-focus sections, and `seqlab exam coverage --check`."""
from __future__ import annotations

import copy

import pytest
import yaml

from seqlab.cli import main
from seqlab.exam.bank import load_bank
from seqlab.exam.bank._util import MISTAKE_MARGIN
from seqlab.exam.bank.rnn import _param_grads_by_hand
from seqlab.exam.cli import DEFAULT_EXAM as FINAL_EXAM
from seqlab.exam.coverage import EXAM_FOCUS, missing_focus
from seqlab.exam.examfile import ExamQuestion, Exam, exam_from_dict
from seqlab.exam.grading import grade_variant
from seqlab.exam.model import REGISTRY
from seqlab.exam.variants import format_answer, make_variant, sample_params

load_bank()
NEW = ("rnn.bptt_param_grads", "rnn.sample_token", "attn.qkv_projection", "tf.norm_order")
IDS = [f"u{i:05d}" for i in range(1000)]


def _entries(x):
    return [float(v) for v in (x if isinstance(x, list) else [x])]


@pytest.mark.parametrize("qid", NEW)
def test_every_draw_over_1000_ids_has_distinguishable_mistakes_and_no_zero_accepted(qid):
    q = REGISTRY[qid]
    tol = q.tolerance
    for student in IDS:
        params = sample_params(q, 20261215, student)
        key = _entries(q.answer(params))
        assert not any(k != 0 and tol.accepts(0.0, k) for k in key), (student, key)
        for name, mistake in q.mistakes(params).items():
            wrong = _entries(mistake.value)
            assert len(wrong) == len(key)
            assert any(abs(w - k) > MISTAKE_MARGIN * (tol.abs + tol.rel * abs(k)) for w, k in zip(wrong, key)), (
                student, name, key, wrong)


@pytest.mark.parametrize("qid", NEW)
def test_key_scores_full_and_each_named_mistake_is_recognised(qid):
    q = REGISTRY[qid]
    eq = ExamQuestion(question=q, points=2, part="A")
    exam = Exam(title="t", seed=5, questions=(eq,), parts=("A",))
    for student in IDS[:15]:
        v = make_variant(exam, eq, student, 1)
        assert v.text and v.solution and "{{" not in v.text
        assert grade_variant(v, v.key).score == 2
        mistakes = q.mistakes(v.params)
        for name, mistake in mistakes.items():
            mark = grade_variant(v, format_answer(q.kind, mistake.value))
            # two mistakes may give the same wrong answer (a token index): either name is right
            named = mark.details.get("mistake")
            assert mark.score < 2 and named in mistakes and mistakes[named].value == mistake.value, (
                student, name, mark.output)


def test_bptt_parameter_gradients_written_out_agree_with_the_reference():
    q = REGISTRY["rnn.bptt_param_grads"]
    for student in IDS[:200]:
        params = sample_params(q, 1, student)
        assert _param_grads_by_hand(params) == pytest.approx(q.answer(params), abs=1e-12)


def test_the_final_exam_examines_every_focus_section_as_a_main_topic(capsys):
    assert missing_focus() == []
    assert main(["exam", "coverage", "--check"]) == 0
    assert "every exam-focus section is a main topic" in capsys.readouterr().out
    for tag in ("W8 §9", "W8 §1.3", "W8 §11.2", "L7-8 (Lecture 7) §三", "W8 §15.2", "W8 §17",
                "L7-8 (Lecture 7) §七", "W8 §4", "L5 §3.3"):
        assert tag in EXAM_FOCUS, tag


def _final_without(qid: str) -> dict:
    data = yaml.safe_load(FINAL_EXAM.read_text(encoding="utf-8"))
    for part in data["parts"]:
        part["questions"] = [e for e in part["questions"] if not (isinstance(e, dict) and e.get("id") == qid)]
    return data


def test_a_focus_section_without_a_main_topic_question_is_reported():
    assert missing_focus(exam_from_dict(_final_without("attn.qkv_projection"))) == ["W8 §9"]
    # a pool counts only when every candidate examines the section: mix in an off-topic one
    data = copy.deepcopy(_final_without("tf.vit_tokens"))
    for part in data["parts"]:
        for entry in part["questions"]:
            if isinstance(entry, dict) and entry.get("pool") == "vision":
                entry["questions"] = [{"id": "tf.caption_shapes"}, {"id": "tf.vit_tokens"}, {"id": "rnn.truncated_chunks"}]
    assert missing_focus(exam_from_dict(data)) == ["W8 §17"]
