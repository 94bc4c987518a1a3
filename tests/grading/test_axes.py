"""A wrong length said by the case's sizes (seqlab.grading.axes): said for a length along one axis
that is another size of the case, or a crash on two of its sizes; silent where the numbers are
not the case's sizes or where more than one axis differs."""

from __future__ import annotations

import pytest
import torch

from seqlab.grading.axes import WRONG_AXIS, crash_note, shape_note, sizes_named
from seqlab.grading.checks import NotGradable

SIZES = {"B": 2, "T": 6, "D": 3, "H": 4, "dtype": torch.float64}


def test_a_loop_over_the_batch_is_said_by_its_sizes():
    # gru_forward looping over x.shape[0]: hs (B, B, H) where (B, T, H) belongs
    note = shape_note(torch.zeros(2, 2, 4), torch.zeros(2, 6, 4), SIZES)
    assert "along axis 1 it has B = 2 entries where T = 6 belongs" in note and WRONG_AXIS in note


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ((2, 7, 4), (2, 6, 4)),  # 7 is no size of the case (h0 included, say): nothing to say
        ((6, 2, 4), (2, 6, 4)),  # two axes differ: a permutation, which diagnose names itself
        ((2, 6, 4), (2, 6, 4)),  # the right shape
        ((2, 6), (2, 6, 4)),  # another number of axes
    ],
)
def test_silent_where_the_sizes_do_not_say_it(actual, expected):
    assert shape_note(torch.zeros(actual), torch.zeros(expected), SIZES) == ""


def test_two_sizes_of_one_value_are_both_named():
    note = shape_note(torch.zeros(2, 2), torch.zeros(2, 6), {"B": 2, "H": 2, "T": 6})
    assert "B or H = 2" in note


def test_a_broadcast_crash_is_said_by_its_sizes():
    # embed_tokens with T = len(tokens), which is B: pe[:B] meets the (B, T, d) embedding
    message = "RuntimeError: The size of tensor a (5) must match the size of tensor b (3) at non-singleton dimension 1"
    note = crash_note(message, {"B": 3, "T": 5, "V": 11, "d": 8})
    assert "5 is T and 3 is B" in note and WRONG_AXIS in note
    assert crash_note(message, {"B": 4, "T": 7}) == ""  # not the case's sizes


def test_an_index_past_a_size_is_said_by_it():
    message = "IndexError: index 1 is out of bounds for dimension 1 with size 1"
    note = crash_note(message, {"B": 3, "T": 1, "D": 4, "H": 2})
    assert "dimension 1 has size T = 1" in note and "B or D or H" in note
    assert crash_note("IndexError: index 1 is out of bounds for dimension 1 with size 9", {"T": 1}) == ""


def test_the_note_is_added_to_the_failure_of_a_crash():
    with pytest.raises(NotGradable) as failure, sizes_named({"B": 3, "T": 5}):
        raise NotGradable("f: RuntimeError: The size of tensor a (5) must match the size of tensor b (3) at dim 1")
    assert "5 is T and 3 is B" in failure.value.message
    with pytest.raises(NotGradable) as failure, sizes_named({"B": 3, "T": 5}):
        raise NotGradable("f: ValueError: something else")
    assert failure.value.message == "f: ValueError: something else"
