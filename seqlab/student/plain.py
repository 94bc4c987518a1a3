"""Plain data, told apart from look-alikes by type checks that call nothing the student defined.

The grader's own work inside a graded call (a stand-in asking for its callee's recorded result,
seqlab.student.callees; the backward pass of seqlab.student.gradcheck) runs with the call's
recorders paused, or after them. A subclass of ``dict``, ``float`` or ``torch.Tensor`` can run
the student's code from ``__iter__``, ``__float__``, ``__eq__`` or ``__torch_function__``
wherever the grader touches it, and so run forbidden work that no recorder sees. So before any
of that work, the values are checked here: only ``type(x) is T`` for a fixed set of builtin and
torch types, never ``isinstance`` (which reads a ``__class__`` the student may define) and never
a method of the value; containers are rebuilt from the builtin types' own iteration. Anything
else is refused with the words the student reads.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

# Values taken as they are: their types are builtin or torch's own, and none can be subclassed
# into them (``type(x) is`` sees the exact type).
_ATOMS = frozenset({type(None), bool, int, float, complex, str, torch.dtype, torch.device, torch.Generator})
# torch.nn.Parameter is torch's own subclass (its __torch_function__ is torch's, disabled).
_TENSORS = frozenset({torch.Tensor, torch.nn.Parameter})
# torch's own tuple types (a shape, the named results of torch.max and the like), sent as tuples.
_TUPLES = frozenset(
    {torch.Size} | {v for v in vars(torch.return_types).values() if isinstance(v, type) and issubclass(v, tuple)}
)
_BUILTIN_NAMES = {dict: "dict", list: "list", tuple: "tuple", float: "float", int: "int", str: "str", bool: "bool"}
# The class's own name and bases, read from the type object itself: a metaclass's never runs.
_TYPE_NAME = vars(type)["__name__"].__get__
_MRO = vars(type)["__mro__"].__get__


class NotPlain(TypeError):
    """A value that is not plain data; ``str`` is what the student reads."""


def _kind(value: Any) -> str:
    """What ``value`` is, in the words of the refusal (its class's name, read without running it)."""
    cls = type(value)
    for base, name in _BUILTIN_NAMES.items():
        if base in _MRO(cls):
            return f"a subclass of {name} ({_TYPE_NAME(cls)}); use a plain {name}"
    if torch.Tensor in _MRO(cls):
        return f"a tensor subclass ({_TYPE_NAME(cls)}); use a plain tensor"
    return f"of type {_TYPE_NAME(cls)}; use tensors, numbers, strings, lists, tuples or dicts"


def plain_tree(value: Any, where: str) -> Any:
    """``value`` rebuilt from exact builtin containers, its leaves kept; raises ``NotPlain``
    naming ``where`` (e.g. "eps") for the first value that is anything else."""
    cls = type(value)
    if cls in _ATOMS or cls in _TENSORS:
        return value
    if cls is list or cls is tuple or cls in _TUPLES:
        iterate = list.__iter__ if cls is list else tuple.__iter__
        items = [plain_tree(item, f"{where}[{i}]") for i, item in enumerate(iterate(value))]
        return items if cls is list else tuple(items)
    numpy = sys.modules.get("numpy")  # numpy's float64 is a float subclass, of numpy's own code
    if numpy is not None and cls is numpy.float64:
        return float(value)
    if cls is dict:
        out = {}
        for key, item in dict.items(value):
            if type(key) is not str:
                raise NotPlain(f"{where} has a key that is not a plain string")
            out[key] = plain_tree(item, f"{where}[{key!r}]")
        return out
    raise NotPlain(f"{where} is {_kind(value)}")


__all__ = ["NotPlain", "plain_tree"]
