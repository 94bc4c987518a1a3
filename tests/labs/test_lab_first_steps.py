"""The first steps of the recall, reverser and selective-copy labs replayed in the parent
(seqlab/labs/replay.py): honest loops in any style agree with the replay within its tolerance,
Adam's sign-of-gradient trap included; the slips that still learn do not, and are named.

Unmarked tests run three steps of a loop at most; the five-seed sweeps and the blind bank's
honest submissions graded through the sandbox are in the bank.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from seqlab.labs.replay import FIRST_STEPS, FIRST_STEPS_TOL, first_steps_hint, replay
from seqlab.reference import load_reference
from tests.labs.test_lab_tasks import LEARNS_DESPITE_ITS_SLIP, TASKS, compiled, reference_function
from tests.mutants.labs_slips import SLIP_MUTANTS
from tests.mutants.labs_tasks import TASK_ALTERNATIVES, TASK_BASES, TASK_MUTANTS


def first_losses(train, function: str, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``train``'s first losses on the task of ``seed`` and the replay's (the generator copied
    before the call: in-process, ``train`` advances the one it is given)."""
    child_inputs, _ = TASKS[function].draw_task(seed)
    want = replay(function, child_inputs, FIRST_STEPS)
    gen = torch.Generator()
    gen.set_state(child_inputs["generator"].get_state())
    _, losses = train(**{**child_inputs, "steps": FIRST_STEPS, "generator": gen})
    return losses.detach().to(torch.float64), want


def off(got: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    return ~((got - want).abs() <= FIRST_STEPS_TOL.atol + FIRST_STEPS_TOL.rtol * want.abs())


def sign_flipping(variant, below: float):
    """``variant`` with an adam that flips the sign of every gradient element smaller than
    ``below`` times its tensor's largest: the worst that rounding noise can do to Adam's first,
    sign-like step (an honest loop in float32 flips some of those elements at random)."""
    reference = load_reference()
    namespace = dict(vars(getattr(reference, variant.module)))
    adam = reference.optimizers.adam

    def flipped(w, dw, state, **kwargs):
        small = dw.abs() < below * dw.abs().max()
        return adam(w, torch.where(small, -dw, dw), state, **kwargs)

    # A lab imports adam inside itself (a topic that fails to load costs only its own points):
    # that import is the one replaced here.
    source = textwrap.dedent(variant.source)
    assert "    from .optimizers import adam\n" in source, "the loop no longer imports adam as the labs do"
    namespace["adam"] = flipped
    exec(source.replace("    from .optimizers import adam\n", ""), namespace)
    return namespace[variant.function.split(".")[1]]


def _mutant(description: str):
    return next(m for m in TASK_MUTANTS + SLIP_MUTANTS if m.description == description)


# --- the rules, cheaply ---------------------------------------------------------------------------


@pytest.mark.parametrize("description", sorted(LEARNS_DESPITE_ITS_SLIP))
def test_a_slip_that_still_learns_the_task_departs_from_the_replay_at_once(description):
    """Its held-out result may pass the bound; its first loss is never the protocol's."""
    variant = _mutant(description)
    for seed in (0, 1):
        got, want = first_losses(compiled(variant), variant.function, seed)
        assert bool(off(got, want)[0]), (seed, got, want)


def test_a_loss_summed_over_positions_is_named_with_its_factor():
    want = torch.tensor([2.5, 2.4, 2.3], dtype=torch.float64)
    counts = {"targets of a sequence (seq_len)": 6, "sequences in a batch (batch_size)": 32}
    hint = first_steps_hint(want * 6, want, off(want * 6, want), counts, "batch()")
    assert hint.startswith("loss summed, not averaged") and "6 times" in hint and "(seq_len)" in hint
    hint = first_steps_hint(want * 2.5, want, off(want * 2.5, want), counts, "batch()")
    assert hint.startswith("loss scaled by a constant") and "2.5 times" in hint


def test_each_first_departure_says_which_part_of_the_step():
    want = torch.tensor([2.5, 2.4, 2.3], dtype=torch.float64)
    first = want + torch.tensor([0.1, -0.2, 0.0], dtype=torch.float64)  # not one factor
    assert first_steps_hint(first, want, off(first, want), {}, "draw(g)").startswith("the first loss")
    update = want + torch.tensor([0.0, 0.1, 0.1], dtype=torch.float64)
    assert first_steps_hint(update, want, off(update, want), {}, "").startswith("the first update")
    later = want + torch.tensor([0.0, 0.0, 1e-3], dtype=torch.float64)
    hint = first_steps_hint(later, want, off(later, want), {}, "")
    assert hint.startswith("a later update") and "accumulating" in hint


@pytest.mark.parametrize("variant", TASK_BASES, ids=lambda v: v.id)
def test_the_replay_holds_against_float32_and_adams_sign_trap(variant):
    """The written-out loop in float32 agrees with the float64 replay; so does the same loop
    with every gradient element below 1e-6 of its tensor's largest flipped (rounding noise's
    worst on Adam's first step)."""
    got, want = first_losses(compiled(variant), variant.function, 0)
    assert not off(got, want).any(), (got, want)
    got, _ = first_losses(sign_flipping(variant, 1e-6), variant.function, 0)
    assert not off(got, want).any(), (got, want)


def test_gradients_that_accumulate_show_at_the_third_loss():
    variant = _mutant("gradients accumulated across steps (never zeroed)")
    got, want = first_losses(compiled(variant), variant.function, 0)
    assert off(got, want).tolist() == [False, False, True], (got, want)
    assert first_steps_hint(got, want, off(got, want), {}, "").startswith("a later update")


# --- on five seeds, and the blind bank's honest submissions graded (the bank) ----------------------


@pytest.mark.bank
@pytest.mark.parametrize("variant", TASK_ALTERNATIVES + TASK_BASES, ids=lambda v: v.id)
def test_a_correct_loop_follows_the_replay_on_five_seeds(variant):
    for seed in range(5):
        got, want = first_losses(compiled(variant), variant.function, seed)
        assert not off(got, want).any(), (seed, got, want)
        got, _ = first_losses(sign_flipping(variant, 1e-6), variant.function, seed)
        assert not off(got, want).any(), (seed, got, want)


@pytest.mark.bank
@pytest.mark.parametrize("function", TASKS)
def test_the_reference_in_float32_follows_the_replay_on_five_seeds(function):
    for seed in range(5):
        got, want = first_losses(reference_function(function), function, seed)
        assert not off(got, want).any(), (seed, got, want)
