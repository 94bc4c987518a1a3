"""Every lab's parameters move by the student's own adam, counted where it runs
(seqlab/student/updates.py): one call per tensor per step at the lab's settings, and params_out
what the last calls returned. The losses cannot see a late swap in a chaotic float32 run; the
count does, in the grader and in the student's public test, in the same words.

Unmarked tests run the character lab a few steps in this process (about a second in all); the
task labs' few steps and the graded swaps are bank tests.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from seqlab.labs import LABS
from seqlab.reference import load_reference
from seqlab.student.callees import contract_signature
from seqlab.student.updates import ADAM_SIGNATURE, UpdateTap, expected_setting, update_problem
from tests.labs.test_lab_tasks import compiled
from tests.labs.test_protocol_checked import CHAIN_RULES, SWAP_RULES, _base, _graded, swapped

PUBLIC = Path(__file__).resolve().parents[2] / "public_tests"
# The character lab's few steps take a fraction of a second; the task labs' are seconds each at
# their grading sizes (in the banks).
TRAINED = [
    pytest.param(f, marks=() if f == "rnn.train_char_rnn" else pytest.mark.bank)
    for f in sorted(f for f in LABS if f.split(".")[1].startswith("train_"))
]


@pytest.fixture(scope="module")
def public_labs():
    sys.path.insert(0, str(PUBLIC))  # _labs imports _updates and _check as the student's tests do
    try:
        spec = importlib.util.spec_from_file_location("public_labs_updates", PUBLIC / "_labs.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(PUBLIC))


@pytest.fixture(autouse=True)
def _no_rules_file(monkeypatch):
    """No tests/_rules.json in this checkout (the release writes it): nothing is forbidden."""
    monkeypatch.syspath_prepend(str(PUBLIC))
    forbidden = importlib.import_module("_forbidden")
    monkeypatch.setattr(forbidden, "rules", lambda: {"functions": [], "labs": list(LABS), "forbidden": {}})


def _check(public_labs, function, train):
    public_labs.check_adam_steps(function, train, optimizers=load_reference().optimizers)


def test_the_tap_binds_adam_as_the_contract_declares_it():
    assert contract_signature("optimizers.adam") == ADAM_SIGNATURE


@pytest.mark.parametrize("function", TRAINED)
def test_the_reference_moves_every_tensor_by_adam(public_labs, function):
    _check(public_labs, function, compiled(_base(function)))


@pytest.mark.parametrize("rule", sorted(SWAP_RULES))
@pytest.mark.parametrize("function", TRAINED)
def test_the_public_adam_steps_test_refuses_in_the_graders_words(public_labs, function, rule):
    """A loop that follows the protocol for two steps and then moves by another rule: refused,
    in update_problem's words (the grader's), whatever the rule."""
    base = _base(function)
    train = compiled(dataclasses.replace(base, source=swapped(base.source, 2, rule)))
    with pytest.raises(pytest.fail.Exception) as failed:
        _check(public_labs, function, train)
    message = str(failed.value)
    assert message.startswith(f"{function}: ") and "takes one step of your adam per training step" in message
    said = {"sgd": "your adam was called", "adam-lr": "calls had lr=", "adam-betas": "betas=(0.8, 0.99)"}[rule]
    assert said in message, message


def test_the_rule_in_words():
    w = torch.zeros(2)
    tally = {"calls": 6, "settings": {expected_setting(0.01): 6}, "last": [w.clone(), torch.ones(3)]}
    params = {"a": w, "b": torch.ones(3)}
    assert update_problem("m.train_x", tally, params, 3, 0.01) is None
    moved = update_problem("m.train_x", tally, {"a": w + 1, "b": torch.ones(3)}, 3, 0.01)
    assert moved and moved.startswith("m.train_x: params_out['a'] is not what your adam returned at the last step")
    assert "each of the 2 tensors takes one step of your adam per training step (3 steps: 6 calls)" in moved
    never = update_problem("m.train_x", {**tally, "calls": 0}, params, 3, 0.01)
    assert never and never.startswith("m.train_x: your adam was not called by its name during the run;")
    short = update_problem("m.train_x", {**tally, "calls": 4}, params, 3, 0.01)
    assert short and short.startswith("m.train_x: your adam was called 4 times;")
    other = update_problem(
        "m.train_x", {**tally, "settings": {"lr=0.02, betas=(0.9, 0.999), eps=1e-08": 6}}, params, 3, 0.01
    )
    assert (
        other
        and "6 of your adam's 6 calls had lr=0.02" in other
        and "at lr=0.01, betas=(0.9, 0.999), eps=1e-08" in other
    )
    broken = update_problem("m.train_x", {**tally, "unchained": 2}, params, 3, 0.01)
    assert broken and broken.startswith(
        "m.train_x: 2 of your adam's 6 calls took weights that are not what your adam returned for them"
    )


def _fake_adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    return w - lr * dw, {"step": state.get("step", 0) + 1}


def _run(tap, step_rule, steps=3):
    """Two tensors trained ``steps`` steps through ``tap``; ``step_rule(w, dw, state)`` is the loop's
    update, given the counted adam as ``tap.wrapper``."""
    params = {"a": torch.ones(2), "b": torch.zeros(3)}
    states = {k: {} for k in params}
    for _ in range(steps):
        for k, w in params.items():
            params[k], states[k] = step_rule(w, torch.full_like(w, 0.5), states[k])
    return params


def test_the_chain_counts_weights_moved_by_anything_but_adam():
    """Honest loops keep the chain (a new tensor, a detached copy, an adam that writes in place);
    a loop that throws adam's weights away for its own step breaks it at every later call."""
    honest = UpdateTap(_fake_adam, keep=2)
    out = _run(
        honest, lambda w, dw, s: (lambda r: (r[0].detach().clone().requires_grad_(), r[1]))(honest.wrapper(w, dw, s))
    )
    assert honest.report()["unchained"] == 0
    assert update_problem("m.train_x", honest.report(), out, 3, 1e-3) is None

    def in_place(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        w.sub_(lr * dw)
        return w, {"step": state.get("step", 0) + 1}

    writes = UpdateTap(in_place, keep=2)
    _run(writes, writes.wrapper)
    assert writes.report()["unchained"] == 0

    thrown = UpdateTap(_fake_adam, keep=2)
    out = _run(thrown, lambda w, dw, s: (w - 0.05 * dw, thrown.wrapper(w, dw, s)[1]))
    assert thrown.report()["calls"] == 6 and thrown.report()["unchained"] == 4  # every call after the first step
    assert "took weights that are not what your adam returned" in update_problem(
        "m.train_x", thrown.report(), out, 3, 1e-3
    )


def test_a_run_gone_to_nan_keeps_its_chain():
    """NaN is unequal to itself; a diverged run is the losses' to name, not the chain's."""
    tap = UpdateTap(lambda w, dw, state, **_: (w * float("nan"), state), keep=1)
    w = torch.ones(2)
    for _ in range(3):
        w, _ = tap.wrapper(w, w, {})
    assert tap.report()["unchained"] == 0


@pytest.mark.parametrize("rule", sorted(CHAIN_RULES))
def test_the_public_test_names_a_broken_chain(public_labs, rule, monkeypatch):
    """The character lab's loop that keeps adam's count but moves by SGD from its second step:
    the public test refuses it in the grader's words."""
    base = _base("rnn.train_char_rnn")
    train = compiled(dataclasses.replace(base, source=swapped(base.source, 1, rule)))
    with pytest.raises(pytest.fail.Exception) as failed:
        _check(public_labs, "rnn.train_char_rnn", train)
    assert "took weights that are not what your adam returned for them the step before" in str(failed.value)
    if rule == "launder":  # and the chain alone: without it, the laundered loop passes
        import _updates

        monkeypatch.setattr(_updates.UpdateTap, "_returned_before", lambda self, arguments: True)
        _check(public_labs, "rnn.train_char_rnn", train)


def test_the_tap_reads_arguments_by_exact_type_only():
    """A float subclass for lr is not read (its methods are the student's): it is said so."""

    class Sly(float):
        def __repr__(self):
            raise AssertionError("the tap ran the student's code")

    tap = UpdateTap(lambda w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8: (w - lr * dw, {}), keep=1)
    tap(torch.ones(2), torch.ones(2), {}, lr=Sly(0.1))
    tap(torch.ones(2), torch.ones(2), {}, 0.1, [0.9, 0.999])
    report = tap.report()
    assert report["calls"] == 2 and len(report["last"]) == 1
    assert report["settings"] == {
        "lr, betas or eps that are not plain Python numbers": 1,
        expected_setting(0.1): 1,
    }


@pytest.mark.parametrize("function", TRAINED)
def test_returning_the_initial_parameters_is_named(public_labs, function):
    """An honest slip the losses cannot see (they are the protocol's): the update rule names it."""
    train = compiled(_base(function))

    def returns_initial(**inputs):
        sent = _copy(inputs["params"])
        _, losses = train(**inputs)
        return sent, losses

    with pytest.raises(pytest.fail.Exception) as failed:
        _check(public_labs, function, returns_initial)
    assert "is not what your adam returned at the last step" in str(failed.value)


def _copy(tree):
    return {k: _copy(v) for k, v in tree.items()} if isinstance(tree, dict) else tree.clone()


@pytest.mark.bank  # one sandboxed grading each, ~20 s: the swap the losses cannot see
@pytest.mark.parametrize("rule", sorted([*SWAP_RULES, *CHAIN_RULES]))
def test_a_graded_reverser_that_swaps_late_scores_nothing_for_learning(tmp_path, rule):
    """The reverser's float32 run is chaotic from about step 60: a swap at step 100 stays inside
    the replay's widened bounds, and the count of adam's steps refuses it."""
    function = "transformer.train_reverser"
    base = _base(function)
    variant = dataclasses.replace(base, source=swapped(base.source, 100, rule))
    _, tests = _graded(tmp_path, variant, function)
    assert tests and all(t.score == 0 for t in tests), [(t.name, t.score, t.output[:300]) for t in tests]
    assert all("takes one step of your adam per training step" in t.output for t in tests), [
        t.output[:400] for t in tests
    ]


def test_the_tally_travels_as_the_grader_checks_it():
    """What the tap reports passes the check of the child's answers, and nothing else does."""
    from seqlab.student.answers import updates_are_plain

    tap = UpdateTap(lambda w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8: (w - lr * dw, {}), keep=2)
    tap(torch.ones(2), torch.ones(2), {})
    assert updates_are_plain(tap.report()) and updates_are_plain({})
    assert not updates_are_plain({**tap.report(), "calls": True})
    assert not updates_are_plain({**tap.report(), "last": [[1.0]]})


def test_the_loop_gets_a_plain_function_whose_tally_it_cannot_write():
    """What the lab's code calls as adam holds no counter of its own: ``adam.calls = 10**6`` or
    ``adam.last.append(w)`` from the loop would change nothing the grader reads."""
    tap = UpdateTap(lambda w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8: (w - lr * dw, {}), keep=1)
    given = tap.wrapper
    assert not any(hasattr(given, name) for name in ("calls", "settings", "last", "report"))
    given.calls = 10**6  # a function's own attribute: not the tally
    given(torch.ones(2), torch.ones(2), {})
    assert tap.report()["calls"] == 1
