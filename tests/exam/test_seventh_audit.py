"""The seventh blind audit's unfair pairs, put back: each draw is now refused (``skips_work`` in
the question's declaration) or no longer drawn, so the slip it let through scores on no paper."""

from __future__ import annotations

import random

from seqlab.exam.bank import load_bank
from seqlab.exam.lint_draws import degenerate
from seqlab.exam.model import REGISTRY

load_bank()

LSTM = {"x": 0.5, "h_prev": -0.4, "c_prev": 1.4, "W_ih": [0.9, -0.8, 0.8, 0.3], "W_hh": [0.2, -0.05, -0.5, 0.1],
        "b": [0.05, 0.05, 0.1, 0.2]}  # fmt: skip


def test_an_lstm_step_whose_weights_could_be_swapped_unseen_is_refused():
    """x_t = h_{t-1} (the audit's 0.1 and 0.1): w^x and w^h swapped give the key."""
    q = REGISTRY["lstm.cell_update"]
    assert degenerate(q, LSTM, q.answer(LSTM)) == ""
    same = {**LSTM, "x": 0.3, "h_prev": 0.3}
    assert "swapped weights" in degenerate(q, same, q.answer(same))


def test_an_lstm_step_where_tanh_of_the_cell_is_the_cell_is_refused():
    """A small C_t (the audit's -0.094): h_t = o_t C_t is within the tolerance of o_t tanh(C_t)."""
    q = REGISTRY["lstm.cell_update"]
    small = {**LSTM, "c_prev": -0.3, "b": [0.05, 0.05, 0.1, 0.2], "W_ih": [0.9, 0.8, 0.3, 0.3]}
    c, h = q.answer(small)
    assert abs(c) < 0.35 and "missing tanh(C_t)" in degenerate(q, small, [c, h])


def test_rmsprop_never_draws_an_alpha_equal_to_one_minus_alpha():
    q = REGISTRY["opt.rmsprop_steps"]
    rng = random.Random(7)
    assert all(q.sample(rng)["alpha"] != 0.5 for _ in range(500))


def test_a_bptt_draw_with_w_of_one_or_b_of_zero_is_refused():
    q = REGISTRY["rnn.bptt_param_grads"]
    p = {"x": [0.6, -0.3], "y": [0, 1], "h0": 0.2, "u": 0.5, "w": -0.7, "b": 0.1, "V": [0.4, -0.5],
         "c": [0.2, -0.3], "target": "all"}  # fmt: skip
    assert degenerate(q, p, [0.13, 0.27, 0.31]) == ""
    assert "w is +-1" in degenerate(q, {**p, "w": -1.0}, [0.13, 0.27, 0.31])
    assert "b is 0" in degenerate(q, {**p, "b": 0.0}, [0.13, 0.27, 0.31])


def test_a_linear_recurrence_from_h0_of_one_is_refused():
    q = REGISTRY["ssm.linear_recurrence"]
    p = {"a": [0.5, -1.2, 0.7], "b": [0.3, 1.1, -0.4], "h0": 0.6}
    assert degenerate(q, p, q.answer(p)) == ""
    assert "h_0 is 1 or -1" in degenerate(q, {**p, "h0": -1.0}, q.answer({**p, "h0": -1.0}))
