"""The structural naming of mistakes no variant lists (seqlab.grading.diagnose), on worked
examples written for it: each class is named where it holds exactly, and nothing is named where
it does not (a near miss, a wrong answer of another kind)."""

from __future__ import annotations

import pytest
import torch

from seqlab.grading.diagnose import CONFINED, diagnose
from seqlab.grading.mistakes import without_inputs
from seqlab.tolerance import Tolerance

TOL = Tolerance(atol=1e-9, rtol=1e-7)
G = torch.Generator().manual_seed(3)


def randn(*shape):
    return torch.randn(*shape, generator=G, dtype=torch.float64)


E = randn(2, 5, 4)  # (B, T, H)
SIZES = {"B": 2, "T": 5, "H": 4}


@pytest.mark.parametrize(
    ("actual", "words"),
    [
        (E * 2 / 5, ["0.4 = B/T"]),
        (E / 4**0.5, ["1/sqrt(H)"]),
        (-E, ["-1 times"]),
        (E * 1.37, ["1.37 times"]),
        (E + 0.25, ["plus a constant 0.25"]),
        (E.transpose(0, 1).contiguous(), ["permuted to dims (1, 0, 2)"]),
        (E.transpose(1, 2).reshape(2, 5, 4), ["reshaped", "reshape (or view) where a transpose"]),
        (E.flip(1), ["reversed along axis 1 (size 5: T)"]),
        (torch.cat([randn(2, 1, 4), E[:, :-1]], dim=1), ["off by one along axis 1", "one step late"]),
        (torch.cat([E[:, 1:], randn(2, 1, 4)], dim=1), ["off by one along axis 1", "one step early"]),
    ],
    ids=["B/T", "1/sqrt(H)", "sign", "plain factor", "offset", "transpose", "reshape", "reversed", "late", "early"],
)
def test_each_class_is_named(actual, words):
    said = diagnose(actual, E, TOL, SIZES)
    assert all(w in said for w in words), said


def test_a_wrong_half_is_located_not_named():
    actual = E.clone()
    actual[..., 2:] += 0.1 * randn(2, 5, 2)
    said = diagnose(actual, E, TOL, SIZES)
    assert said.startswith(CONFINED) and "axis 2 (size 4: H) only at 2..3 of 0..3" in said, said


def test_late_time_steps_located():
    actual = E.clone()
    actual[:, 3:] = randn(2, 2, 4)
    assert "axis 1 (size 5: T) only at 3..4" in diagnose(actual, E, TOL, SIZES)


@pytest.mark.parametrize(
    "actual",
    [
        E + 1e-3 * randn(2, 5, 4),  # noise: no class
        E * (1 + 1e-4 * randn(2, 5, 4)),  # almost a factor, not one
        torch.tanh(E),  # a nonlinearity missing or added: no structure of these
        E.flip(1) + 1e-4,  # reversed but also off: not "reversed"
    ],
    ids=["noise", "near factor", "tanh", "near reversal"],
)
def test_nothing_named_where_nothing_holds(actual):
    said = diagnose(actual, E, TOL, SIZES)
    assert said == "" or said.startswith(CONFINED), said


def test_a_single_number_is_named_only_by_a_ratio_of_sizes():
    loss = torch.tensor(2.3, dtype=torch.float64)
    assert "B/T" in diagnose(loss * 2 / 5, loss, TOL, SIZES)
    assert diagnose(loss * 1.37, loss, TOL, SIZES) == ""


def test_a_counter_off_by_one():
    assert "off by +1" in diagnose(3, 2, TOL, {})
    assert diagnose(7, 2, TOL, {}) == ""


def test_an_input_left_out():
    def cell(x, h, W_xh, W_hh, b_h):
        return torch.tanh(x @ W_xh.T + h @ W_hh.T + b_h)

    args = (randn(3, 2), randn(3, 4), randn(4, 2), randn(4, 4), randn(4))
    probes = without_inputs(cell, ["x", "h_prev", "W_xh", "W_hh", "b_h"], args, {})
    no_bias = torch.tanh(args[0] @ args[2].T + args[1] @ args[3].T)
    said = diagnose(no_bias, cell(*args), TOL, {}, lambda: probes)
    assert "computed with b_h = 0" in said and "left out" in said, said
    no_state = torch.tanh(args[0] @ args[2].T + args[4])
    assert "h_prev = 0" in diagnose(no_state, cell(*args), TOL, {}, lambda: probes)


def test_a_dict_entry_and_every_bias_left_out():
    def layer(x, params):
        return x @ params["W"].T + params["b_1"] + params["b_2"]

    args = (randn(3, 2), {"W": randn(4, 2), "b_1": randn(4), "b_2": randn(4)})
    probes = without_inputs(layer, ["x", "params"], args, {})
    assert "params['b_1'] = 0" in diagnose(
        args[0] @ args[1]["W"].T + args[1]["b_2"], layer(*args), TOL, {}, lambda: probes
    )
    assert "every bias = 0" in diagnose(args[0] @ args[1]["W"].T, layer(*args), TOL, {}, lambda: probes)


def test_a_diagnosis_never_raises():
    assert diagnose(object(), E, TOL, SIZES) == ""
    assert diagnose(torch.tanh(E), E, TOL, SIZES, lambda: 1 / 0) == ""


def test_a_confined_block_is_named_too():
    actual = E.clone()
    actual[..., 2:] = E[..., 2:].flip(1)  # the second half left reversed in time
    said = diagnose(actual, E, TOL, SIZES)
    assert said.startswith(CONFINED) and "only at 2..3" in said and "reversed along axis 1" in said, said


def test_a_size_of_one_that_separates_passing_from_failing_tests():
    from seqlab.grading.across import shape_note

    cases = [({"B": 1, "T": 1}, True), ({"B": 3, "T": 6}, False), ({"B": 2, "T": 12}, False), ({"B": 1, "T": 12}, True)]
    note = shape_note(cases)
    assert "B=1 pass and every test with B=2, 3 fails: look at what depends on B" in note and "T=" not in note, note
    assert shape_note([({"B": 1}, True), ({"B": 1}, False)]) == ""
    assert shape_note([({"B": 2}, True), ({"B": 3}, True)]) == ""
    assert shape_note([({"B": 2}, True), ({"B": 3}, False)]) == ""  # chance, with two tests
    dtypes = [({"B": 2, "dtype": "float64"}, True), ({"B": 2, "dtype": "float32"}, False)]
    assert "the float64 tests pass and the float32 ones fail: look at what depends on dtype" in shape_note(dtypes)


def test_integers_are_located():
    want = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])
    got = want.clone()
    got[:, 2:] = 0
    assert "axis 1 (size 4) only at 2..3 of 0..3" in diagnose(got, want, TOL, {})


def test_a_weight_transposed_two_inputs_swapped_and_an_argument_ignored():
    def cell(x, h, W_xh, W_hh, b_h, eps=1e-5):
        return torch.tanh(x @ W_xh.T + h @ W_hh.T + b_h + eps)

    args = (randn(3, 4), randn(3, 4), randn(4, 4), randn(4, 4), randn(4))
    probes = without_inputs(cell, ["x", "h_prev", "W_xh", "W_hh", "b_h", "eps"], args, {"eps": 0.5})
    want = cell(*args, eps=0.5)
    untransposed = torch.tanh(args[0] @ args[2].T + args[1] @ args[3] + args[4] + 0.5)
    assert "W_hh transposed" in diagnose(untransposed, want, TOL, {}, lambda: probes)
    swapped = cell(args[1], args[0], *args[2:], eps=0.5)
    assert "x and h_prev swapped" in diagnose(swapped, want, TOL, {}, lambda: probes)
    assert "eps = 1e-05 (its default) instead of 0.5" in diagnose(cell(*args), want, TOL, {}, lambda: probes)


@pytest.mark.parametrize(
    ("actual", "words"),
    [
        (torch.cat([randn(2, 1, 4), E], dim=1), "one item more, its first, along axis 1"),
        (E[:, :-1], "without its last item along axis 1"),
        (E[:, -1], "the last item along axis 1 (size 5: T) of the expected one: return them all"),
        (torch.stack([randn(2, 5, 4), E], dim=1), "the last item along axis 1 (size 2: B) of yours"),
    ],
    ids=["includes h0", "one short", "last only", "all instead of last"],
)
def test_the_expected_result_inside_another_shape(actual, words):
    assert words in diagnose(actual, E, TOL, SIZES)


def test_a_softmax_over_the_wrong_axis():
    scores = randn(2, 5, 4)
    said = diagnose(scores.softmax(dim=1), scores.softmax(dim=-1), TOL, SIZES)
    assert "sums to 1 along axis 1 (size 5: T), the expected one along axis 2 (size 4: H)" in said, said
    assert "sums to 1" not in diagnose(scores.softmax(dim=-1) * 0.5, scores.softmax(dim=-1), TOL, SIZES)


def test_a_mask_inverted_or_ignored():
    def masked(scores, mask=None):
        return scores if mask is None else scores.masked_fill(~mask, -1.0)

    scores, mask = randn(3, 4), torch.tensor([[True, False, True, True]] * 3)
    probes = without_inputs(masked, ["scores", "mask"], (scores,), {"mask": mask})
    want = masked(scores, mask)
    assert "mask inverted: True means may attend" in diagnose(masked(scores, ~mask), want, TOL, {}, lambda: probes)
    assert "computed with no mask" in diagnose(scores, want, TOL, {}, lambda: probes)


def test_inputs_that_go_together_used_in_each_others_place():
    """A dict for another (params_fwd for params_bwd), a group of entries for another (W_k and
    b_k for W_v and b_v), two dict entries swapped (norm1's for norm2's)."""
    from seqlab.reference import load_reference

    ref = load_reference()
    x, h0f, h0b = randn(2, 3, 2), randn(2, 4), randn(2, 4)
    fwd, bwd = ({"W_xh": randn(4, 2), "W_hh": randn(4, 4), "b_h": randn(4)} for _ in range(2))
    birnn = ref("rnn.birnn_forward")
    probes = without_inputs(birnn, ["x", "h0_fwd", "h0_bwd", "params_fwd", "params_bwd"], (x, h0f, h0b, fwd, bwd), {})
    said = diagnose(birnn(x, h0f, h0b, fwd, fwd), birnn(x, h0f, h0b, fwd, bwd), TOL, {}, lambda: probes)
    assert "params_fwd in place of params_bwd" in said, said


def test_a_variant_wrong_where_the_student_is_right_is_not_named():
    from seqlab.grading.mistakes import consistent

    right, wrong = torch.ones(3), torch.zeros(3)
    assert not consistent((right, wrong), (wrong, wrong), (right, right), TOL)  # loss right, variant's not
    assert consistent((right, wrong), (right, wrong), (right, right), TOL)


def test_values_not_finite_where_the_expected_are_are_said_with_their_kind():
    rows = torch.tensor([[0.0, 1.0], [2.0, 3.0]], dtype=torch.float64)
    said = diagnose(rows / torch.tensor([1.0, 0.0], dtype=torch.float64) * 0, rows, TOL, {})
    assert "2 of 4 values are nan where every expected value is finite" in said and "0/0" in said
    said = diagnose(torch.log(torch.exp(rows - 1e3)), rows, TOL, {})  # exp underflows to 0
    assert "-inf where every expected value is finite" in said and "log(0)" in said
    assert "finite" not in diagnose(rows + 1, rows, TOL, {}) and diagnose(rows, rows + float("nan"), TOL, {}) == ""


def test_a_bias_added_twice_is_named_and_a_weight_doubled_is_not():
    """An RNN cell with b_h added after each projection; one with W_hh doubled is not a term
    added twice (no doubled-weight change is tried), so nothing names it so."""
    x, h, W_xh, W_hh, b = randn(3, 2), randn(3, 4), randn(4, 2), randn(4, 4), randn(4)

    def cell(x, h_prev, W_xh, W_hh, b_h):
        return torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h)

    names = ["x", "h_prev", "W_xh", "W_hh", "b_h"]
    probes = without_inputs(cell, names, (x, h, W_xh, W_hh, b), {})
    expected = cell(x, h, W_xh, W_hh, b)
    twice = torch.tanh(x @ W_xh.T + b + h @ W_hh.T + b)
    assert "b_h doubled: that term is added twice" in diagnose(twice, expected, TOL, {}, lambda: probes)
    assert "doubled" not in diagnose(cell(x, h, W_xh, 2 * W_hh, b), expected, TOL, {}, lambda: probes)


def test_an_input_left_out_is_not_said_of_a_zero_answer():
    # a gradient over x's one step: with x = 0 it is 0, and so is that of a loop that skips the
    # step; a zero answer matching it says nothing about x
    def grad_w(x, d):
        return d.T @ x

    args = (randn(1, 3), randn(1, 4))
    probes = without_inputs(grad_w, ["x", "d"], args, {})
    assert "x = 0" not in diagnose(torch.zeros(4, 3, dtype=torch.float64), grad_w(*args), TOL, {}, lambda: probes)
