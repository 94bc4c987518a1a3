"""Naming the mistake behind a failed lab (seqlab/labs/slips.py): each known-wrong loop of the
recall, reverser and selective-copy labs is named by its slip, and the correct loops, the
reference's and an alternative in another style, are named nothing on five seeds.

The loops run in-process here, on the task the grading would draw, and the probes call them
again (tests/labs/test_lab_graded.py grades some of them as a submission, through the sandbox).
Unmarked tests are cheap; those that train a lab to the end are in the bank.
"""

from __future__ import annotations

import math

import pytest
import torch

from seqlab.labs import differential, recall, reverser, selective_copy, slips
from seqlab.labs.slips import Evidence, name_slip
from seqlab.reference import load_reference
from tests.labs.test_lab_tasks import LEARNS_DESPITE_ITS_SLIP, TASKS, compiled, passes, reference_function
from tests.mutants.labs_slips import NAMED_MUTANTS
from tests.mutants.labs_tasks import TASK_ALTERNATIVES, TASK_BASES

# The replay's slips whose loop still learns the task (tests/mutants/labs_slips.py): the held-out
# test passes and names nothing, and the first-steps replay names them. Unlike
# LEARNS_DESPITE_ITS_SLIP's, most keep the protocol's first loss (they differ from the update on).
STILL_LEARNS = LEARNS_DESPITE_ITS_SLIP | {
    "the readout averages the states over time",
    "the loss recomputed after the update and recorded",
    "the batch drawn without the generator",
    "the source drawn from torch's global generator",
    "the skip term D left out of the scan, the crash silenced with allow_unused",
    "a fresh Adam state at every step",
    "the loss of the updated weights recorded",
    "sequences of lag + 2 tokens drawn",
    "the mean of the losses so far recorded",
}


def evidence_of(function: str, train, seed: int) -> tuple[dict | None, Evidence | None, str]:
    """The held-out metrics, the evidence and the crash message (if any) of ``train`` on the
    task of ``seed``, its probes calling ``train`` again."""
    task = TASKS[function]
    child_inputs, heldout = task.draw_task(seed)

    def own(inputs):  # the child's call moves a copy of the generator, never the parent's
        gen = torch.Generator()
        gen.set_state(inputs["generator"].get_state())
        return {**inputs, "generator": gen}

    def probe(**overrides):
        try:
            return train(**own({**child_inputs, **overrides}))
        except Exception:
            return None

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the graded child: a worker's default team rounds otherwise
    try:
        params, losses = train(**own(child_inputs))
    except Exception as exc:  # a student's loop crashes the way the sandbox reports it
        return None, None, f"{type(exc).__name__}: {exc}"
    finally:
        torch.set_num_threads(threads)
    evidence = Evidence(child_inputs, heldout, params, losses, probe=probe, function=function)
    return task.evaluate(params, child_inputs, heldout), evidence, ""


def named(function: str, evidence: Evidence) -> str:
    return name_slip(TASKS[function].SLIPS, evidence)


# --- the rules, cheaply ---------------------------------------------------------------------------


def test_adam_from_the_initial_weights_every_step_stays_within_the_bound():
    """Adam's bound on a step, the fact FROM_INITIAL rests on: 200 steps, each from the initial
    weights with the state carried on, under gradients of every scale, end within 3.2 lr."""
    adam = load_reference().optimizers.adam
    gen = torch.Generator().manual_seed(0)
    w0, state, lr = torch.zeros(64, dtype=torch.float64), {}, 0.01
    for s in range(200):
        scale = 10.0 ** float(torch.randint(-6, 3, (), generator=gen))
        grad = torch.randn(64, generator=gen, dtype=torch.float64) * scale * (1 if s % 7 else 1e-3)
        w, state = adam(w0, grad, state, lr=lr)
        assert float((w - w0).abs().max()) <= (0.1 / math.sqrt(0.001)) * lr * (1 + 1e-9)
    assert slips.FROM_INITIAL_BOUND * lr > 3.17 * lr


def _evidence(params, sent, steps=100, lr=0.01, losses=None):
    inputs = {"params": sent, "steps": steps, "lr": lr}
    return Evidence(inputs, {}, params, losses if losses is not None else torch.ones(steps))


def test_exact_evidence_unchanged_tensors_and_the_largest_move():
    sent = {"a": torch.zeros(3), "b": {"c": torch.ones(2)}}
    same = {"a": torch.zeros(3), "b": {"c": torch.ones(2)}}
    assert name_slip([], _evidence(same, sent)).startswith("the parameters never changed")
    moved = {"a": torch.full((3,), 0.5), "b": {"c": torch.ones(2)}}
    hint = name_slip([], _evidence(moved, sent))
    assert hint.startswith("some parameters never changed") and "b.c came back" in hint
    near = {"a": torch.full((3,), 0.03), "b": {"c": torch.full((2,), 1.02)}}
    assert name_slip([], _evidence(near, sent)).startswith("each update taken from the initial weights")
    far = {"a": torch.full((3,), 0.5), "b": {"c": torch.full((2,), 0.7)}}
    assert name_slip([], _evidence(far, sent)) == ""
    nan = {"a": torch.full((3,), math.nan), "b": {"c": torch.ones(2)}}
    assert name_slip([], _evidence(nan, sent)) == ""  # an unusable return: nothing exact to go on


def test_a_probe_at_lr_zero_that_moves_the_weights_names_the_learning_rate():
    sent = {"a": torch.zeros(3)}
    far = {"a": torch.full((3,), 0.5)}
    for moved, name in ((torch.full((3,), 0.001), "learning rate ignored"), (torch.zeros(3), "")):
        evidence = Evidence({"params": sent, "steps": 100, "lr": 0.01}, {}, far, torch.ones(100))
        evidence._probe = lambda steps, lr, out=moved: ({"a": out}, torch.ones(steps))
        assert name_slip([], evidence).startswith(name) and (name or name_slip([], evidence) == "")
    evidence = Evidence({"params": sent, "steps": 100, "lr": 0.01}, {}, far, torch.ones(100))
    evidence._probe = lambda **_: ({"a": torch.full((3,), math.nan)}, torch.ones(2))
    assert name_slip([], evidence) == ""  # a NaN after a step at lr = 0 is not a step taken


def test_fits_needs_the_variant_close_and_the_reference_far():
    e = _evidence({}, {}, losses=torch.full((100,), 0.5))
    assert slips.fits(e, 0.52, 2.0) and not slips.fits(e, 0.52, 0.7) and not slips.fits(e, 0.8, 2.0)
    assert not slips.fits(e, math.nan, 2.0)
    low = _evidence({}, {}, losses=torch.full((100,), 0.015))  # an honest run's last losses
    assert not slips.fits(low, 0.012, 0.019)


def test_a_crash_in_adam_on_mismatched_sizes_names_the_shared_state():
    message = (
        "RuntimeError: The size of tensor a (16) must match the size of tensor b (48)\n"
        "  exercises/optimizers.py, line 170, in adam\n    m = beta1 * m + (1 - beta1) * dw"
    )
    assert slips.crash_hint(message).startswith("Adam state shared between parameters")
    assert slips.crash_hint(message.replace("in adam", "in gru_cell")) == ""  # a shape bug elsewhere


# The general slips (seqlab/labs/slips.py) any of these labs may be named by, a crash's included.
GENERAL = [v for v in vars(slips).values() if isinstance(v, slips.Slip)]


def slips_of(function: str) -> dict[str, object]:
    """Every slip a failed run of ``function``'s lab can be named by, by name: the general and the
    task's slips, and the differential replay's catalogue (seqlab/labs/differential.py)."""
    replayed = {k.name: k for k in differential.CATALOGUE[function][1]}
    return {**replayed, **{s.name: s for s in [*GENERAL, *TASKS[function].SLIPS]}}


def test_every_lab_but_the_characters_has_slips_and_five_named_mutants():
    for task in (recall, reverser, selective_copy):
        assert task.SLIPS and all(s.name and s.explain for s in task.SLIPS)
    for function in TASKS:
        assert sum(1 for m in NAMED_MUTANTS if m.function == function and m.hint) >= 5, function


def test_a_lab_mistake_is_declared_once_as_a_slip_that_its_mutant_names():
    """Each known-wrong loop names (``hint``) a slip its lab has, by the slip's own name, and
    every slip has a known-wrong loop that shows it: the bank test below checks that it is the
    slip reported."""
    for m in NAMED_MUTANTS:
        assert not m.hint or m.hint in slips_of(m.function), (m.id, sorted(slips_of(m.function)))
    names = [s.name for s in [*GENERAL, *(s for task in TASKS.values() for s in task.SLIPS)]]
    assert len(names) == len(set(names)), "two slips of one name: the feedback could not tell them apart"
    shown = {m.hint for m in NAMED_MUTANTS}
    assert set(names) <= shown, sorted(set(names) - shown)


# --- judged on trained loops (the bank) -----------------------------------------------------------


@pytest.mark.bank
@pytest.mark.parametrize("variant", NAMED_MUTANTS, ids=lambda v: v.id)
def test_a_known_wrong_loop_is_named_by_its_slip(variant):
    train = compiled(variant)
    for seed in (0, 1):
        metrics, evidence, crash = evidence_of(variant.function, train, seed)
        # one that may still learn the task is named all the same (in the replay's test)
        assert variant.description in STILL_LEARNS or not passes(variant.function, metrics), (seed, metrics)
        # in-process the crash is in the reference's adam, not in a student's exercises/ (the
        # sandbox's frame, which crash_hint also asks for: tests/labs/test_lab_graded.py)
        hint = slips.crash_hint(crash + "\n  exercises/optimizers.py, line 1, in adam") if crash else ""
        hint = hint or (named(variant.function, evidence) if evidence else "")
        if variant.hint and variant.description in STILL_LEARNS and passes(variant.function, metrics):
            # It learned the task all the same (a decoder that sees the next target can still
            # learn to reverse): its held-out test passes and asks for no name, and a name is
            # given only where the held-out loss shows the slip; the replay's test names it.
            assert hint == "" or hint.startswith(f"{variant.hint}: "), (seed, hint, crash)
        elif variant.hint:  # the slip it names, and no other
            assert hint.startswith(f"{variant.hint}: "), (seed, hint, crash)
        else:  # a wrong loop we cannot name: it loses its points, and no wrong name is given
            assert hint == "", (seed, hint)


@pytest.mark.bank
@pytest.mark.parametrize("variant", TASK_ALTERNATIVES + TASK_BASES, ids=lambda v: v.id)
def test_a_correct_loop_is_named_nothing(variant):
    train = compiled(variant)
    for seed in range(5):
        metrics, evidence, crash = evidence_of(variant.function, train, seed)
        assert not crash and passes(variant.function, metrics), (seed, metrics, crash)
        assert named(variant.function, evidence) == "", seed
        assert evidence.largest_move > 5 * slips.FROM_INITIAL_BOUND, seed


@pytest.mark.bank
@pytest.mark.parametrize("function", TASKS)
def test_the_reference_is_named_nothing(function):
    for seed in range(5):
        metrics, evidence, crash = evidence_of(function, reference_function(function), seed)
        assert not crash and passes(function, metrics) and named(function, evidence) == "", (seed, metrics)


def _tree_evidence(returned, reads_encoder: bool):
    """A reverser-shaped return, its probe a loss that reads the decoder and, or not, the encoder."""
    sent = {"embedding": torch.zeros(2), "encoder": {"w": torch.ones(2)}, "decoder": {"w": torch.ones(2)}}

    def probe(params, **_):
        loss = params["decoder"]["w"].sum() + (params["encoder"]["w"].sum() if reads_encoder else 0)
        return params, loss.reshape(1)

    inputs = {"params": sent, "steps": 100, "lr": 0.01, "generator": torch.Generator()}
    return Evidence(inputs, {}, returned, torch.ones(100), probe=probe)


def test_frozen_nested_dicts_are_told_from_a_decoder_that_ignores_the_encoder():
    top_only = {"embedding": torch.full((2,), 0.5), "encoder": {"w": torch.ones(2)}, "decoder": {"w": torch.ones(2)}}
    hint = name_slip(reverser.SLIPS, _tree_evidence(top_only, reads_encoder=True))
    assert hint.startswith("the nested parameters never trained") and "(decoder, encoder)" in hint
    no_encoder = {"embedding": torch.full((2,), 0.5), "encoder": {"w": torch.ones(2)}, "decoder": {"w": torch.zeros(2)}}
    hint = name_slip(reverser.SLIPS, _tree_evidence(no_encoder, reads_encoder=False))
    assert hint.startswith("the encoder never trained") and "never reaches your loss" in hint, hint
    # the evidence cannot tell an encoder cut off from one run with other weights: both are named
    assert "other weights than params['encoder']" in hint and "memory" in hint, hint
    hint = name_slip(reverser.SLIPS, _tree_evidence(no_encoder, reads_encoder=True))
    assert hint.startswith("the encoder never trained") and "left out of the update" in hint, hint
