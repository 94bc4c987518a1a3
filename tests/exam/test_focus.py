"""The questions added for the exam-focus sections, and `seqlab exam coverage --check`."""

from __future__ import annotations

import copy

import pytest
import yaml

from seqlab.cli import main
from seqlab.exam.bank import load_bank, question_module
from seqlab.exam.coverage import EXAM_FOCUS, missing_focus
from seqlab.exam.draws import format_answer, sample_params
from seqlab.exam.examfile import Exam, ExamQuestion, exam_from_dict
from seqlab.exam.markdown import render_question
from seqlab.exam.marking import grade_variant
from seqlab.exam.model import REGISTRY
from seqlab.exam.variants import make_variant
from seqlab.paths import DEFAULT_EXAM as FINAL_EXAM

_param_grads_by_hand = question_module("rnn.generation")._param_grads_by_hand

load_bank()
NEW = ("rnn.bptt_param_grads", "rnn.sample_token", "attn.qkv_projection", "tf.norm_order")
IDS = [f"u{i:05d}" for i in range(1000)]
# Their validity (mistakes apart from the key and each other, 0 never accepted) is checked with
# every other question's in tests/exam/test_fairness.py.


@pytest.mark.parametrize("qid", NEW)
def test_key_scores_full_and_each_named_mistake_is_recognised(qid):
    q = REGISTRY[qid]
    eq = ExamQuestion(question=q, points=2, part="A")
    exam = Exam(title="t", seed=5, questions=(eq,), parts=("A",))
    for student in IDS[:15]:
        v = make_variant(exam, eq, student, 1)
        v.text, v.solution = render_question(v)
        assert v.text and v.solution and "{{" not in v.text
        assert grade_variant(v, v.key).score == 2
        mistakes = q.mistakes(v.params)
        for name, mistake in mistakes.items():
            mark = grade_variant(v, format_answer(q.kind, mistake.value))
            # the general rule keeps the mistakes apart, so the one made is the one named
            assert mark.score < 2 and mark.details.get("mistake") == name, (student, name, mark.output)


def test_bptt_parameter_gradients_written_out_agree_with_the_reference():
    q = REGISTRY["rnn.bptt_param_grads"]
    for student in IDS[:200]:
        params = sample_params(q, 1, student)
        assert _param_grads_by_hand(params) == pytest.approx(q.answer(params), abs=1e-12)


def test_the_final_exam_examines_every_focus_section_as_a_main_topic(capsys):
    assert missing_focus() == []
    assert main(["exam", "coverage", "--check"]) == 0
    assert "every exam-focus section is a main topic" in capsys.readouterr().out
    for tag in (
        "W8 §9",
        "W8 §1.3",
        "W8 §11.2",
        "L7-8 (Lecture 7) §三",
        "W8 §15.2",
        "W8 §17",
        "L7-8 (Lecture 7) §七",
        "W8 §4",
        "L5 §3.3",
    ):
        assert tag in EXAM_FOCUS, tag


def _final_without(qid: str) -> dict:
    data = yaml.safe_load(FINAL_EXAM.read_text(encoding="utf-8"))
    for part in data["parts"]:
        part["questions"] = [e for e in part["questions"] if not (isinstance(e, dict) and e.get("id") == qid)]
    return data


def test_a_focus_section_without_a_main_topic_question_is_reported():
    assert missing_focus(exam_from_dict(_final_without("ssm.kv_cache"))) == ["L7-8 (Lecture 7) §七"]
    # a pool counts only when every candidate examines the section: mix in an off-topic one
    data = copy.deepcopy(_final_without("tf.vit_tokens"))
    for part in data["parts"]:
        for entry in part["questions"]:
            if isinstance(entry, dict) and entry.get("pool") == "vision":
                entry["questions"] = [
                    {"id": "tf.caption_shapes"},
                    {"id": "tf.vit_tokens"},
                    {"id": "rnn.truncated_chunks"},
                ]
    assert missing_focus(exam_from_dict(data)) == ["W8 §17"]
