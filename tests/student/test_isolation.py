"""The isolated runner against the in-process one, and grade-all on a mixed class.

Because a bug is charged once (declared callees answer from the reference's recorded calls), mutants of different
functions do not interact: the known-wrong variants are packed into a few submissions, one
mutant per function each, and every per-test score must be identical under both runners.
"""

from __future__ import annotations

import csv
import json
import shutil
import struct
import subprocess
import sys
import zipfile
from collections import defaultdict
from pathlib import Path

import pytest
import torch

from seqlab.grading import grade_submission
from seqlab.student import codec
from seqlab.student.callees import CalleeSession, record_callees
from seqlab.student.spawn import prespawn
from tests.attacks import ATTACKS, build
from tests.attacks.channel_and_oracle import PACKS, build_pack
from tests.mutants import ROOT, all_variants, make_submission, replace_function


def packed_submissions(target: Path) -> list[Path]:
    by_function = defaultdict(list)
    for mutant in all_variants("MUTANTS"):
        by_function[mutant.function].append(mutant)
    rounds = max(len(v) for v in by_function.values())
    folders = []
    for i in range(rounds):
        folder = make_submission(target / f"packed{i}")
        for function, mutants in by_function.items():
            if i < len(mutants):
                module, name = function.split(".")
                path = folder / "exercises" / f"{module}.py"
                path.write_text(replace_function(path.read_text(), name, mutants[i].source))
        folders.append(folder)
    return folders


def _scores(result):
    return [(t.name, round(t.score, 6)) for t in result.tests]


def test_runners_agree_on_references_stubs_and_every_known_wrong_variant(tmp_path):
    stubs = tmp_path / "stubs"
    shutil.copytree(ROOT / "exercises", stubs / "exercises")
    # The callee stand-ins too: one-liner routes and honest callers over stub callees.
    stand_ins = [
        build_pack(pack, tmp_path) for pack in PACKS if pack.name in ("oracle-routes", "honest-callers-over-stubs")
    ]
    submissions = [make_submission(tmp_path / "reference"), stubs, *stand_ins, *packed_submissions(tmp_path)]
    for submission in submissions:
        prespawn()  # the child imports torch while the in-process grading runs
        fast = grade_submission(submission, isolated=False, seed=31)
        safe = grade_submission(submission, isolated=True, seed=31)
        assert _scores(fast) == _scores(safe), submission.name
    assert len(submissions) >= 5


def test_grade_all_on_a_mixed_class_loses_no_submission(tmp_path):
    """Good, broken, missing and malicious submissions, folders and zips: every one gets a row."""
    klass = tmp_path / "class"
    make_submission(klass / "good")
    broken = make_submission(klass / "broken")
    (broken / "exercises" / "optimizers.py").write_text("def sgd(:\n")
    (klass / "empty").mkdir()
    (klass / "notes.txt").write_text("not a submission")
    zipped = make_submission(tmp_path / "zipped")
    with zipfile.ZipFile(klass / "zipped.zip", "w") as archive:
        for path in (zipped / "exercises").glob("*.py"):
            archive.write(path, f"handin/exercises/{path.name}")
    with zipfile.ZipFile(klass / "evil.zip", "w") as archive:
        archive.writestr("../../escape.py", "x = 1")
    for name in ("os-exit-at-import", "write-results-json-everywhere", "subprocess-and-os-system-canary"):
        build(next(a for a in ATTACKS if a.name == name), klass)
    hostile = build_pack(next(p for p in PACKS if p.name == "state-protocol-injection"), klass).name

    out = tmp_path / "out"
    command = [sys.executable, "-m", "seqlab", "grade-all", str(klass), "--out", str(out), "--jobs", "2", "--seed", "3"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["submission"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert set(rows) == {
        "good",
        "broken",
        "empty",
        "notes.txt",
        "zipped",
        "evil",
        "os-exit-at-import",
        "write-results-json-everywhere",
        "subprocess-and-os-system-canary",
        hostile,
    }
    # Forged frames, hostile text: still a graded row, valid reports, the real score on top.
    assert rows[hostile]["status"] == "graded"
    import json
    import xml.etree.ElementTree as ET

    graded = json.loads((out / hostile / "results.json").read_text(encoding="utf-8"))
    ET.parse(out / hostile / "junit.xml")
    headline = (out / hostile / "summary.md").read_text(encoding="utf-8").splitlines()[0]
    assert headline.startswith(f"## seqlab: {graded['score']:.4g} / "), headline
    assert rows["good"]["percent"] == "100.0" and rows["zipped"]["percent"] == "100.0"
    assert rows["broken"]["status"] == "graded" and rows["broken"]["optimizers.sgd"] == "0"
    assert rows["broken"]["rnn.rnn_bptt"] == "8"
    for name in ("empty", "notes.txt", "evil"):
        assert rows[name]["status"] == "error" and rows[name]["reason"], rows[name]
    assert "unsafe path" in rows["evil"]["reason"]
    assert not (tmp_path / "escape.py").exists()
    assert float(rows["write-results-json-everywhere"]["optimizers.sgd"]) == 0
    assert (out / "class_report.html").is_file() and "Per function" in (out / "class_report.md").read_text()

    # Resumable: a second run regrades nothing; --force regrades everything.
    again = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert "already graded" in again.stdout
    assert list(csv.DictReader((out / "gradebook.csv").open())) == list(rows.values())


def test_interrupted_grade_all_leaves_a_consistent_gradebook(tmp_path):
    """Ctrl-C in the middle: the gradebook lists what finished (and the rest as pending), and a
    rerun finishes the job without regrading what was done."""
    import os
    import signal
    import time

    klass = tmp_path / "class"
    for i in range(4):
        make_submission(klass / f"s{i}")
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "seqlab",
        "grade-all",
        str(klass),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--seed",
        "1",
        "--in-process",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (out / "s0" / "status.json").exists():
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    proc.communicate(timeout=120)
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert [r["submission"] for r in rows] == ["s0", "s1", "s2", "s3"]
    done = [r for r in rows if r["status"] == "graded"]
    assert done and all(r["percent"] == "100.0" for r in done)
    assert all(r["status"] in ("graded", "pending") for r in rows), rows
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert f"{len(done)} of 4 already graded" in finished.stdout
    assert all(r["status"] == "graded" for r in csv.DictReader((out / "gradebook.csv").open()))


# --- the channel: safetensors frames in a minimal envelope ---------------------------------------


def test_frames_round_trip_plain_data_with_their_request_and_sequence():
    x = torch.randn(3, 4, dtype=torch.float64)
    message = {
        "op": "call",
        "args": [x, x[:, 1], torch.zeros(0, dtype=torch.bool)],
        "n": 10**30,
        "f": float("nan"),
        "t": (1, None, "s"),
        "dtype": torch.float32,
        "device": torch.device("cpu"),
    }
    frame = codec.encode(message, request=77, seq=3)
    (length,) = struct.unpack(">Q", frame[:8])
    request, seq, back = codec.decode(frame[8 : 8 + length])
    assert (request, seq) == (77, 3)
    assert torch.equal(back["args"][0], x) and torch.equal(back["args"][1], x[:, 1])
    assert back["args"][1].data_ptr() != back["args"][0].data_ptr()  # a view arrives as its own tensor
    assert back["n"] == 10**30 and back["t"] == (1, None, "s") and back["dtype"] is torch.float32


def _body(metadata: dict, tensors: dict | None = None) -> bytes:
    from safetensors.torch import save

    return save(tensors or {}, metadata={k: v if isinstance(v, str) else json.dumps(v) for k, v in metadata.items()})


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\x00" * 7,
        b"\xff" * 64,
        struct.pack("<Q", 10**9) + b"{}",  # header past the frame
        struct.pack("<Q", 4) + b"[1,]",  # not JSON
        _body({}),  # no envelope
        _body({"seqlab": {"id": 1, "seq": 0}}),  # envelope without a message
        _body({"seqlab": {"id": "1", "seq": 0, "msg": None}}),  # id not an int
        _body({"seqlab": {"id": 1, "seq": 0, "msg": {"t": "tensor", "k": "9", "device": "cpu"}}}),  # no such buffer
        _body({"seqlab": {"id": 1, "seq": 0, "msg": None}}, {"0": torch.ones(2)}),  # a buffer nobody uses
        _body(
            {
                "seqlab": {
                    "id": 1,
                    "seq": 0,
                    "msg": {"t": "list", "v": [{"t": "tensor", "k": "0", "device": "cpu"}] * 2},
                }
            },
            {"0": torch.ones(2)},
        ),  # one buffer used twice
        _body(
            {"seqlab": {"id": 1, "seq": 0, "msg": {"t": "tensor", "k": "0", "device": "meta"}}}, {"0": torch.ones(2)}
        ),
        _body({"seqlab": {"id": 1, "seq": 0, "msg": {"t": "pickle", "v": "..."}}}),
        _body({"seqlab": '{"id": 1, "seq": 0, "msg": ' + "[" * 100000 + "]" * 100000 + "}"}),  # nesting bomb
    ],
    ids=lambda b: f"{len(b)}B",
)
def test_any_malformed_frame_is_one_codec_error(body):
    with pytest.raises(codec.CodecError):
        codec.decode(body)


def test_an_oversized_frame_is_refused_before_anything_is_read():
    reads = []

    def read_exact(n):
        reads.append(n)
        return struct.pack(">Q", codec.MAX_FRAME_BYTES + 1) if len(reads) == 1 else b""

    with pytest.raises(codec.CodecError, match="over the 64 MB limit"):
        codec.read_frame(read_exact)
    assert reads == [8]


# --- callees: the reference's own calls, recorded; stand-ins that answer only those --------------


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


def test_corrupted_frames_decode_or_fail_as_codec_errors_only():
    """Whatever bytes of a real frame a student flips, the parent sees a message or a CodecError,
    never another exception (which would be an internal grader error)."""
    frame = codec.encode(
        {
            "op": "result",
            "value": (torch.randn(2, 3), {"k": [1, 2.5, None]}),
            "args": [],
            "kwargs": {},
            "aliased": [],
            "ops": {"torch.add": 1},
            "op_count": 1,
            "output": "x",
        },
        request=5,
        seq=0,
    )[8:]
    gen = torch.Generator().manual_seed(0)
    decoded = rejected = 0
    for _ in range(300):
        corrupted = bytearray(frame)
        for position in torch.randint(0, len(frame), (int(torch.randint(1, 4, (), generator=gen)),), generator=gen):
            corrupted[int(position)] = int(torch.randint(0, 256, (), generator=gen))
        truncate = bool(torch.rand((), generator=gen) < 0.3)
        cut = int(torch.randint(len(frame) // 2, len(frame), (), generator=gen)) if truncate else len(frame)
        try:
            codec.decode(bytes(corrupted[:cut]))
            decoded += 1
        except codec.CodecError:
            rejected += 1
    assert decoded and rejected, (decoded, rejected)  # both paths were exercised
