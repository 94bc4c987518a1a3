"""The third blind audit's unfair pairs that a draw rule now refuses: an LSTM step whose input and
forget gates swapped leave C_t nearly unchanged (k2: 0.522 against 0.510, a 7/7 swap there and at
most 3.5/7 elsewhere), and a three-class BPTT output gradient whose targets miss the asked classes
(q9: forgetting the -y term kept 8/8, 4/8 on the others)."""

from __future__ import annotations

import random

from seqlab.exam.bank import load_bank
from seqlab.exam.lint_draws import degenerate
from seqlab.exam.model import REGISTRY

load_bank()


def test_an_lstm_step_whose_gate_swap_is_unseen_is_degenerate():
    q = REGISTRY["lstm.cell_update"]
    # pre-activations 0.09 and 0.04 (gates 0.522 and 0.510): the swap moves C_t by about 1%
    near = {"x": 0.5, "h_prev": 0.2, "c_prev": 1.2, "W_ih": [0.1, 0.1, 0.8, 0.3], "W_hh": [0.2, -0.05, -0.5, 0.1],
            "b": [0.0, 0.0, 0.1, 0.2]}  # fmt: skip
    assert "swapping the input and forget gates" in degenerate(q, near, [0.9, 0.5])
    apart = {**near, "W_ih": [0.9, -0.8, 0.8, 0.3]}  # gates 0.65 and 0.41: the swap moves C_t by 30%
    assert degenerate(q, apart, [0.9, 0.5]) == ""


def test_the_three_class_output_gradient_targets_the_asked_classes():
    sample = REGISTRY["rnn.bptt_output_grad"].sample
    rng = random.Random(5)
    for _ in range(200):
        for form in ("b_y", "W_hy"):
            p = sample(rng, form)
            assert sorted(p["y"]) == [0, 1], p["y"]


def test_a_quiz_item_promises_only_the_named_mistake_credit_its_scoring_gives():
    from seqlab.exam.examfile import load_exam
    from seqlab.exam.markdown import render_texts
    from seqlab.exam.qti import _question_text, mistakes_credited
    from seqlab.exam.variants import make_instance
    from seqlab.paths import DEFAULT_EXAM

    inst = render_texts(make_instance(load_exam(DEFAULT_EXAM), "fresh-x7"))
    promised = {v.id: "named in the key" in _question_text(v, eq) for eq, v in zip(inst.questions, inst.variants)}
    credited = {v.id: bool(mistakes_credited(v)) for v in inst.variants}
    assert promised == credited
    # the audit's Q2 and Q27 (two numbers each): the paper credits their mistakes, the quiz cannot
    assert not promised["opt.rmsprop_steps"] and not promised["attn.qkv_projection"]
    assert any(promised.values())
