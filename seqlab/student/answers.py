"""The answers a student's child may send to each request, checked before the parent reads them.

An answer is an op the request allows, with exactly the fields that op needs, of their types; a
frame that is anything else is an anomaly (seqlab.student.isolated kills the child for it).
"""

from __future__ import annotations

from typing import Any

import torch


class Anomaly(Exception):
    """The child broke the protocol."""


# The ops a child may send in answer to each request, and the fields (with their types) each needs.
_RESULT: dict[str, type] = {
    "value": object,
    "args": list,
    "kwargs": dict,
    "aliased": list,
    "updates": dict,
    "ops": dict,
    "op_count": int,
    "output": str,
}
_ERROR: dict[str, type] = {"kind": str, "message": str, "ops": dict, "output": str}
# During a call, a stand-in asks for its callee's recorded result (seqlab.student.callees): the
# callee and the call's bound arguments; the parent answers each ask and waits for the next frame.
_CALLEE: dict[str, type] = {"callee": str, "arguments": dict}
_ANSWERS: dict[str, dict[str, dict[str, type]]] = {
    "load": {"loading": {"module": str}, "loaded": {"errors": dict}},
    "call": {"result": _RESULT, "error": _ERROR, "callee": _CALLEE},
    # a call whose outputs are also backpropagated (seqlab.student.gradcheck): the gradients by
    # input (each a tensor), or why autograd could not give them
    "backward": {"result": {**_RESULT, "grads": dict, "backward_error": str}, "error": _ERROR, "callee": _CALLEE},
}
_ERROR_KINDS = {"not_implemented", "missing", "exception", "timeout", "crash", "memory", "protocol"}


def updates_are_plain(updates: dict[str, Any]) -> bool:
    """A lab's optimizer tally (seqlab.student.updates.UpdateTap.report), or {} for any other call."""
    if not updates:
        return True
    return (
        set(updates) == {"calls", "settings", "last", "unchained"}
        and type(updates["calls"]) is int
        and type(updates["unchained"]) is int
        and type(updates["settings"]) is dict
        and all(type(k) is str and type(v) is int for k, v in updates["settings"].items())
        and type(updates["last"]) is list
        and all(type(t) is torch.Tensor for t in updates["last"])
    )


def check_answer(request_op: str, message: Any) -> dict[str, Any]:
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise Anomaly("a frame without an op")
    fields = _ANSWERS[request_op].get(message["op"])
    if fields is None:
        raise Anomaly(f"unexpected op {message['op'][:40]!r} in answer to {request_op!r}")
    if set(message) != {"op", *fields}:
        raise Anomaly(f"malformed {message['op']!r} frame")
    for key, kind in fields.items():
        if not isinstance(message[key], kind) or (kind is int and isinstance(message[key], bool)):
            raise Anomaly(f"malformed {message['op']!r} frame ({key})")
    if message["op"] == "error" and message["kind"] not in _ERROR_KINDS:
        raise Anomaly("unknown error kind")
    if "ops" in message and not all(isinstance(k, str) and type(v) is int for k, v in message["ops"].items()):
        raise Anomaly("malformed op counts")
    if "aliased" in message and not all(isinstance(p, str) for p in message["aliased"]):
        raise Anomaly("malformed aliasing report")
    if "updates" in message and not updates_are_plain(message["updates"]):
        raise Anomaly("malformed optimizer tally")
    if "grads" in message and not all(
        isinstance(k, str) and type(g) is torch.Tensor for k, g in message["grads"].items()
    ):
        raise Anomaly("malformed gradients")
    if "arguments" in message and not all(isinstance(k, str) for k in message["arguments"]):
        raise Anomaly("malformed callee arguments")
    if "errors" in message and not all(isinstance(k, str) and isinstance(v, str) for k, v in message["errors"].items()):
        raise Anomaly("malformed load errors")
    return message
