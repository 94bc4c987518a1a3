"""``typing`` names as inert markers, and a ``namedtuple`` made without ``eval``.

The standard library's ``typing`` evaluates string annotations (``get_type_hints``,
``ForwardRef``), and ``collections.namedtuple`` writes its ``__new__`` as source and ``eval``s it,
reading the caller's frame for its module. Here a hint is a marker that subscripts, unions and
calls into nothing: ``Optional[Tensor]``, ``Dict[str, Tensor]``, ``Callable[..., Tensor]`` all
give back a marker, and nothing ever reads the text of an annotation. ``Protocol`` and
``Generic`` are plain base classes, ``NamedTuple`` as a base makes a tuple class from the
annotations, ``TypeVar``, ``cast``, ``overload``, ``final`` and ``TYPE_CHECKING`` do what they do at
run time, which is next to nothing.
"""

from __future__ import annotations

import keyword
import operator

__all__ = ["TYPE_CHECKING", "Generic", "NamedTuple", "Protocol", "TypeVar", "cast", "final", "namedtuple"]
__all__ += ["MARKERS", "overload", "runtime_checkable"]

TYPE_CHECKING = False


class _Marker:
    """A type hint at run time: its name, and nothing else."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"typing.{self._name}"

    def __getitem__(self, item):
        return self

    def __or__(self, other):
        return self

    def __ror__(self, other):
        return self

    def __call__(self, *args, **kwargs):
        raise TypeError(f"typing.{self._name} cannot be instantiated (it is a type hint)")


# The hints honest code writes; each is a marker.
MARKERS = (
    "Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet", "Callable", "Sequence",
    "Mapping", "MutableMapping", "MutableSequence", "Iterable", "Iterator", "Generator", "Type",
    "ClassVar", "Final", "Literal", "TypeAlias", "Annotated", "DefaultDict", "Deque", "Counter",
    "OrderedDict", "Hashable", "Sized", "Collection", "Container", "Reversible", "Awaitable",
    "NoReturn", "Never", "Self", "LiteralString", "Concatenate", "ParamSpec", "TypeGuard",
    "SupportsFloat", "SupportsInt", "SupportsIndex", "SupportsAbs", "SupportsRound", "AbstractSet",
)  # fmt: skip


class _Generic:
    """A plain base class; ``Base[T]`` is the class itself."""

    __slots__ = ()

    def __class_getitem__(cls, item):
        return cls


class Generic(_Generic):
    __slots__ = ()


class Protocol(_Generic):
    __slots__ = ()


def runtime_checkable(cls):
    return cls


def TypeVar(name, *constraints, bound=None, covariant=False, contravariant=False):
    return _Marker(str(name))


def cast(typ, value):
    return value


def overload(function):
    return function


def final(thing):
    return thing


def namedtuple(typename, field_names, *, defaults=None, rename=False, module=None):
    """A tuple class with named fields, built from closures (``module``: its ``__module__``)."""
    if isinstance(field_names, str):
        field_names = field_names.replace(",", " ").split()
    names = [str(n) for n in field_names]
    for name in [typename, *names]:
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"Type names and field names must be valid identifiers: {name!r}")
    if any(n.startswith("_") for n in names) or len(set(names)) != len(names):
        raise ValueError("Field names cannot start with an underscore or repeat")
    defaults = tuple(defaults or ())
    if len(defaults) > len(names):
        raise TypeError("Got more default values than field names")
    field_defaults = dict(zip(names[len(names) - len(defaults) :], defaults))
    return _tuple_class(typename, names, field_defaults, {}, module)


def _tuple_class(typename, names, field_defaults, body, module):
    count = len(names)

    def __new__(cls, *args, **kwargs):
        if len(args) > count:
            raise TypeError(f"{typename} takes {count} positional arguments but {len(args)} were given")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in values:
                raise TypeError(f"{typename} got an unexpected or repeated argument {key!r}")
            values[key] = value
        for name in names:
            if name not in values:
                if name not in field_defaults:
                    raise TypeError(f"{typename} missing required argument: {name!r}")
                values[name] = field_defaults[name]
        return tuple.__new__(cls, [values[n] for n in names])

    def __repr__(self):
        return f"{type(self).__name__}(" + ", ".join(f"{n}={v!r}" for n, v in zip(names, self)) + ")"

    def _asdict(self):
        return dict(zip(names, self))

    def _replace(self, **changes):
        return type(self)(**{**dict(zip(names, self)), **changes})

    def _make(cls, iterable):
        return tuple.__new__(cls, iterable)

    def __getnewargs__(self):
        return tuple(self)

    namespace = {
        "__slots__": (),
        "__new__": __new__,
        "__repr__": __repr__,
        "_asdict": _asdict,
        "_replace": _replace,
        "_make": classmethod(_make),
        "__getnewargs__": __getnewargs__,
        "_fields": tuple(names),
        "_field_defaults": dict(field_defaults),
        "__match_args__": tuple(names),
    }
    namespace.update(
        {n: property(operator.itemgetter(i), doc=f"Alias for field number {i}") for i, n in enumerate(names)}
    )
    namespace.update(body)
    if module is not None:
        namespace["__module__"] = module
    return type(typename, (tuple,), namespace)


class _NamedTupleMeta(type):
    """``class State(NamedTuple): h: Tensor`` makes a tuple class from the annotations."""

    def __new__(mcls, typename, bases, namespace):
        if not bases:  # the base itself
            return super().__new__(mcls, typename, bases, namespace)
        if _NamedTupleBase not in bases:
            raise TypeError("a NamedTuple class cannot be subclassed")
        annotations = namespace.get("__annotations__", {})
        names = [str(n) for n in annotations]
        defaults = {n: namespace[n] for n in names if n in namespace}
        body = {k: v for k, v in namespace.items() if k not in names and k not in ("__annotations__", "__qualname__")}
        cls = namedtuple(typename, names, defaults=[defaults[n] for n in names if n in defaults])
        for key, value in body.items():
            if key not in ("__slots__", "__dict__", "__weakref__"):
                type.__setattr__(cls, key, value)
        if [n for n in names if n in defaults] != names[len(names) - len(defaults) :]:
            raise TypeError("Non-default namedtuple field cannot follow default field")
        return cls


class _NamedTupleBase(metaclass=_NamedTupleMeta):
    pass


class _NamedTupleFactory:
    """``NamedTuple`` as a base (``class S(NamedTuple)``) or called (``NamedTuple("S", [...])``)."""

    def __mro_entries__(self, bases):
        return (_NamedTupleBase,)

    def __call__(self, typename, fields=()):
        return namedtuple(typename, [name for name, _ in fields])


NamedTuple = _NamedTupleFactory()
