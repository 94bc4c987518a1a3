"""Plain-data messages between the trusted parent and the student's child process.

Nothing is pickled. A message is a JSON header plus raw tensor buffers; decoding builds only
plain Python values and plain ``torch.Tensor``s, so a tensor subclass with lying comparisons,
an object with a custom ``__eq__`` or anything else arrives as a plain tensor or as an error.

Frame on the wire: 8-byte big-endian header length, 8-byte payload length, JSON header,
then the buffers back to back (their sizes are in the header).
"""
from __future__ import annotations

import json
import math
import struct
from typing import Any

import torch

_DTYPES = {
    "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
    "float64": torch.float64, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool,
    "complex64": torch.complex64, "complex128": torch.complex128,
}
_NAMES = {dtype: name for name, dtype in _DTYPES.items()}
MAX_DEPTH = 32
MAX_ITEMS = 100_000
MAX_BYTES = 2 << 30   # 2 GiB in one message: far above any graded input, bounds a flood


class CodecError(ValueError):
    """A value that is not plain data, or a malformed message."""


def _encode(obj: Any, buffers: list[bytes], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise CodecError("value nested too deeply")
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return {"t": "int", "v": str(int(obj))}
    if isinstance(obj, float):
        return {"t": "float", "v": repr(float(obj))}
    if isinstance(obj, torch.Tensor):
        # as_subclass/detach on a plain view: whatever a subclass claims, only its bytes travel.
        plain = torch.Tensor.as_subclass(obj, torch.Tensor)
        if plain.is_sparse or plain.layout != torch.strided:
            raise CodecError(f"unsupported tensor layout {plain.layout}")
        if plain.dtype not in _NAMES:
            raise CodecError(f"unsupported dtype {plain.dtype}")
        data = plain.detach().to("cpu").contiguous()
        raw = data.reshape(-1).view(torch.uint8).numpy().tobytes() if data.numel() else b""
        buffers.append(raw)
        return {"t": "tensor", "dtype": _NAMES[plain.dtype], "shape": list(plain.shape),
                "device": str(plain.device), "requires_grad": bool(plain.requires_grad),
                "buf": len(buffers) - 1}
    if isinstance(obj, torch.dtype):
        return {"t": "dtype", "v": _NAMES[obj]}
    if isinstance(obj, torch.device):
        return {"t": "device", "v": str(obj)}
    if isinstance(obj, (list, tuple)):
        if len(obj) > MAX_ITEMS:
            raise CodecError("sequence too long")
        kind = "list" if isinstance(obj, list) else "tuple"
        return {"t": kind, "v": [_encode(x, buffers, depth + 1) for x in obj]}
    if isinstance(obj, dict):
        if len(obj) > MAX_ITEMS:
            raise CodecError("dict too large")
        if not all(isinstance(k, str) for k in obj):
            raise CodecError("dict keys must be strings")
        return {"t": "dict", "v": [[k, _encode(v, buffers, depth + 1)] for k, v in obj.items()]}
    raise CodecError(f"cannot send a value of type {type(obj).__name__} (only tensors, numbers, "
                     f"strings, lists, tuples and dicts)")


def encode(obj: Any) -> bytes:
    buffers: list[bytes] = []
    header = json.dumps({"v": _encode(obj, buffers, 0), "sizes": [len(b) for b in buffers]}).encode()
    payload = b"".join(buffers)
    return struct.pack(">QQ", len(header), len(payload)) + header + payload


def _decode(node: Any, buffers: list[memoryview], depth: int, device_map) -> Any:
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
        value = float(node["v"])
        return value if math.isfinite(value) or node["v"] in ("nan", "inf", "-inf") else value
    if kind == "tensor":
        dtype = _DTYPES.get(node["dtype"])
        shape = node["shape"]
        if dtype is None or not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
            raise CodecError("malformed tensor")
        raw = buffers[node["buf"]]
        numel = math.prod(shape)
        itemsize = torch.empty((), dtype=dtype).element_size()
        if len(raw) != numel * itemsize:
            raise CodecError("tensor size does not match its buffer")
        if numel:
            tensor = torch.frombuffer(bytearray(raw), dtype=dtype).reshape(shape)
        else:
            tensor = torch.empty(shape, dtype=dtype)
        return tensor.to(device_map(node["device"]))
    if kind == "dtype":
        return _DTYPES[node["v"]]
    if kind == "device":
        return torch.device(node["v"])
    if kind in ("list", "tuple"):
        items = [_decode(x, buffers, depth + 1, device_map) for x in node["v"]]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {str(k): _decode(v, buffers, depth + 1, device_map) for k, v in node["v"]}
    raise CodecError(f"unknown value kind {kind!r}")


def _default_device(name: str) -> torch.device:
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise CodecError(f"tensor on {name}, but no CUDA here")
    if device.type not in ("cpu", "cuda"):
        raise CodecError(f"unsupported device {name}")
    return device


def decode(header: bytes, payload: bytes, device_map=_default_device) -> Any:
    try:
        meta = json.loads(header)
    except ValueError as exc:
        raise CodecError(f"malformed header: {exc}") from None
    sizes = meta.get("sizes", [])
    if sum(sizes) != len(payload):
        raise CodecError("payload size mismatch")
    view, buffers, at = memoryview(payload), [], 0
    for size in sizes:
        buffers.append(view[at:at + size])
        at += size
    return _decode(meta.get("v"), buffers, 0, device_map)


def read_frame(read_exact) -> tuple[bytes, bytes]:
    """Read one frame with ``read_exact(n) -> bytes`` (raises EOFError when the peer is gone)."""
    head_len, payload_len = struct.unpack(">QQ", read_exact(16))
    if head_len > MAX_BYTES or payload_len > MAX_BYTES:
        raise CodecError("message too large")
    return read_exact(head_len), read_exact(payload_len)
