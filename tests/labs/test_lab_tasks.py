"""The recall, reverser and selective-copy tasks: their instances, their guard on what comes
back, and their bounds judged by the reference, known-wrong loops and alternative correct ones.

Unmarked tests are cheap (a few training steps at most). Those that train a lab to the end
(seconds each) are in the bank: the reference on twenty seeds, every mutant, every alternative.
"""

from __future__ import annotations

import math
import textwrap

import pytest
import torch

from seqlab.labs import recall, reverser, selective_copy
from seqlab.labs.tasktools import problem
from seqlab.reference import load_reference
from tests.mutants.labs_tasks import TASK_ALTERNATIVES, TASK_BASES, TASK_MUTANTS

TASKS = {
    "lstm_gru.train_recall": recall,
    "transformer.train_reverser": reverser,
    "selective_scan.train_selective_copy": selective_copy,
}


def reference_function(function: str):
    module, name = function.split(".")
    return getattr(getattr(load_reference(), module), name)


def compiled(variant):
    """The variant's ``def``, run in the reference module's namespace (its helpers by name)."""
    namespace = dict(vars(getattr(load_reference(), variant.module)))
    exec(textwrap.dedent(variant.source), namespace)
    return namespace[variant.function.split(".")[1]]


def outcome(function: str, train, seed: int) -> dict | None:
    """The held-out metrics of ``train`` on the task of ``seed``; None when it crashed."""
    task = TASKS[function]
    child_inputs, heldout = task.draw_task(seed)
    try:
        params, _ = train(**child_inputs)
    except (RuntimeError, ValueError, IndexError, KeyError, TypeError):
        return None
    return task.evaluate(params, child_inputs, heldout)


def passes(function: str, metrics: dict | None) -> bool:
    bounds = TASKS[function].THRESHOLDS
    return metrics is not None and all(metrics[k] >= bound for k, bound in bounds.items())


def nested_tensors(tree):
    if isinstance(tree, dict):
        for value in tree.values():
            yield from nested_tensors(value)
    else:
        yield tree


# --- the task instances ---------------------------------------------------------------------------


@pytest.mark.parametrize("function", TASKS)
def test_a_task_instance_per_seed_reproducible_and_the_heldout_kept_apart(function):
    task = TASKS[function]
    a_inputs, a_heldout = task.draw_task(3)
    again, _ = task.draw_task(3)
    b_inputs, _ = task.draw_task(4)
    a_first = next(nested_tensors(a_inputs["params"]))
    assert torch.equal(a_first, next(nested_tensors(again["params"])))
    assert not torch.equal(a_first, next(nested_tensors(b_inputs["params"])))
    # what travels holds no held-out data: sizes, weights and the training generator only
    assert not any(isinstance(v, torch.Tensor) and v.ndim and v.shape[0] >= 1000 for v in a_inputs.values())
    assert set(a_heldout).isdisjoint(a_inputs)
    assert all(isinstance(v, (int, float, str, dict, torch.Generator)) for v in a_inputs.values())


def test_the_recall_lag_and_the_reverser_sizes_vary_between_gradings():
    assert len({recall.draw_task(s)[0]["lag"] for s in range(12)}) > 3
    assert len({(reverser.draw_task(s)[0]["vocab"], reverser.draw_task(s)[0]["seq_len"]) for s in range(12)}) > 3


# --- what comes back ------------------------------------------------------------------------------


def _broken(params, how):
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in params.items()}
    key = next(k for k, v in out.items() if isinstance(v, torch.Tensor))
    if how == "nan":
        out[key] = torch.full_like(out[key], math.nan)
    elif how == "shape":
        out[key] = out[key][..., :1]
    elif how == "dtype":
        out[key] = out[key].double()
    elif how == "missing":
        del out[key]
    elif how == "not a tensor":
        out[key] = out[key].tolist()
    elif how == "oversized":
        out["extra"] = torch.zeros(1 << 20)
    elif how == "not a dict":
        return [out[key]]
    return out


@pytest.mark.parametrize("how", ["nan", "shape", "dtype", "missing", "not a tensor", "not a dict", "oversized"])
@pytest.mark.parametrize("function", TASKS)
def test_evaluate_scores_an_unusable_return_as_zero_and_never_raises(function, how):
    task = TASKS[function]
    child_inputs, heldout = task.draw_task(0)
    metrics = task.evaluate(_broken(child_inputs["params"], how), child_inputs, heldout)
    assert all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())
    bound = next(iter(task.THRESHOLDS))
    if how == "oversized":  # extra keys are ignored: the untrained model, which is below the bound
        assert metrics.get("chance", 1) > 0 and metrics[bound] < task.THRESHOLDS[bound]
    else:
        assert metrics[bound] == 0.0


def test_a_nan_inside_a_nested_block_is_found():
    params = reverser.initial_params(8, torch.Generator().manual_seed(0))
    params["decoder"] = dict(
        params["decoder"], ffn=dict(params["decoder"]["ffn"], b2=torch.full((reverser.E,), math.nan))
    )
    assert "['decoder']['ffn']['b2']" in problem(params, reverser.initial_params(8, torch.Generator()))


@pytest.mark.parametrize("function", TASKS)
def test_the_untrained_model_is_below_every_bound(function):
    task = TASKS[function]
    child_inputs, heldout = task.draw_task(1)
    metrics = task.evaluate(child_inputs["params"], child_inputs, heldout)
    assert not passes(function, metrics), metrics


@pytest.mark.parametrize("function", TASKS)
def test_a_few_reference_steps_keep_the_structure_and_leave_the_inputs_alone(function):
    child_inputs, _ = TASKS[function].draw_task(2)
    before = [t.clone() for t in nested_tensors(child_inputs["params"])]
    params, losses = reference_function(function)(**dict(child_inputs, steps=3))
    assert problem(params, child_inputs["params"]) is None
    assert losses.shape == (3,) and losses.dtype == before[0].dtype and bool(torch.isfinite(losses).all())
    assert all(torch.equal(a, b) for a, b in zip(before, nested_tensors(child_inputs["params"])))
    assert not any(a is b for a, b in zip(nested_tensors(params), nested_tensors(child_inputs["params"])))


def test_linear_scan_under_autograd_gives_the_loop_gradients():
    scan = load_reference().selective_scan.linear_scan
    gen = torch.Generator().manual_seed(0)
    for T in (1, 2, 5, 8, 13):
        a = torch.randn(2, T, 3, generator=gen, dtype=torch.float64, requires_grad=True)
        b = torch.randn(2, T, 3, generator=gen, dtype=torch.float64, requires_grad=True)
        h0 = torch.randn(2, 3, generator=gen, dtype=torch.float64, requires_grad=True)
        h, loop = h0, []
        for t in range(T):
            h = a[:, t] * h + b[:, t]
            loop.append(h)
        weights = torch.randn(2, T, 3, generator=gen, dtype=torch.float64)
        want = torch.autograd.grad((torch.stack(loop, 1) * weights).sum(), (a, b, h0))
        got = torch.autograd.grad((scan(a, b, h0) * weights).sum(), (a, b, h0))
        assert all(torch.allclose(g, w, atol=1e-12) for g, w in zip(got, want)), T


# --- the figures' numbers -------------------------------------------------------------------------


def _untrained(*args, **kwargs):
    params = kwargs.get("params", args[1] if len(args) > 1 and isinstance(args[1], dict) else args[0])
    return {k: v.clone() for k, v in params.items()}, torch.zeros(1)


def test_the_figures_give_the_numbers_the_notebook_plots():
    acc = recall.figures(_untrained, lags=(2, 3), kinds=("rnn", "gru"))
    assert acc["lags"] == [2, 3] and set(acc["accuracy"]) == {"rnn", "gru"}
    assert all(0 <= v < 0.6 for row in acc["accuracy"].values() for v in row)  # untrained
    child_inputs, _ = reverser.draw_task(0)
    heat = reverser.figures(child_inputs["params"], child_inputs, examples=2)
    weights = torch.tensor(heat["weights"])
    assert weights.shape == (2, child_inputs["seq_len"], child_inputs["seq_len"])
    assert torch.allclose(weights.sum(-1), torch.ones(2, child_inputs["seq_len"]), atol=1e-5)
    copy = selective_copy.figures(_untrained, lengths=(16, 64))
    assert set(copy["accuracy"]) == {"selective", "time_invariant"} and copy["lengths"] == [16, 64]
    assert all(len(v) == 2 and min(v) > 0 for v in copy["seconds"].values())


# --- the bounds, judged (the bank) ----------------------------------------------------------------


@pytest.mark.bank
@pytest.mark.parametrize("function", TASKS)
def test_the_reference_meets_the_bounds_on_twenty_seeds(function):
    failed = {}
    for seed in range(20):
        metrics = outcome(function, reference_function(function), seed)
        if not passes(function, metrics):
            failed[seed] = metrics
    assert not failed


# A decoder without its causal mask can still learn the alignment that greedy decoding needs
# (exact match 0.00 to 0.99 by task instance, seqlab/labs/reverser.py): the bound does not take
# its points, the replay of its first losses does (tests/labs/test_lab_first_steps.py).
LEARNS_DESPITE_ITS_SLIP = {"causal mask missing in the decoder"}


@pytest.mark.bank
@pytest.mark.parametrize(
    "variant", [v for v in TASK_MUTANTS if v.description not in LEARNS_DESPITE_ITS_SLIP], ids=lambda v: v.id
)
def test_a_known_wrong_loop_fails_the_bounds(variant):
    train = compiled(variant)
    for seed in (0, 1):
        metrics = outcome(variant.function, train, seed)
        assert not passes(variant.function, metrics), (seed, metrics)


@pytest.mark.bank
@pytest.mark.parametrize(
    ("variant", "seeds"),
    [*((v, 20) for v in TASK_ALTERNATIVES), *((v, 5) for v in TASK_BASES)],
    ids=lambda v: getattr(v, "id", str(v)),
)
def test_an_alternative_correct_loop_passes(variant, seeds):
    """A correct loop in another style than the reference's meets the bounds on twenty task
    instances, as the reference does, and on the first five; the written-out base of the
    mutants on five."""
    train = compiled(variant)
    for seed in range(seeds):
        metrics = outcome(variant.function, train, seed)
        assert passes(variant.function, metrics), (seed, metrics)


@pytest.mark.bank
def test_the_claims_the_rnn_and_the_time_invariant_model_stay_below_the_bounds():
    train = reference_function("lstm_gru.train_recall")
    for seed in (0, 1, 2):
        child_inputs, heldout = recall.draw_task(seed)
        rnn = dict(child_inputs, kind="rnn", params=recall.initial_params("rnn", torch.Generator().manual_seed(seed)))
        assert recall.evaluate(train(**rnn)[0], rnn, heldout)["accuracy"] < 0.4
    copy = reference_function("selective_scan.train_selective_copy")
    for seed in (0, 1):
        child_inputs, heldout = selective_copy.draw_task(seed)
        lti = dict(child_inputs, selective=False)
        assert selective_copy.evaluate(copy(**lti)[0], lti, heldout)["accuracy"] < selective_copy.THRESHOLDS["accuracy"]
