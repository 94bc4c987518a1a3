"""The fifth blind audit's giveaway and unfair pair: a concept option that printed the output
gate's product (tanh C_t, which the LSTM step item asks the student to recall), and two optimizer
steps with a small learning rate, where 1% of w_2 was 7-12% of how far w moved (a wrong update
scored half on that paper only)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from seqlab.exam.bank import load_bank
from seqlab.exam.lint_draws import MOVE_SHARE, degenerate
from seqlab.exam.model import REGISTRY

load_bank()
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
