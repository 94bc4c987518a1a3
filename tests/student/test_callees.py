"""Callees: the reference's own calls to other contract functions, recorded; stand-ins that
answer only those, so a bug in a callee is charged once, to the callee."""

from __future__ import annotations

import time
import weakref

import pytest
import torch

from seqlab.student.budget import time_budget
from seqlab.student.callees import CalleeSession, record_callees


def _transformer_inputs(gen):
    E, F = 4, 6
    attn = {k: torch.randn(E, E, generator=gen, dtype=torch.float64) for k in ("W_q", "W_k", "W_v", "W_o")}
    attn.update({k: torch.randn(E, generator=gen, dtype=torch.float64) for k in ("b_q", "b_k", "b_v", "b_o")})
    params = {
        "self_attn": attn,
        "ffn": {
            "W1": torch.randn(F, E, generator=gen, dtype=torch.float64),
            "b1": torch.zeros(F, dtype=torch.float64),
            "W2": torch.randn(E, F, generator=gen, dtype=torch.float64),
            "b2": torch.zeros(E, dtype=torch.float64),
        },
        "norm1": {"weight": torch.ones(E, dtype=torch.float64), "bias": torch.zeros(E, dtype=torch.float64)},
        "norm2": {"weight": torch.ones(E, dtype=torch.float64), "bias": torch.zeros(E, dtype=torch.float64)},
    }
    return torch.randn(2, 3, E, generator=gen, dtype=torch.float64), params


TOLERANCES = {"float64": (1e-7, 1e-9), "float32": (1e-4, 1e-5)}


def test_recording_holds_the_references_own_calls_in_order_and_nothing_deeper():
    from seqlab.reference import load_reference

    x, params = _transformer_inputs(torch.Generator().manual_seed(0))
    calls = record_callees(load_reference(), "transformer.encoder_block", (x, params, 2), {})
    assert [c["callee"] for c in calls] == [
        "attention.multi_head_attention",
        "transformer.layer_norm",
        "transformer.feed_forward",
        "transformer.layer_norm",
    ]
    assert set(calls[0]["arguments"]) == {"query", "key", "value", "params", "num_heads", "mask"}
    assert record_callees(load_reference(), "transformer.layer_norm", (x, x[0, 0], x[0, 0]), {}) == []


def test_recording_stops_at_its_size_budget():
    from seqlab.reference import load_reference

    x, params = _transformer_inputs(torch.Generator().manual_seed(0))
    calls = record_callees(load_reference(), "transformer.encoder_block", (x, params, 2), {}, size_bytes=1)
    assert calls == []


def _session(*entries):
    return CalleeSession(
        [{"callee": "rnn.rnn_cell", "arguments": args, "result": result} for args, result in entries], TOLERANCES
    )


def _cell_args(value: float):
    x = torch.full((1, 2), value, dtype=torch.float64)
    return {
        "x": x,
        "h_prev": x.clone(),
        "W_xh": torch.eye(2, dtype=torch.float64),
        "W_hh": torch.eye(2, dtype=torch.float64),
        "b_h": torch.zeros(2, dtype=torch.float64),
    }


def test_stand_in_answers_recorded_calls_in_order_and_runs_the_students_own_code_otherwise():
    own_calls = []

    def own(*args, **kwargs):
        own_calls.append(args)
        return "own"

    session = _session((_cell_args(1.0), "first"), (_cell_args(2.0), "second"), (_cell_args(3.0), "third"))
    cell = session.stand_in("rnn.rnn_cell", own)
    a1, a2, a3 = (tuple(_cell_args(v).values()) for v in (1.0, 2.0, 3.0))
    assert cell(*a2) == "second"  # fewer calls: the first recorded one is skipped...
    assert cell(*a1) == "own"  # ...and is gone: no going back in the sequence
    assert cell(*a2) == "second"  # a repeat of a matched call gets the same answer
    assert cell(*tuple(_cell_args(3.0 + 1e-12).values())) == "third"  # within the float64 tolerance
    assert cell(*tuple(_cell_args(9.0).values())) == "own"  # a call the reference never made
    x, h, W_xh, W_hh, b_h = a3
    assert cell(x, h, W_xh=W_xh, W_hh=W_hh, b_h=b_h) == "third"  # keywords bind like positions
    assert cell(*a1[:2]) == "own"  # does not bind: the student's own
    session.close()
    assert cell(*a3) == "own"  # expired with its call: a kept stand-in hands out nothing
    assert len(own_calls) == 4


class _Spent(BaseException):
    pass


def _busy(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_a_time_budget_ends_the_block_and_leaves_no_alarm_behind():
    with pytest.raises(_Spent), time_budget(0.05, _Spent):
        _busy(5)
    _busy(0.2)  # no repeat of the alarm after the block


# Python prints and drops an exception raised in a weakref callback: the alarm repeats.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_time_budget_alarm_dropped_in_a_weakref_callback_strikes_again():
    class Thing:
        pass

    started = time.monotonic()
    with pytest.raises(_Spent), time_budget(0.05, _Spent):
        thing = Thing()
        _ref = weakref.ref(thing, lambda _: _busy(0.2))  # the first alarm lands in here
        del thing
        _busy(5)
    assert time.monotonic() - started < 1
