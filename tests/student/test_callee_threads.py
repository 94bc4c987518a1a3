"""The recording of a function's callees holds its own thread's calls only.

The parent runs the reference in other threads while it records (a lab's replay computed while
the child trains, seqlab.labs.ahead, can outlive a lab whose student function failed at once).
The recorders sit in the reference's shared modules, so another thread's calls passed through
them: its arguments entered the recording and its depth counter hid this thread's calls. An
honest selective_scan over a stub linear_scan then lost tests at random under load, its own stub
running where the recorded result should have been handed out (seen in a class crosscheck).
"""

from __future__ import annotations

import threading

import torch

from seqlab.reference import load_reference
from seqlab.student.callees import record_callees

QUALNAME = "selective_scan.selective_scan"


def _inputs(seed: int) -> tuple[tuple, dict]:
    g = torch.Generator().manual_seed(seed)
    B, T, D, N = 2, 7, 3, 4
    u, delta = torch.randn(B, T, D, generator=g), torch.rand(B, T, D, generator=g)
    A = -torch.rand(D, N, generator=g)
    Bm, C = torch.randn(B, T, N, generator=g), torch.randn(B, T, N, generator=g)
    return (u, delta, A, Bm, C), {}


def test_another_threads_reference_calls_never_enter_the_recording():
    reference = load_reference()
    args, kwargs = _inputs(0)
    alone = record_callees(reference, QUALNAME, args, kwargs)
    assert [e["callee"] for e in alone] == ["selective_scan.discretize", "selective_scan.linear_scan"]

    stop = threading.Event()
    other_args, other_kwargs = _inputs(1)

    def busy() -> None:  # the reference's own calls, through the same modules, without a pause
        while not stop.is_set():
            reference(QUALNAME)(*other_args, **other_kwargs)

    thread = threading.Thread(target=busy, daemon=True)
    thread.start()
    try:
        for _ in range(300):
            got = record_callees(reference, QUALNAME, args, kwargs)
            assert [e["callee"] for e in got] == [e["callee"] for e in alone]
            for mine, want in zip(got, alone):
                assert all(torch.equal(mine["arguments"][k], v) for k, v in want["arguments"].items() if v is not None)
    finally:
        stop.set()
        thread.join()
