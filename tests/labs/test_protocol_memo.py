"""The protocol's replay of a task instance is computed once per instance in a process
(seqlab.labs.replay.protocol_run): the same instance gives the same tensors without a second
reference training, and any change to what the replay reads is another instance."""

from __future__ import annotations

import pytest
import torch

from seqlab.labs import LABS, replay
from seqlab.labs.replay import inputs_digest, protocol_run

TASK_LABS = [f for f, lab in LABS.items() if not hasattr(lab.module(), "reference_run")]


def _short(function: str, seed: int = 3) -> dict:
    child_inputs, _ = LABS[function].module().draw_task(seed)
    return {**child_inputs, "steps": 2}  # two steps: the memo, not the training, is under test


@pytest.mark.parametrize("function", TASK_LABS)
def test_an_instance_is_replayed_once_and_each_caller_gets_its_own_copy(function, monkeypatch):
    inputs = _short(function)
    first_want, first_drift = protocol_run(function, inputs)
    calls = []
    monkeypatch.setattr(replay, "whole_run", lambda *a: calls.append(a) or torch.zeros(2))
    want, drift = protocol_run(function, inputs)
    assert not calls, "the same instance was replayed again"
    assert torch.equal(want, first_want) and torch.equal(drift, first_drift)
    want.add_(1.0)  # a caller that changes its copy leaves the kept one as it was
    assert torch.equal(protocol_run(function, inputs)[0], first_want)


def test_what_the_replay_reads_makes_the_instance():
    function = TASK_LABS[0]
    inputs = _short(function)
    key = inputs_digest(function, inputs)
    assert inputs_digest(function, _short(function)) == key  # drawn again: the same instance
    assert inputs_digest(function, {**inputs, "lr": float(inputs["lr"]) * 2}) != key
    assert inputs_digest(function, {**inputs, "steps": 3}) != key
    assert inputs_digest(TASK_LABS[1], inputs) != key
    params = {k: v.clone() for k, v in inputs["params"].items()}
    name = next(iter(params))
    params[name].view(-1)[0] += 1e-6
    assert inputs_digest(function, {**inputs, "params": params}) != key
    gen = torch.Generator()
    gen.set_state(inputs["generator"].get_state())
    torch.rand(1, generator=gen)  # the generator one draw further on
    assert inputs_digest(function, {**inputs, "generator": gen}) != key
