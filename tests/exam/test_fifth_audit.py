"""The fifth blind audit's giveaway and unfair pair: a concept option that printed the output
gate's product (tanh C_t, which the LSTM step item asks the student to recall), and two optimizer
steps with a small learning rate, where 1% of w_2 was 7-12% of how far w moved (a wrong update
scored half on that paper only)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from seqlab.exam.bank import load_bank, question_module
from seqlab.exam.lint_draws import degenerate
from seqlab.exam.model import REGISTRY

load_bank()
MOVE_SHARE = question_module("optimizers").MOVE_SHARE
CONCEPTS = Path(__file__).resolve().parents[2] / "exams" / "concepts.yaml"
# The LSTM step item's recall: the hidden state is the output gate times tanh of the cell state.
LSTM_OUTPUT = re.compile(r"tanh\s*\(?\s*C_\{?t\b")


def _texts(item: dict):
    for key in ("correct", "wrong", "statements"):
        for entry in item.get(key, ()):
            yield entry if isinstance(entry, str) else entry["text"]


def test_no_concept_option_prints_the_lstm_output_product():
    printed = [(item["id"], text) for item in yaml.safe_load(CONCEPTS.read_text()) for text in _texts(item)
               if LSTM_OUTPUT.search(text)]  # fmt: skip
    assert not printed, printed


def test_an_optimizer_step_the_tolerance_cannot_tell_from_its_move_is_degenerate():
    q = REGISTRY["opt.rmsprop_steps"]
    p = {"w": [0.8, -0.6], "g1": [0.5, 1.0], "g2": [0.4, -1.2], "lr": 0.01, "alpha": 0.9}
    moved = q.answer(p)
    assert any(0.01 * abs(b) > MOVE_SHARE * abs(b - a) for a, b in zip(p["w"], moved)), moved
    assert "how far w moved" in degenerate(q, p, moved)
    far = {**p, "g2": [0.4, 1.2], "lr": 0.2}  # no sign flip: each entry moves twice the same way
    assert "how far w moved" not in degenerate(q, far, q.answer(far))


# ---------------------------------------------------------------- the sixth audit's unfair pairs


def test_an_lstm_step_from_a_zero_state_is_degenerate():
    q = REGISTRY["lstm.cell_update"]
    p = {"x": 0.5, "h_prev": 0.0, "c_prev": 1.0, "W_ih": [0.9, -0.8, 0.8, 0.3], "W_hh": [0.2, -0.05, -0.5, 0.1],
         "b": [0.05, 0.05, 0.1, 0.2]}  # fmt: skip
    assert "C_{t-1} is 0 or +-1" in degenerate(q, p, [0.9, 0.5])
    fair = {**p, "h_prev": -0.4, "c_prev": 1.4}
    assert degenerate(q, fair, q.answer(fair)) == ""


def test_a_bptt_output_layer_with_a_zero_or_a_one_is_degenerate():
    q = REGISTRY["rnn.bptt_param_grads"]
    p = {"x": [0.6, -0.3], "y": [0, 1], "h0": 0.2, "u": 0.5, "w": -0.7, "b": 0.1, "V": [0.4, -0.5],
         "c": [0.2, -0.3], "target": "all"}  # fmt: skip
    assert degenerate(q, p, [0.13, 0.27, 0.31]) == ""
    assert "b_y has a 0" in degenerate(q, {**p, "c": [0.0, -0.3]}, [0.13, 0.27, 0.31])
    assert "W_hy a +-1" in degenerate(q, {**p, "V": [1.0, -0.5]}, [0.13, 0.27, 0.31])


def test_equal_gradient_entries_are_degenerate():
    q = REGISTRY["opt.rmsprop_steps"]
    p = {"w": [0.8, -0.6], "g1": [-0.6, -0.6], "g2": [0.4, 1.2], "lr": 0.2, "alpha": 0.9}
    assert "entries are equal" in degenerate(q, p, q.answer(p))
