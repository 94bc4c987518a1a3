"""Every argument of a lab function tried (seqlab/labs/variants.py): the reference on each
variant's inputs is the protocol's replay (so a right loop passes and nothing is named on it),
the graded tests exist under their names, and the two names only the variants give fire where
they must and stay silent elsewhere: losses in another dtype than the parameters, and a
character loss scaled by a constant.
"""

from __future__ import annotations

import itertools

import pytest
import torch

from seqlab.labs import differential
from seqlab.labs.variants import VARIANT_STEPS, VARIANTS, dtype_hint, replayed, variant_tests
from tests.labs.test_differential import TASKS, losses_of, small_task
from tests.labs.test_lab_tasks import compiled, reference_function
from tests.mutants import Mutant
from tests.mutants.labs import _train

CASES = [(function, name, change) for function, rows in VARIANTS.items() for name, _, change in rows]


def test_each_lab_has_its_variant_tests():
    for function in TASKS:
        tests = variant_tests(function)
        assert tests and all(name.startswith(f"test_{function.split('.')[1]}_") for name in tests), function
    assert {"lstm", "rnn"} <= {name for name, _, _ in VARIANTS["lstm_gru.train_recall"]}


@pytest.mark.bank
@pytest.mark.parametrize(("function", "name", "change"), CASES, ids=[f"{f}-{n}" for f, n, _ in CASES])
def test_the_reference_on_a_variants_inputs_is_the_protocol(function, name, change):
    """The replay a variant test holds the student's losses against, and the catalogue's
    protocol (the differential replay's), both follow the reference on the changed inputs."""
    child_inputs, _ = TASKS[function].draw_task(3)
    inputs = {**change(child_inputs), "steps": VARIANT_STEPS}
    losses = losses_of(reference_function(function), inputs)
    assert losses is not None and losses.dtype == torch.float64
    assert torch.allclose(losses.to(torch.float64), replayed(function, inputs), rtol=1e-9, atol=1e-12)
    assert [c.names for c in differential.matching(function, inputs, losses)] == [()]
    assert differential.diagnosis(function, inputs, losses) == ""


def test_losses_in_another_dtype_are_named_only_when_that_is_all():
    inputs = {"params": {"w": torch.zeros(3, dtype=torch.float64)}, "steps": 4}
    params = {"w": torch.ones(3, dtype=torch.float64)}
    fired = dtype_hint(params, torch.zeros(4, dtype=torch.float32), inputs)
    assert fired.startswith("losses not in the dtype of params: "), fired
    assert dtype_hint(params, torch.zeros(4, dtype=torch.float64), inputs) == ""  # right: nothing to say
    assert dtype_hint(params, torch.zeros(3, dtype=torch.float32), inputs) == ""  # a wrong length says more
    # the parameters in float32 too: the whole loop ran in the wrong dtype, not just the losses
    assert dtype_hint({"w": torch.ones(3)}, torch.zeros(4, dtype=torch.float32), inputs) == ""


_SCALED = Mutant(
    "rnn.train_char_rnn",
    "losses divided by the batch size too",
    _train(("losses[s] = loss / seq_len", "losses[s] = loss / (seq_len * batch_size)")),
)


@pytest.mark.bank
def test_a_character_loss_scaled_by_a_constant_is_named_so():
    child_inputs, _ = small_task("rnn.train_char_rnn")
    losses = losses_of(compiled(_SCALED), child_inputs)
    hint = differential.diagnosis("rnn.train_char_rnn", child_inputs, losses)
    assert hint.startswith("loss scaled by a constant: "), hint


def test_a_scaled_loss_is_left_to_the_first_steps_in_the_task_labs():
    """A task lab's first-steps check names the factor with its count ("loss summed, not
    averaged"): the replay does not give the same slip a second name there. And a character
    run whose ratio to the protocol moves is no constant."""
    child_inputs, _ = small_task("lstm_gru.train_recall")
    protocol = torch.tensor([2.0794, 2.07, 2.065, 2.06], dtype=torch.float64)
    assert differential.scaled("lstm_gru.train_recall", child_inputs, protocol * 8) == ""
    char_inputs, _ = small_task("rnn.train_char_rnn")
    want = torch.tensor(
        list(itertools.islice(differential.candidates("rnn.train_char_rnn", char_inputs)[0].losses(4), 4))
    )  # the replay runs on
    assert differential.scaled("rnn.train_char_rnn", char_inputs, want) == ""  # a ratio of 1
    assert differential.scaled("rnn.train_char_rnn", char_inputs, want * torch.tensor([1.0, 2.0, 3.0, 4.0])) == ""
    assert differential.scaled("rnn.train_char_rnn", char_inputs, want / 16).startswith("loss scaled by a constant")
