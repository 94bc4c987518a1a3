"""Plain-data frames between the trusted parent and the student's child process.

Nothing is pickled, and no tensor format is hand-written: a frame's body is a safetensors
buffer (a format built for untrusted tensors: a bounded JSON header, raw little-endian buffers,
offsets and sizes checked by its own parser). The message itself travels in the safetensors
metadata as a small JSON tree in which every tensor is a reference to one of the buffers.
Decoding builds only plain Python values and plain ``torch.Tensor``s, so a tensor subclass with
lying comparisons or an object with a custom ``__eq__`` arrives as a plain tensor or an error.

The envelope is minimal: ``{"id": request id, "seq": frame number within the request,
"msg": the message}``. Frame on the wire: 8-byte big-endian body length, then the body.
Any decoding problem of any kind is a ``CodecError``; the parent treats one as the end of the
child (seqlab.student.isolated).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any

import torch

_DTYPES = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
_NAMES = {dtype: name for name, dtype in _DTYPES.items()}
_METADATA_KEY = "seqlab"
MAX_DEPTH = 32
MAX_ITEMS = 100_000
# The largest legitimate frame is a graded input or answer: today under 1 MB (the longest
# graded tensors are linear_scan's T=1024 inputs), and a few MB for a long-T timing input.
# 64 MB is ten times that, and bounds what one frame can make the parent allocate.
MAX_FRAME_BYTES = 64 << 20
# A CPU generator travels as its state (torch's mt19937 state, a fixed-size uint8 tensor): the
# copy draws the numbers the sender's would, and a state of any other shape is refused unread.
_GENERATOR_STATE_SHAPE = torch.Generator().get_state().shape


class CodecError(ValueError):
    """A value that is not plain data, or a malformed frame."""


def _encode(obj: Any, tensors: dict[str, torch.Tensor], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise CodecError("value nested too deeply")
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return {"t": "int", "v": str(int(obj))}
    if isinstance(obj, float):
        return {"t": "float", "v": repr(float(obj))}
    if isinstance(obj, torch.Tensor):
        # as_subclass on a plain view: whatever a subclass claims, only its bytes travel.
        plain = torch.Tensor.as_subclass(obj, torch.Tensor)
        if plain.is_sparse or plain.layout != torch.strided:
            raise CodecError(f"unsupported tensor layout {plain.layout}")
        if plain.dtype not in _NAMES:
            raise CodecError(f"unsupported dtype {plain.dtype}")
        key = str(len(tensors))
        # A fresh copy: safetensors refuses tensors that share memory (a view and its base).
        tensors[key] = plain.detach().to("cpu").contiguous().clone()
        return {"t": "tensor", "k": key, "device": str(plain.device)}
    if isinstance(obj, torch.dtype):
        if obj not in _NAMES:
            raise CodecError(f"unsupported dtype {obj}")
        return {"t": "dtype", "v": _NAMES[obj]}
    if isinstance(obj, torch.device):
        return {"t": "device", "v": str(obj)}
    if isinstance(obj, torch.Generator):
        if obj.device.type != "cpu":
            raise CodecError("only CPU generators travel")
        key = str(len(tensors))
        tensors[key] = obj.get_state()  # a fresh uint8 tensor: the whole state, nothing else
        return {"t": "generator", "k": key}
    if isinstance(obj, (list, tuple)):
        if len(obj) > MAX_ITEMS:
            raise CodecError("sequence too long")
        kind = "list" if isinstance(obj, list) else "tuple"
        return {"t": kind, "v": [_encode(x, tensors, depth + 1) for x in obj]}
    if isinstance(obj, dict):
        if len(obj) > MAX_ITEMS:
            raise CodecError("dict too large")
        if not all(isinstance(k, str) for k in obj):
            raise CodecError("dict keys must be strings")
        return {"t": "dict", "v": [[k, _encode(v, tensors, depth + 1)] for k, v in obj.items()]}
    raise CodecError(
        f"cannot send a value of type {type(obj).__name__} "
        "(only tensors, generators, numbers, strings, lists, tuples and dicts)"
    )


def encode(message: Any, *, request: int, seq: int) -> bytes:
    """One frame holding ``message`` for request ``request``, frame number ``seq``."""
    from safetensors.torch import save

    tensors: dict[str, torch.Tensor] = {}
    envelope = {"id": int(request), "seq": int(seq), "msg": _encode(message, tensors, 0)}
    body = save(tensors, metadata={_METADATA_KEY: json.dumps(envelope)})
    if len(body) > MAX_FRAME_BYTES:
        raise CodecError(f"message of {len(body)} bytes is over the {MAX_FRAME_BYTES >> 20} MB frame limit")
    return struct.pack(">Q", len(body)) + body


DeviceMap = Callable[[str], torch.device]  # a device name as sent -> the device to put it on


def _decode(node: Any, tensors: dict[str, torch.Tensor], depth: int, device_map: DeviceMap) -> Any:
    if depth > MAX_DEPTH:
        raise CodecError("value nested too deeply")
    if node is None or isinstance(node, (bool, str)):
        return node
    if not isinstance(node, dict) or "t" not in node:
        raise CodecError("malformed message")
    kind = node["t"]
    if kind == "int":
        return int(node["v"])
    if kind == "float":
        return float(node["v"])
    if kind == "tensor":
        tensor = tensors.pop(node["k"], None)  # each buffer is used once: no hidden aliasing
        if tensor is None:
            raise CodecError("reference to a missing or reused tensor buffer")
        return tensor.to(device_map(node["device"]))
    if kind == "generator":
        state = tensors.pop(node["k"], None)
        if state is None or state.dtype != torch.uint8 or state.shape != _GENERATOR_STATE_SHAPE:
            raise CodecError("malformed generator state")
        return torch.Generator().set_state(state)
    if kind == "dtype":
        return _DTYPES[node["v"]]
    if kind == "device":
        return device_map(node["v"])
    if kind in ("list", "tuple"):
        if len(node["v"]) > MAX_ITEMS:
            raise CodecError("sequence too long")
        items = [_decode(x, tensors, depth + 1, device_map) for x in node["v"]]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        if len(node["v"]) > MAX_ITEMS:
            raise CodecError("dict too large")
        out = {}
        for key, value in node["v"]:
            if not isinstance(key, str):
                raise CodecError("dict keys must be strings")
            out[key] = _decode(value, tensors, depth + 1, device_map)
        return out
    raise CodecError(f"unknown value kind {kind!r}")


def default_device(name: str) -> torch.device:
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise CodecError(f"tensor on {name}, but no CUDA here")
    if device.type not in ("cpu", "cuda"):
        raise CodecError(f"unsupported device {name}")
    return device


def decode(body: bytes, device_map: DeviceMap = default_device) -> tuple[int, int, Any]:
    """``(request id, seq, message)`` from a frame body; any problem is a ``CodecError``."""
    try:
        from safetensors.torch import load

        if len(body) < 8:
            raise CodecError("frame too short")
        (header_len,) = struct.unpack("<Q", body[:8])
        if header_len > len(body) - 8:
            raise CodecError("safetensors header longer than the frame")
        header = json.loads(body[8 : 8 + header_len])
        if not isinstance(header, dict):
            raise CodecError("safetensors header is not an object")
        metadata = header.get("__metadata__")
        if not isinstance(metadata, dict) or not isinstance(metadata.get(_METADATA_KEY), str):
            raise CodecError("frame without a seqlab envelope")
        envelope = json.loads(metadata[_METADATA_KEY])
        if not isinstance(envelope, dict) or set(envelope) != {"id", "seq", "msg"}:
            raise CodecError("malformed envelope")
        request, seq = envelope["id"], envelope["seq"]
        if type(request) is not int or type(seq) is not int:
            raise CodecError("malformed envelope")
        tensors = load(bytes(body))  # safetensors' own parser checks offsets, sizes and dtypes
        message = _decode(envelope["msg"], tensors, 0, device_map)
        if tensors:
            raise CodecError("frame holds tensor buffers the message does not use")
        return request, seq, message
    except CodecError:
        raise
    except Exception as exc:
        raise CodecError(f"undecodable frame ({type(exc).__name__}: {str(exc)[:200]})") from None


def read_frame(read_exact: Callable[[int], bytes]) -> bytes:
    """Read one frame body with ``read_exact(n) -> bytes`` (raises EOFError when the peer is gone).

    The length is checked before anything is allocated for the body."""
    (length,) = struct.unpack(">Q", read_exact(8))
    if length > MAX_FRAME_BYTES:
        raise CodecError(f"frame of {length} bytes announced, over the {MAX_FRAME_BYTES >> 20} MB limit")
    return read_exact(length)
