"""The ``enum`` a submission imports: ``Enum``, ``IntEnum``, ``StrEnum``, ``auto`` and ``unique``,
with no functional API.

The standard library's ``EnumType`` builds a class from a string of names (``Enum("Color", "RED
GREEN")``) reading the caller's frame for its module, and reads members by computed attribute names
as it makes a class. Here the members are the class body's plain values, made when the class is
(its metaclass walks the body's dict, never a string), and looked up by value (``Norm(1)``), by
name (``Norm["PRE"]``), or iterated in order. What honest code uses is kept: ``.name``,
``.value``, identity and ``==``, ``IntEnum`` members as ints (indices, arithmetic), ``auto()``,
aliases, methods in the body, ``copy``/``deepcopy`` giving the member itself.
"""

from __future__ import annotations

__all__ = ["Enum", "EnumMeta", "IntEnum", "StrEnum", "auto", "unique"]


class auto:
    """A member's value, chosen when the class is made: the next integer, or for ``StrEnum`` the
    member's name in lower case."""


def _is_member(key: str, value) -> bool:
    if key.startswith("_") or (callable(value) and not isinstance(value, auto)):
        return False
    return not isinstance(value, (staticmethod, classmethod, property))


class EnumMeta(type):
    """Makes an enumeration's members from its body; iterates, counts and looks them up."""

    def __new__(mcls, name, bases, namespace):
        cls = super().__new__(mcls, name, bases, dict(namespace))
        for base in bases:
            if isinstance(base, EnumMeta) and base.__dict__.get("_enum_members", {}):
                raise TypeError(f"{name}: cannot extend the enumeration {base.__name__}")
        members: dict[str, object] = {}
        by_value: dict[object, object] = {}
        last = 0
        for key, value in namespace.items():
            if not _is_member(key, value):
                continue
            if isinstance(value, auto):
                value = key.lower() if issubclass(cls, str) else last + 1
            if isinstance(value, int) and not isinstance(value, bool):
                last = value
            member = by_value.get(value)
            if member is None:
                member = _new_member(cls, value)
                member.__dict__["_enum_name"] = key
                member.__dict__["_enum_value"] = value
                by_value[value] = member
            members[key] = member
            type.__setattr__(cls, key, member)
        type.__setattr__(cls, "_enum_members", members)
        type.__setattr__(cls, "_enum_by_value", by_value)
        return cls

    def __call__(cls, value):
        by_value = cls.__dict__.get("_enum_by_value", {})
        if isinstance(value, cls):
            return value
        try:
            return by_value[value]
        except (KeyError, TypeError):
            raise ValueError(f"{value!r} is not a valid {cls.__qualname__}") from None

    def __getitem__(cls, name):
        return cls.__dict__["_enum_members"][name]

    def __iter__(cls):
        return iter(cls.__dict__.get("_enum_by_value", {}).values())

    def __len__(cls):
        return len(cls.__dict__.get("_enum_by_value", {}))

    def __contains__(cls, member):
        return isinstance(member, cls) and member in cls.__dict__.get("_enum_by_value", {}).values()

    def __setattr__(cls, name, value):
        if name in cls.__dict__.get("_enum_members", {}):
            raise AttributeError(f"cannot reassign member {name!r}")
        super().__setattr__(name, value)

    def __repr__(cls):
        return f"<enum {cls.__name__!r}>"


def _new_member(cls, value):
    if issubclass(cls, int):
        return int.__new__(cls, value)
    if issubclass(cls, str):
        return str.__new__(cls, value)
    return object.__new__(cls)


class Enum(metaclass=EnumMeta):
    """An enumeration: ``class Norm(Enum): PRE = auto()``."""

    @property
    def name(self):
        return self.__dict__["_enum_name"]

    @property
    def value(self):
        return self.__dict__["_enum_value"]

    def __repr__(self):
        return f"<{type(self).__name__}.{self.name}: {self.value!r}>"

    def __str__(self):
        return f"{type(self).__name__}.{self.name}"

    def __hash__(self):
        return hash(self.name)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (type(self), (self.value,))


class IntEnum(int, Enum):
    """Members that are ints: ``x[Gate.I]``, ``Gate.F + 1``."""

    def __str__(self):
        return int.__repr__(self)

    __repr__ = Enum.__repr__
    __format__ = int.__format__
    __hash__ = int.__hash__


class StrEnum(str, Enum):
    """Members that are strings; ``auto()`` gives the name in lower case."""

    def __str__(self):
        return str.__str__(self)

    __repr__ = Enum.__repr__
    __format__ = str.__format__
    __hash__ = str.__hash__


def unique(cls):
    """Refuse aliases: two names for one value."""
    members = cls.__dict__["_enum_members"]
    aliases = [name for name, member in members.items() if member.name != name]
    if aliases:
        raise ValueError(f"duplicate values found in {cls!r}: {', '.join(aliases)}")
    return cls
