"""The ``dataclasses`` a submission imports: ``@dataclass`` and its helpers, generating nothing
from strings.

The standard library's ``@dataclass`` writes the source of ``__init__``, ``__repr__`` and the
comparisons from the class's ``__annotations__`` keys and ``exec``s it outside the subset, so a
key that is not a name is code that runs unguarded. Here every generated method is a closure over
the list of fields: a field name is only ever a key of the instance's ``__dict__``, and a name that
is not a plain identifier (or that is a dunder) is refused when the class is made. What honest
code uses is kept: ``frozen``, ``eq``, ``order``, ``repr``, ``init``, ``unsafe_hash``, defaults,
``field(default_factory=...)``, ``__post_init__``, inheritance between dataclasses, ``fields``,
``asdict``, ``astuple``, ``replace``, ``is_dataclass``, ``match`` on positional fields.
"""

from __future__ import annotations

import copy
import keyword
import types

from .package import PACKAGE

__all__ = ["MISSING", "Field", "FrozenInstanceError", "asdict", "astuple", "dataclass", "field", "fields"]
__all__ += ["is_dataclass", "replace"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()
# Where a class made here keeps its fields: a dunder the student cannot read, and not the standard
# library's name, so that its helpers (pprint's, torch's) never take these classes for theirs.
_FIELDS = "__subset_dataclass_fields__"


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen dataclass."""


class Field:
    """One field of a dataclass, as ``dataclasses.fields`` returns it."""

    def __init__(self, default=MISSING, default_factory=MISSING, init=True, repr=True, hash=None, compare=True):
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: object = None
        self.default, self.default_factory = default, default_factory
        self.init, self.repr, self.hash, self.compare = init, repr, hash, compare

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, init={self.init}, repr={self.repr})"


def field(*, default=MISSING, default_factory=MISSING, init=True, repr=True, hash=None, compare=True, metadata=None):
    """A field with options (``metadata`` is accepted and not kept)."""
    return Field(default, default_factory, init, repr, hash, compare)


def submission_owns(obj) -> bool:
    """A class or function defined in the submission's own package (its ``__module__``, which
    the subset lets no submission write, names it)."""
    if isinstance(obj, type):
        module = obj.__dict__.get("__module__")
    elif isinstance(obj, types.FunctionType):
        module = obj.__module__
    else:
        return False
    return isinstance(module, str) and (module == PACKAGE or module.startswith(PACKAGE + "."))


def _is_class_var(annotation) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))


def _own_fields(cls) -> list[Field]:
    # the class's own annotations, read as data (inspect.get_annotations can evaluate strings)
    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    found = []
    for name, annotation in annotations.items():
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise TypeError(f"dataclass field {name!r} is not a name")
        if name.startswith("__") or (name.startswith("_") and name.endswith("_") and len(name) > 2):
            raise TypeError(f"dataclass field {name!r}: dunder and guard names are not fields")
        if _is_class_var(annotation):
            continue
        value = cls.__dict__.get(name, MISSING)
        spec = value if isinstance(value, Field) else Field(default=value)
        if isinstance(value, Field):
            if value.default is MISSING:
                type.__delattr__(cls, name)
            else:
                type.__setattr__(cls, name, value.default)
        if isinstance(spec.default, (list, dict, set)):
            raise ValueError(f"mutable default {type(spec.default).__name__} for field {name} is not allowed")
        spec.name, spec.type = name, annotation
        found.append(spec)
    return found


def _all_fields(cls) -> dict[str, Field]:
    merged: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        merged.update(base.__dict__.get(_FIELDS, {}))
    for spec in _own_fields(cls):
        merged[spec.name] = spec
    return merged


def _values(obj, specs) -> tuple:
    state = obj.__dict__
    return tuple(state[s.name] for s in specs)


def _make_init(specs: list[Field], frozen: bool):
    init_specs = [s for s in specs if s.init]
    names = [s.name for s in init_specs]

    def __init__(self, *args, **kwargs):
        if len(args) > len(names):
            raise TypeError(f"__init__() takes {len(names) + 1} positional arguments but {len(args) + 1} were given")
        bound = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"__init__() got an unexpected keyword argument {key!r}")
            if key in bound:
                raise TypeError(f"__init__() got multiple values for argument {key!r}")
            bound[key] = value
        state = self.__dict__
        for spec in specs:
            if spec.name in bound:
                state[spec.name] = bound[spec.name]
            elif spec.default is not MISSING:
                state[spec.name] = spec.default
            elif spec.default_factory is not MISSING:
                state[spec.name] = spec.default_factory()
            elif spec.init:
                raise TypeError(f"__init__() missing 1 required argument: {spec.name!r}")
            # an init=False field without a default is left for __post_init__ to set
        post_init = getattr(type(self), "__post_init__", None)
        if post_init is not None:
            post_init(self)

    return __init__


def _make_compare(specs: list[Field], op):
    compared = [s for s in specs if s.compare]

    def method(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return op(_values(self, compared), _values(other, compared))

    return method


def _set_methods(cls, specs: list[Field], *, init, repr, eq, order, frozen, unsafe_hash) -> None:
    own = cls.__dict__
    shown = [s for s in specs if s.repr]
    compared = [s for s in specs if s.compare]

    def __repr__(self):
        inner = ", ".join(f"{s.name}={self.__dict__.get(s.name)!r}" for s in shown)
        return f"{type(self).__qualname__}({inner})"

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __hash__(self):
        return hash(_values(self, [s for s in compared if s.hash is not False]))

    methods: dict[str, object] = {}
    if init:
        methods["__init__"] = _make_init(specs, frozen)
    if repr:
        methods["__repr__"] = __repr__
    if eq:
        methods["__eq__"] = _make_compare(specs, lambda a, b: a == b)
    if order:
        methods["__lt__"] = _make_compare(specs, lambda a, b: a < b)
        methods["__le__"] = _make_compare(specs, lambda a, b: a <= b)
        methods["__gt__"] = _make_compare(specs, lambda a, b: a > b)
        methods["__ge__"] = _make_compare(specs, lambda a, b: a >= b)
    if frozen:
        methods["__setattr__"], methods["__delattr__"] = __setattr__, __delattr__
    for name, function in methods.items():
        if name not in own:
            function.__qualname__ = f"{cls.__qualname__}.{name}"  # type: ignore[attr-defined]
            type.__setattr__(cls, name, function)
    if unsafe_hash or (eq and frozen):
        if "__hash__" not in own or own["__hash__"] is None:
            type.__setattr__(cls, "__hash__", __hash__)
    elif eq and "__hash__" not in own:
        type.__setattr__(cls, "__hash__", None)


def dataclass(cls=None, /, *, init=True, repr=True, eq=True, order=False, unsafe_hash=False, frozen=False):
    """``@dataclass`` or ``@dataclass(frozen=True, ...)``: fields from the annotations, methods
    made from closures (see the module docstring)."""

    def wrap(klass):
        if not isinstance(klass, type) or not submission_owns(klass):
            # it writes methods onto the class: only onto the submission's own (the write guard
            # refuses setting a method of torch.nn.Module; @dataclass must not do it instead)
            raise TypeError("@dataclass applies to a class of your own")
        if order and not eq:
            raise ValueError("eq must be true if order is true")
        specs = _all_fields(klass)
        type.__setattr__(klass, _FIELDS, specs)
        fields_list = list(specs.values())
        _set_methods(
            klass, fields_list, init=init, repr=repr, eq=eq, order=order, frozen=frozen, unsafe_hash=unsafe_hash
        )
        if "__match_args__" not in klass.__dict__:
            type.__setattr__(klass, "__match_args__", tuple(s.name for s in fields_list if s.init))
        return klass

    return wrap if cls is None else wrap(cls)


def _specs(obj) -> dict[str, Field]:
    specs = type(obj).__dict__.get(_FIELDS) if not isinstance(obj, type) else obj.__dict__.get(_FIELDS)
    if specs is None:
        for base in (obj if isinstance(obj, type) else type(obj)).__mro__:
            specs = base.__dict__.get(_FIELDS)
            if specs is not None:
                break
    if specs is None:
        raise TypeError("must be called with a dataclass type or instance")
    return specs


def is_dataclass(obj) -> bool:
    try:
        _specs(obj)
    except TypeError:
        return False
    return True


def fields(obj) -> tuple[Field, ...]:
    return tuple(_specs(obj).values())


def _convert(value, factory):
    if is_dataclass(value) and not isinstance(value, type):
        return factory((s.name, _convert(value.__dict__[s.name], factory)) for s in fields(value))
    if isinstance(value, (list, tuple)):
        return type(value)(_convert(v, factory) for v in value)
    if isinstance(value, dict):
        return type(value)((_convert(k, factory), _convert(v, factory)) for k, v in value.items())
    return copy.deepcopy(value)


def asdict(obj, *, dict_factory=dict) -> dict:
    if not is_dataclass(obj) or isinstance(obj, type):
        raise TypeError("asdict() should be called on dataclass instances")
    return _convert(obj, dict_factory)


def astuple(obj, *, tuple_factory=tuple) -> tuple:
    if not is_dataclass(obj) or isinstance(obj, type):
        raise TypeError("astuple() should be called on dataclass instances")
    return tuple_factory(_convert(obj.__dict__[s.name], dict) for s in fields(obj))


def replace(obj, /, **changes):
    specs = _specs(obj)
    for name in changes:
        if name not in specs or not specs[name].init:
            raise TypeError(f"replace() got an unexpected field {name!r}")
    values = {s.name: changes.get(s.name, obj.__dict__[s.name]) for s in specs.values() if s.init}
    return type(obj)(**values)
