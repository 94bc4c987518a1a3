"""The runtime half of the subset: the guards the transformed code calls, and the builtins it has.

The transformer (``transform.py``) turns ``obj.name`` into ``_getattr_(obj, "name")`` and ``obj.name = v``
into ``_write_(obj).name = v``; this module supplies those functions. They decide what the
transformer cannot: whose object ``obj`` is. A student's own functions, classes, instances and
modules (their ``__module__`` is in the ``exercises`` package) have their private attributes
open to them; anything else shows only its public face, and a module only the attributes the
rules allow. Every value read is checked once more by identity and kind: a module object must
be one the subset allows however it was reached (``torch.os`` is ``os``), and the builtins that
run strings as code cannot be picked up from another module's namespace.

These guards run in the student's process, so they are a wall for the student's code, not a
witness for the grader: the grader's verdicts come from the parent (the static check of the
same source, values compared there).
"""

from __future__ import annotations

import builtins
import string
import sys
import types

from . import rules
from .shims import impostor
from .transform import module_refusal

_MODULE = types.ModuleType
_INTERNAL_TYPES = (types.FrameType, types.CodeType, types.TracebackType)
_CODE_CARRIERS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)
_WRITE_THROUGH = (list, dict, bytearray)  # item writes on plain containers are ordinary
_READABLE_DUNDERS = rules.HARMLESS_DUNDERS | (
    rules.SPECIAL_METHODS - {"__getstate__", "__setstate__", "__del__", "__set__", "__delete__"}
)


class SubsetViolation(Exception):
    """Student code reached for something outside the language subset."""


def _where() -> str:
    """'exercises/rnn.py, line 12: ' for the student's frame that called the guard."""
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None and rules.PACKAGE not in (frame.f_code.co_filename or ""):
        frame = frame.f_back
    if frame is None:
        return ""
    name = frame.f_code.co_filename
    short = name[name.rfind(rules.PACKAGE) :] if rules.PACKAGE in name else name
    return f"{short}, line {frame.f_lineno}: "


def _refuse(what: str, instead: str = "") -> None:
    raise SubsetViolation(f"{_where()}{what}" + (f" ({instead})" if instead else ""))


def _owner(obj) -> object:
    """The module name a value belongs to, read without running any of its code."""
    kind = type(obj)
    if kind is _MODULE:
        return obj.__name__
    if kind is types.FunctionType:
        return obj.__module__
    if kind is types.MethodType:
        return _owner(obj.__func__)
    if isinstance(obj, type):
        return type.__dict__["__module__"].__get__(obj)
    return type.__dict__["__module__"].__get__(kind)


def is_own(obj) -> bool:
    owner = _owner(obj)
    return isinstance(owner, str) and (owner == rules.PACKAGE or owner.startswith(rules.PACKAGE + "."))


def _module_name(module) -> str:
    name = module.__name__
    return "posixpath" if name in ("os.path", "posixpath") else name


def _check_value(value, owner: str = "") -> None:
    """A module, or a builtin that runs code, is refused however it was reached."""
    kind = type(value)
    if kind is _MODULE:
        if not is_own(value):
            problem = module_refusal(value.__name__) or impostor(value)
            if problem:
                _refuse(
                    f"{owner + ' -> ' if owner else ''}{problem}",
                    "README: The language subset, for the allowed modules",
                )
    elif kind is types.BuiltinFunctionType and id(value) in _REFUSED_IDS:
        _refuse(f"the builtin {value.__name__}() reached through {owner or 'a value'}", "it is not in the subset")
    elif kind in _CODE_CARRIERS and id(value) in _denied_ids():
        _refuse(f"{owner or 'this value'}: {_denied_ids()[id(value)]}")


_REFUSED_IDS = frozenset(
    id(getattr(builtins, name))
    for name in (*rules.REFUSED_BUILTINS, *rules.GUARDED_BUILTINS)
    if hasattr(builtins, name)
) - {id(type)}
_DENIED: dict[int, str] = {}
_DENIED_HOLD: list = []  # the denied objects themselves, so that their ids stay theirs
_MODULES_SEEN = [0]


def _denied_ids() -> dict[int, str]:
    """Every object a DENIED_ATTRIBUTES entry names, by identity, among the modules imported so
    far: ``torch.load`` is refused under any alias a module re-exports it by."""
    if _MODULES_SEEN[0] == len(sys.modules):
        return _DENIED
    _MODULES_SEEN[0] = len(sys.modules)
    for owner, names in rules.DENIED_ATTRIBUTES.items():
        module_name, _, class_name = owner.partition(".") if owner in _CLASS_OWNERS else (owner, "", "")
        holder = sys.modules.get(module_name)
        if holder is not None and class_name:
            holder = holder.__dict__.get(class_name)
        if holder is None:
            continue
        for name, reason in names.items():
            value = getattr(holder, name, None)
            kinds = (types.FunctionType, types.BuiltinFunctionType, type, _MODULE)
            if isinstance(value, kinds) and id(value) not in _DENIED:
                _DENIED[id(value)] = f"{owner}.{name}: {reason}"
                _DENIED_HOLD.append(value)
    return _DENIED


_CLASS_OWNERS = ("torch.Tensor", "numpy.ndarray", "logging.Logger")


def _check_name(obj, name: str) -> None:
    """The rules for a name that starts with '_' or names an interpreter internal."""
    if name in rules.INTERPRETER_INTERNALS:
        _refuse(f"the interpreter's internal attribute {name!r}")
    if name.startswith("__") and name.endswith("__"):
        if name in _READABLE_DUNDERS:
            return
        if name in rules.OWN_ONLY_DUNDERS and is_own(obj) and type(obj) is not _MODULE:
            return
        if name in ("__setattr__", "__delattr__") and (obj is object or is_own(obj)):
            return  # object.__setattr__(self, ...) in a frozen dataclass's __post_init__
        _refuse(f"the dunder attribute {name!r} of {_describe(obj)}", "use the public API")
    if len(name) > 2 and name.endswith("_") and not name.endswith("__"):
        _refuse(f"the name {name!r} is reserved for the grader's guards")
    if not is_own(obj):
        _refuse(
            f"the private attribute {name!r} of {_describe(obj)}", "private names are open on your own objects only"
        )


def _describe(obj) -> str:
    kind = type(obj)
    if kind is _MODULE:
        return f"the module {obj.__name__}"
    if isinstance(obj, type):
        return f"the class {_owner(obj)}.{obj.__qualname__}"
    return f"a {kind.__module__}.{kind.__qualname__}"


def _check_module_attribute(module, name: str) -> None:
    if is_own(module):
        return
    owner = _module_name(module)
    reason = rules.DENIED_ATTRIBUTES.get(owner, {}).get(name)
    if reason:
        _refuse(f"{owner}.{name}: {reason}")
    allowed = rules.ALLOWED_ONLY.get(owner)
    if allowed is not None and name not in allowed:
        _refuse(f"{owner}.{name} is not in the subset", f"of {owner}, only {', '.join(sorted(allowed))}")


_TYPE_DENIED_NAMES = frozenset(n for owner in _CLASS_OWNERS for n in rules.DENIED_ATTRIBUTES[owner])
_FORMAT_NAMES = frozenset({"format", "format_map"})


def _check_type_attribute(obj, name: str) -> None:
    for owner in _CLASS_OWNERS:
        module_name, class_name = owner.split(".")
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if cls is None or name not in rules.DENIED_ATTRIBUTES[owner]:
            continue
        if isinstance(obj, cls) or (isinstance(obj, type) and issubclass(obj, cls)):
            _refuse(f"{owner}.{name}: {rules.DENIED_ATTRIBUTES[owner][name]}")


class _GuardedFormatter(string.Formatter):
    """str.format with its field lookups (``{0.attr}``, ``{0[key]}``) made through the guards:
    the format string is data, and data must not reach further than code can."""

    def get_field(self, field_name, args, kwargs):
        import _string  # type: ignore[import-not-found]  # CPython's own, behind string.Formatter: no stub

        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attribute, key in rest:
            obj = guarded_getattr(obj, key) if is_attribute else guarded_getitem(obj, key)
        return obj, first


_FORMATTER = _GuardedFormatter()


def _format_method(obj, name: str):
    if isinstance(obj, type):  # str.format(template, ...)
        return (
            (lambda template, *a, **k: _FORMATTER.vformat(template, a, k))
            if name == "format"
            else (lambda template, mapping: _FORMATTER.vformat(template, (), mapping))
        )
    if name == "format":
        return lambda *a, **k: _FORMATTER.vformat(obj, a, k)
    return lambda mapping: _FORMATTER.vformat(obj, (), mapping)


def guarded_getattr(obj, name, *default):
    """``obj.name`` for student code."""
    if type(name) is not str:
        raise TypeError(f"attribute name must be a string, not {type(name).__name__}")
    if name[:1] == "_" or name in rules.INTERPRETER_INTERNALS:
        _check_name(obj, name)
    kind = type(obj)
    if kind is _MODULE:
        _check_module_attribute(obj, name)
    elif kind in _INTERNAL_TYPES:
        _refuse(f"an attribute of {_describe(obj)}", "frames, code and tracebacks are not part of the exercise")
    elif name in _FORMAT_NAMES and (isinstance(obj, str) or (isinstance(obj, type) and issubclass(obj, str))):
        return _format_method(obj, name)
    elif name in _TYPE_DENIED_NAMES:
        _check_type_attribute(obj, name)
    value = getattr(obj, name, *default)
    if value is type:  # x.__class__.__class__: the guarded type, whose three-argument form is refused
        return TypeProxy
    if type(value) in _CODE_CARRIERS or type(value) is _MODULE:
        _check_value(value, f"{_describe(obj)}.{name}")
    return value


def guarded_getitem(obj, key):
    value = obj[key]
    if type(value) is _MODULE or type(value) is types.BuiltinFunctionType:
        _check_value(value, "an item")
    return value


def apply(function, *args, **kwargs):
    return function(*args, **kwargs)


def _type_builtin(*args):
    if len(args) != 1:
        _refuse("type() with three arguments (a class built from strings)", "write a class statement")
    return type(args[0])


class _TypeMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, type)

    def __subclasscheck__(cls, subclass):
        return issubclass(subclass, type)


class TypeProxy(metaclass=_TypeMeta):
    """``type``: ``type(x)`` and ``isinstance(c, type)`` as ever; ``type(name, bases, dict)`` refused."""

    def __new__(cls, *args):
        return _type_builtin(*args)
