"""No answers in the child before they are earned: the isolated runner keeps the reference's
recorded callee results in the parent and sends one only when the student's code makes that call
(seqlab/student/callees.py). Every frame the parent sends the child is read here, on a real child
process, and compared with the recording."""

from __future__ import annotations

import pytest
import torch

from seqlab.reference import load_reference
from seqlab.student import open_submission
from seqlab.student.isolated import codec
from tests.attacks.blind_integrity_bank import HONEST, Blind, build

T = 5  # time steps: the reference calls rnn_cell once per step


def _inputs():
    gen = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=gen, dtype=torch.float64)  # noqa: E731
    return (r(2, T, 3), r(2, 4), r(4, 3), r(4, 4), r(4))


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _tensors(item)


def _holds(frame, result):
    return any(t.shape == result.shape and torch.equal(t, result) for t in _tensors(frame))


def _frames_sent(monkeypatch, submission):
    """The messages the parent encodes for the child during one rnn_forward call, in order."""
    sent = []
    encode = codec.encode

    def spy(message, **envelope):
        sent.append(message)
        return encode(message, **envelope)

    with open_submission(submission, load_reference(), isolated=True) as student:
        student.load_errors  # noqa: B018  (loaded before the spy: the load request is not the call's)
        recording = student.recording("rnn.rnn_forward", _inputs(), {})
        monkeypatch.setattr(codec, "encode", spy)
        outcome = student.run("rnn.rnn_forward", _inputs())
        monkeypatch.setattr(codec, "encode", encode)
    return sent, recording, outcome


@pytest.mark.bank
@pytest.mark.slow
def test_the_call_carries_no_recorded_result_and_each_answer_follows_its_call(monkeypatch, tmp_path):
    sent, recording, outcome = _frames_sent(monkeypatch, HONEST)
    results = [entry["result"] for entry in recording]
    assert len(results) == T
    request, answers = sent[0], sent[1:]
    assert request["op"] == "call" and request["callees"] == ["rnn.rnn_cell"] and "recording" not in request
    assert not any(_holds(request, result) for result in results)
    # one answer per call the student's code made, each the result of that step only
    assert [a["op"] for a in answers] == ["answer"] * T and all(a["found"] for a in answers)
    for step, answer in enumerate(answers):
        assert torch.equal(answer["result"], results[step])
        assert not any(_holds(answer, later) for later in results[step + 1 :])
    assert torch.equal(outcome.value, torch.stack(results, 1))


@pytest.mark.bank
@pytest.mark.slow
def test_a_caller_that_makes_no_call_is_sent_no_result(monkeypatch, tmp_path):
    reads_ahead = Blind(
        "makes-no-call",
        "oracle",
        "rnn.rnn_forward",
        "def rnn_forward(x, h0, W_xh, W_hh, b_h):\n"
        "    return torch.zeros(x.shape[0], x.shape[1], h0.shape[-1], dtype=x.dtype)\n",
    )
    sent, recording, _ = _frames_sent(monkeypatch, build(reads_ahead, tmp_path))
    assert len(sent) == 1 and sent[0]["op"] == "call"
    assert not any(_holds(sent[0], entry["result"]) for entry in recording)
