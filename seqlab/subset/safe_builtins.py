"""The builtins a submission's module has: the safe ones, guarded versions of the attribute
builtins, ``type`` without its three-argument form, every exception class, and the import
statement's hook."""

from __future__ import annotations

import builtins
from typing import Any

from . import rules
from .guards import TypeProxy, _describe, _refuse, guarded_getattr, is_own
from .writes import write_guard

_MODULE = type(builtins)


def _getattr_builtin(obj, name, *default):
    return guarded_getattr(obj, name, *default)


def _setattr_builtin(obj, name, value):
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if name.startswith("_") and not (is_own(obj) and not (name.startswith("__") and name.endswith("__"))):
        _refuse(f"setting the attribute {name!r} of {_describe(obj)}")
    setattr(write_guard(obj), name, value)


def _delattr_builtin(obj, name):
    if type(name) is not str or (name.startswith("_") and not is_own(obj)):
        _refuse(f"deleting the attribute {name!r} of {_describe(obj)}")
    delattr(write_guard(obj), name)


def _hasattr_builtin(obj, name):
    try:
        guarded_getattr(obj, name)
    except AttributeError:
        return False
    return True


def _vars_builtin(*obj):
    if not obj:
        _refuse("vars() without an argument (a frame's namespace)", "pass your own object: vars(self)")
    (target,) = obj
    if not is_own(target) or type(target) is _MODULE:
        _refuse(f"vars() of {_describe(target)}", "vars() is open on your own objects only")
    return vars(target)


def make_builtins(importer) -> dict:
    """The builtins of a submission's module: the safe ones, guarded versions of the attribute
    builtins, every exception class, and the import statement's hook."""
    table = {name: getattr(builtins, name) for name in rules.ALLOWED_BUILTINS if hasattr(builtins, name)}
    table.update(
        {
            name: value
            for name, value in vars(builtins).items()
            if isinstance(value, type) and issubclass(value, BaseException)
        }
    )
    # The builtins that reach attributes, types or modules, each replaced by its guarded form.
    guarded: dict[str, Any] = {
        "getattr": _getattr_builtin,
        "setattr": _setattr_builtin,
        "delattr": _delattr_builtin,
        "hasattr": _hasattr_builtin,
        "vars": _vars_builtin,
        "type": TypeProxy,
        "__build_class__": builtins.__build_class__,
        "__import__": importer,
    }
    table.update(guarded)
    return table
