"""The question bank: size, section tags, templates, and every symbolic question's grading."""

from __future__ import annotations

import pytest

from seqlab.exam.bank import load_bank
from seqlab.exam.draws import format_answer, sample_params
from seqlab.exam.examfile import Exam, ExamQuestion, all_questions_exam
from seqlab.exam.markdown import render_texts
from seqlab.exam.marking import grade_variant
from seqlab.exam.model import CHOICE, KINDS, NUMERIC, REGISTRY, SYMBOLIC, TRUEFALSE
from seqlab.exam.sections import SECTIONS
from seqlab.exam.variants import make_variant

load_bank()
STUDENTS = ["s0001", "s0002", "s0003", "ab12cd", "z9"]
SYMBOLIC_IDS = sorted(q.id for q in REGISTRY.values() if q.kind == SYMBOLIC)


def _variant(qid: str, student: str, **partial):
    eq = ExamQuestion(
        question=REGISTRY[qid],
        points=2.0,
        part="test",
        per_element=partial.get("per_element", False),
        mistakes=partial.get("mistakes", {}),
    )
    exam = Exam(title="t", seed=7, questions=(eq,), parts=("test",))
    return make_variant(exam, eq, student, 1)


def test_bank_size_kinds_and_sections():
    assert len(REGISTRY) >= 40
    assert {q.kind for q in REGISTRY.values()} == set(KINDS)
    for q in REGISTRY.values():
        assert q.sections and all(tag in SECTIONS for tag in q.sections), q.id
    covered = {tag for q in REGISTRY.values() for tag in q.sections}
    assert not [tag for tag in SECTIONS if tag not in covered], "every section of the notes has a question"


def test_issue_topics_are_in_the_bank():
    wanted = [
        "rnn.param_count",
        "lstm.param_count",
        "gru.param_count",
        "attn.mha_params",
        "tf.encoder_params",
        "rnn.shapes",
        "attn.memory",
        "opt.sgd_step",
        "opt.momentum_steps",
        "opt.adagrad_steps",
        "opt.rmsprop_steps",
        "opt.adam_steps",
        "attn.sdpa_weights",
        "pos.sinusoidal_entry",
        "gru.update",
        "lstm.cell_update",
        "ssm.linear_recurrence",
        "rnn.eigen_growth",
        "opt.clip_vector",
        "attn.var_qk",
        "rnn.ce_grad_formula",
        "opt.bias_correction",
        "opt.clip_scale",
        "rnn.hidden_grad_recursion",
        "concept.bottleneck",
        "concept.permutation",
        "concept.why_mask",
        "concept.lstm_vs_gru",
        "concept.birnn_online",
        "concept.complexity",
        "concept.soft_hard",
        "concept.teacher_forcing",
    ]
    assert not [q for q in wanted if q not in REGISTRY]


def test_every_question_renders_and_its_key_scores_full_marks():
    exam = all_questions_exam(seed=3)
    from seqlab.exam.variants import make_instance

    for student in STUDENTS[:2]:
        inst = render_texts(make_instance(exam, student))
        for v in inst.variants:
            assert v.text.strip(), v.id
            assert "{{" not in v.text and "{%" not in v.text
            mark = grade_variant(v, v.key)
            assert mark.score == v.points, (v.id, v.key, mark.output)


@pytest.mark.parametrize("qid", SYMBOLIC_IDS)
def test_symbolic_equivalent_forms_accepted_and_wrong_forms_rejected(qid):
    q = REGISTRY[qid]
    assert q.equivalents is not None, f"{qid} lists equivalent forms for this test"
    for student in STUDENTS[:3]:
        v = _variant(qid, student)
        declared = {s.sympy() for s in q.syms(v.params)}
        assert v.answer.free_symbols <= declared, (qid, v.answer.free_symbols, declared)
        forms = q.equivalents(v.params)
        assert forms and any(f.replace(" ", "") != v.key.replace(" ", "") for f in forms)
        for form in forms + [v.key]:
            mark = grade_variant(v, form)
            assert mark.score == v.points, (qid, student, form, mark.output)
        wrong = [f"({v.key}) + 1", f"2*({v.key})", f"({v.key})^2 + 1"]
        wrong += [format_answer(SYMBOLIC, m.value) for m in (q.mistakes(v.params) if q.mistakes else {}).values()]
        for form in wrong:
            mark = grade_variant(v, form)
            assert mark.score == 0, (qid, student, form, mark.output)
            assert mark.output.startswith("incorrect")


@pytest.mark.parametrize("qid", sorted(q.id for q in REGISTRY.values() if q.kind == NUMERIC and q.mistakes))
def test_numeric_mistakes_are_wrong_and_recognised(qid):
    q = REGISTRY[qid]
    for student in STUDENTS[:3]:
        v = _variant(qid, student)
        for name, m in q.mistakes(v.params).items():
            text = format_answer(NUMERIC, m.value)
            if text == v.key:
                continue  # this variant happens to make the mistake harmless
            mark = grade_variant(v, text)
            assert mark.score < v.points, (qid, name)
            v.partial = {"per_element": False, "mistakes": {name: 0.5}}
            credited = grade_variant(v, text)
            assert credited.score in (0.5 * v.points, v.points) and "matches a known mistake" in credited.output, (
                qid,
                name,
            )
            v.partial = {"per_element": False, "mistakes": {}}


def test_parameters_are_plain_data_and_reproducible():
    import json

    for q in REGISTRY.values():
        a = sample_params(q, 11, "s1")
        assert json.loads(json.dumps(a)) == a, q.id
        assert sample_params(q, 11, "s1") == a


def test_concept_options_are_shuffled_per_student():
    seen = {tuple(sample_params(REGISTRY["concept.bottleneck"], 1, f"s{i}")["options"]) for i in range(20)}
    assert len(seen) > 5
    v = _variant("concept.bottleneck", "s1")
    assert v.question.kind == CHOICE and v.answer in "ABCD"
    wrong = next(c for c in "ABCD" if c != v.answer)
    assert grade_variant(v, wrong).score == 0
    assert grade_variant(v, f"({v.answer.lower()})").score == v.points
    tf = _variant("concept.birnn_online", "s1")
    assert tf.question.kind == TRUEFALSE and tf.answer in ("true", "false")
    assert grade_variant(tf, tf.answer == "true").score == tf.points  # YAML booleans work too


def test_sample_token_puts_to_fair_draw_every_u_it_could_accept():
    """rnn.sample_token draws u only among the values that make four different tokens (the key and
    its three mistakes); fair_draw, which judges, must refuse every other value of u, or the
    shortcut would change which u a student can get."""
    from seqlab.exam.bank import question_module
    from seqlab.seeds import derived_rng

    generation = question_module("rnn.generation")
    _four_token_us, _token_draw_valid = generation._four_token_us, generation._token_draw_valid

    rng = derived_rng("sample-token-shortcut")
    q = REGISTRY["rnn.sample_token"]
    tried = 0
    for _ in range(300):
        p = {k: v for k, v in q.sample(rng).items() if k != "u"}
        every_u = [k / 100 for k in range(5, 96)]
        accepted = [u for u in every_u if _token_draw_valid({**p, "u": u})]
        assert accepted == [u for u in _four_token_us(p) if _token_draw_valid({**p, "u": u})], p
        tried += bool(accepted)
    assert tried > 10  # draws with some valid u were among them
