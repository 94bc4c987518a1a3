"""The runtime half of the subset: the guards the transformed code calls, and the builtins it has.

``seqlab.subset.transform`` turns ``obj.name`` into ``_getattr_(obj, "name")`` and ``obj.name = v``
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
import operator
import string
import sys
import types

from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence

from . import rules
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
    frame = sys._getframe(2)
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
            problem = module_refusal(value.__name__)
            if problem:
                _refuse(f"{owner + ' -> ' if owner else ''}{problem}", "see the allowed modules in the rules")
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


_CLASS_OWNERS = ("torch.Tensor", "numpy.ndarray")


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


_TYPE_DENIED_NAMES = frozenset(n for owner in ("torch.Tensor", "numpy.ndarray") for n in rules.DENIED_ATTRIBUTES[owner])
_FORMAT_NAMES = frozenset({"format", "format_map"})


def _check_type_attribute(obj, name: str) -> None:
    for owner in ("torch.Tensor", "numpy.ndarray"):
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
        import _string

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
        return _TypeProxy
    if type(value) in _CODE_CARRIERS or type(value) is _MODULE:
        _check_value(value, f"{_describe(obj)}.{name}")
    return value


def guarded_getitem(obj, key):
    value = obj[key]
    if type(value) is _MODULE or type(value) is types.BuiltinFunctionType:
        _check_value(value, "an item")
    return value


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


def apply(function, *args, **kwargs):
    return function(*args, **kwargs)


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


def _type_builtin(*args):
    if len(args) != 1:
        _refuse("type() with three arguments (a class built from strings)", "write a class statement")
    return type(args[0])


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
    table.update(
        getattr=_getattr_builtin,
        setattr=_setattr_builtin,
        delattr=_delattr_builtin,
        hasattr=_hasattr_builtin,
        vars=_vars_builtin,
        type=_TypeProxy,
        __build_class__=builtins.__build_class__,
        __import__=importer,
    )
    return table


class _TypeMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, type)

    def __subclasscheck__(cls, subclass):
        return issubclass(subclass, type)


class _TypeProxy(metaclass=_TypeMeta):
    """``type``: ``type(x)`` and ``isinstance(c, type)`` as ever; ``type(name, bases, dict)`` refused."""

    def __new__(cls, *args):
        return _type_builtin(*args)


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
