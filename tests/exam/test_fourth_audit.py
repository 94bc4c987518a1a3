"""The fourth blind audit's unfair pair and its low findings that a draw rule now refuses: a token
with a zero feature in the attention projection (b5: x_2 = (0.5, 0) took half the multiply-adds of
k_2 and v_2 away), two equal logits in the cross-entropy item (one exponential fewer on two papers
of three) and x_1 = x_2 in the BPTT item (one product serves twice)."""

from __future__ import annotations

from seqlab.exam.bank import load_bank
from seqlab.exam.lint_draws import degenerate
from seqlab.exam.model import REGISTRY

load_bank()


def test_a_token_with_a_zero_feature_is_degenerate():
    q = REGISTRY["attn.qkv_projection"]
    p = {"X": [[0.7, -1.1], [0.5, 0.0]], "W_Q": [[0.3, 0.2], [-0.4, 0.6]], "W_K": [[0.5, -0.2], [0.1, 0.4]],
         "W_V": [[0.8, 0.3], [-0.6, 0.9]]}  # fmt: skip
    zero = p
    assert "a token has a zero feature" in degenerate(q, zero, [0.0, 0.0])


def test_equal_logits_are_degenerate():
    q = REGISTRY["rnn.ce_loss"]
    assert "two logits are equal" in degenerate(q, {"logits": [0.4, 0.4, -1.2], "target": 1}, 1.0)
    assert degenerate(q, {"logits": [0.4, 0.3, -1.2], "target": 1}, 1.0) == ""


def test_equal_inputs_in_the_bptt_item_are_degenerate():
    q = REGISTRY["rnn.bptt_param_grads"]
    p = {"x": [0.6, 0.6], "y": [0, 1], "h0": 0.2, "u": 0.5, "w": -0.7, "b": 0.1, "V": [0.4, -0.5], "c": [0.2, -0.3],
         "target": "all"}  # fmt: skip
    assert "x_1 = x_2" in degenerate(q, p, [0.13, 0.27, 0.31])
    assert degenerate(q, {**p, "x": [0.6, -0.3]}, [0.13, 0.27, 0.31]) == ""


def test_the_rules_hold_on_every_draw_of_a_class():
    """Drawn, the exam never shows them (draws.draw redraws a degenerate draw)."""
    from seqlab.exam.examfile import load_exam
    from seqlab.exam.variants import make_instance
    from seqlab.paths import DEFAULT_EXAM

    exam = load_exam(DEFAULT_EXAM)
    for n in range(40):
        for v in make_instance(exam, f"s{n:03d}").variants:
            if v.id == "attn.qkv_projection":
                assert all(x != 0 for row in v.params["X"] for x in row), v.params
            elif v.id == "rnn.ce_loss":
                assert len(set(v.params["logits"])) == 3, v.params
            elif v.id == "rnn.bptt_param_grads":
                assert len(set(v.params["x"])) == len(v.params["x"]), v.params
