"""Writes by student code: ``obj.name = v``, ``obj[k] = v`` and their augmented forms.

A student's own objects and plain containers are written directly; someone else's object gets a
proxy that lets its items and public attributes be set and nothing else; a module, a class or a
function that is not the student's is never written (that would be monkeypatching what every
graded call shares)."""

from __future__ import annotations

import operator

from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence

from . import rules
from .guards import _CODE_CARRIERS, _MODULE, _describe, _refuse, apply, guarded_getattr, guarded_getitem, is_own

_WRITE_THROUGH = (list, dict, bytearray)  # item writes on plain containers are ordinary


class _ForeignWrite:
    """What ``_write_`` hands back for someone else's object: its items and public attributes
    may be set (``p.grad = g``, ``out[t] = h``), never its private ones."""

    __slots__ = ("_target",)

    def __init__(self, target):
        object.__setattr__(self, "_target", target)

    def __setattr__(self, name, value):
        if name.startswith("_"):
            _refuse(f"setting the private attribute {name!r} of {_describe(self._target)}")
        setattr(self._target, name, value)

    def __delattr__(self, name):
        if name.startswith("_"):
            _refuse(f"deleting the private attribute {name!r} of {_describe(self._target)}")
        delattr(self._target, name)

    def __setitem__(self, key, value):
        self._target[key] = value

    def __delitem__(self, key):
        del self._target[key]


class _SettingWrite(_ForeignWrite):
    """A module whose listed switches may be set (``torch.backends.cudnn.deterministic = True``)."""

    __slots__ = ()

    def __setattr__(self, name, value):
        if name not in rules.WRITABLE_MODULE_ATTRIBUTES[self._target.__name__]:
            _refuse(f"assignment to {self._target.__name__}.{name}", "monkeypatching changes every graded call")
        setattr(self._target, name, value)


def write_guard(obj):
    """The object that ``obj.name = v`` and ``obj[k] = v`` act on."""
    kind = type(obj)
    if kind in _WRITE_THROUGH:
        return obj
    if is_own(obj):
        return obj
    if kind is _MODULE:
        if obj.__name__ in rules.WRITABLE_MODULE_ATTRIBUTES:
            return _SettingWrite(obj)
        _refuse(f"assignment to an attribute of the module {obj.__name__}", "monkeypatching changes every graded call")
    if isinstance(obj, type) or kind in _CODE_CARRIERS:
        _refuse(f"assignment to an attribute of {_describe(obj)}", "monkeypatching changes every graded call")
    return _ForeignWrite(obj)


_INPLACE = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "@=": operator.imatmul,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "&=": operator.iand,
    "^=": operator.ixor,
    "|=": operator.ior,
}


def inplace_var(op: str, target, value):
    return _INPLACE[op](target, value)


def aug_attr(obj, name: str, op: str, value) -> None:
    setattr(write_guard(obj), name, _INPLACE[op](guarded_getattr(obj, name), value))


def aug_item(obj, key, op: str, value) -> None:
    write_guard(obj)[key] = _INPLACE[op](guarded_getitem(obj, key), value)


def guard_globals() -> dict:
    """The names the transformed code calls its guards by."""
    return {
        "_getattr_": guarded_getattr,
        "_getitem_": guarded_getitem,
        "_write_": write_guard,
        "_getiter_": iter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_apply_": apply,
        "_inplacevar_": inplace_var,
        "_aug_attr_": aug_attr,
        "_aug_item_": aug_item,
    }
