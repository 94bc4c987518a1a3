"""The channel between the parent and the student's child: safetensors frames in a minimal
envelope. Whatever bytes arrive, the parent sees a message or one CodecError, never another
exception (which would be an internal grader error)."""

from __future__ import annotations

import json
import struct

import pytest
import torch

from seqlab.student import codec


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
