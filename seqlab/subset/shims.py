"""The vetted shims: what a submission gets when it imports a module whose standard-library code
runs strings or reaches the interpreter (``surface.py`` lists such code; the audit of the allowed
surface must list nothing).

Each shim is a module object named like the module it stands for, holding only what honest code
reaches for; the guarded import hands it out, and the runtime guards refuse the real module by
identity however it is reached (``re.functools`` is the real ``functools``). The shims are the
course's trusted code: they run unguarded, so each is written to be read in one sitting, and the
audit walks them like any other module on the surface.

* ``dataclasses`` (``shim_dataclasses.py``): methods from closures, nothing from strings.
* ``enum`` (``shim_enum.py``): members from the class body, no functional API.
* ``logging`` (``shim_logging.py``): console logging; records of a few keys, ``%``-formats only.
* ``typing`` and ``typing_extensions`` (``shim_typing.py``): inert markers, ``NamedTuple``.
* ``collections``: the real containers, and ``namedtuple`` without ``eval`` or frames; not
  ``UserString`` (its ``format`` runs the data as a template, past the guards' formatter).
* ``functools``: ``partial``, ``reduce``, ``cmp_to_key`` (C), ``lru_cache`` and ``cache`` (the C
  cache), ``wraps`` copying three named attributes onto the submission's own function. Not ``singledispatch`` (evaluates string
  annotations), ``total_ordering`` or ``cached_property`` (their code reads attributes by
  computed names).
* ``warnings``: the real ``warn`` and filters; ``catch_warnings`` without ``record``.
* ``traceback``: the exception being handled, type and message, never the frames.
* ``pprint``: ``pprint``, ``pformat``, ``pp`` over ``repr``, one item a line when too wide.
* ``contextlib``: ``contextmanager`` over a generator, the real ``suppress``, ``nullcontext``,
  ``closing`` and ``ExitStack``; not ``redirect_stdout`` (sets ``sys`` attributes by name).
"""

from __future__ import annotations

import collections as _collections
import collections.abc as _abc
import contextlib as _contextlib
import functools as _functools
import sys
import types
import warnings as _warnings

from . import shim_dataclasses, shim_enum, shim_logging, shim_typing


def wraps(wrapped, assigned=None, updated=None):
    """``functools.wraps``: the wrapper takes the wrapped function's name, qualified name,
    docstring and module, by their literal names (``assigned``/``updated`` are not in the subset)."""
    if assigned is not None or updated is not None:
        raise TypeError("functools.wraps(assigned=..., updated=...) is not in the subset")

    def decorate(wrapper):
        return update_wrapper(wrapper, wrapped)

    return decorate


def _copy_names(wrapper, wrapped):
    """Name, qualified name and docstring (the wrapper keeps its own module, so its owner)."""
    for_name = getattr(wrapped, "__name__", None)
    if for_name is not None:
        wrapper.__name__ = for_name
    qualname = getattr(wrapped, "__qualname__", None)
    if qualname is not None:
        wrapper.__qualname__ = qualname
    wrapper.__doc__ = getattr(wrapped, "__doc__", None)
    return wrapper


def update_wrapper(wrapper, wrapped):
    """The names copied onto a function of the submission's own, never onto another's: renaming
    ``torch.nn.functional.relu`` would pass by the write guard, which refuses it to the student."""
    if not shim_dataclasses.submission_owns(wrapper):
        raise TypeError("functools.wraps applies to a function of your own")
    return _copy_names(wrapper, wrapped)


def lru_cache(maxsize=128, typed=False):
    """``functools.lru_cache``, on the C cache (``@lru_cache`` and ``@lru_cache(maxsize=...)``)."""
    if callable(maxsize) and isinstance(typed, bool):
        function, size = maxsize, 128
        return _copy_names(_functools._lru_cache_wrapper(function, size, typed, _functools._CacheInfo), function)
    if maxsize is not None and not isinstance(maxsize, int):
        raise TypeError("Expected first argument to be an integer, a callable, or None")

    def decorate(function):
        size = maxsize if maxsize is None or maxsize >= 0 else 0
        return _copy_names(_functools._lru_cache_wrapper(function, size, typed, _functools._CacheInfo), function)

    return decorate


def cache(function):
    return lru_cache(maxsize=None)(function)


class catch_warnings:
    """Saves the warning filters on entry and puts them back on exit (``record`` is refused)."""

    def __init__(self, *, record=False, action=None, category=Warning, lineno=0, append=False):
        if record:
            raise TypeError("catch_warnings(record=True) is not in the subset")
        self.action, self.category, self.lineno, self.append = action, category, lineno, append
        self.saved: list | None = None

    def __enter__(self):
        self.saved = list(_warnings.filters)
        if self.action is not None:
            _warnings.simplefilter(self.action, self.category, self.lineno, self.append)

    def __exit__(self, *exc):
        if self.saved is not None:  # entered: put back what was there
            _warnings.filters[:] = self.saved
            _warnings._filters_mutated()


def _exception_lines(exc) -> list[str]:
    if exc is None:
        return ["NoneType: None\n"]
    message = str(exc)
    return [f"{type(exc).__name__}: {message}\n" if message else f"{type(exc).__name__}\n"]


def format_exception_only(exc, value=None):
    return _exception_lines(value if value is not None or isinstance(exc, type) else exc)


def format_exception(exc, value=None, tb=None, limit=None, chain=True):
    lines = ["Traceback (the frames are not shown under the language subset)\n"]
    return lines + format_exception_only(exc, value)


def format_exc(limit=None, chain=True) -> str:
    return "".join(format_exception(sys.exc_info()[1]))


def print_exception(exc, value=None, tb=None, limit=None, file=None, chain=True) -> None:
    print("".join(format_exception(exc, value)), end="", file=sys.stderr if file is None else file)


def print_exc(limit=None, file=None, chain=True) -> None:
    print_exception(sys.exc_info()[1], file=file)


class _GeneratorContext:
    """The context manager ``@contextmanager`` makes: enter runs the generator to its ``yield``,
    exit runs it on, or throws the exception in."""

    def __init__(self, generator):
        self.generator = generator

    def __enter__(self):
        try:
            return next(self.generator)
        except StopIteration:
            raise RuntimeError("generator didn't yield") from None

    def __exit__(self, kind, value, tb):
        if kind is None:
            try:
                next(self.generator)
            except StopIteration:
                return False
            raise RuntimeError("generator didn't stop")
        if value is None:
            value = kind()
        try:
            self.generator.throw(value)
        except StopIteration as stop:
            return stop is not value
        except BaseException as raised:
            if raised is value:
                return False
            raise
        raise RuntimeError("generator didn't stop after throw()")


def contextmanager(function):
    def helper(*args, **kwargs):
        return _GeneratorContext(function(*args, **kwargs))

    return _copy_names(helper, function)


def pformat(obj, indent=1, width=80, depth=None, *, compact=False, sort_dicts=True, underscore_numbers=False):
    """``pprint.pformat``: a dict, list or tuple too long for ``width`` one item a line, else ``repr``
    (the standard library's printer reaches the real dataclasses and regular expressions)."""
    text = repr(obj)  # a container holding itself shows as [...] here, and is not opened below
    if len(text) <= width or not isinstance(obj, (dict, list, tuple)) or not obj or "[...]" in text or "{...}" in text:
        return text
    pad = " " * indent
    if isinstance(obj, dict):
        keys = sorted(obj, key=repr) if sort_dicts else list(obj)
        items = [f"{k!r}: {pformat(obj[k], indent, width - indent)}" for k in keys]
        opening, closing = "{", "}"
    else:
        items = [pformat(v, indent, width - indent) for v in obj]
        opening, closing = ("[", "]") if isinstance(obj, list) else ("(", ")")
    body = (",\n" + pad).join(item.replace("\n", "\n" + pad) for item in items)
    return f"{opening}{body}{closing}"


def pprint(obj, stream=None, indent=1, width=80, depth=None, *, compact=False, sort_dicts=True, **_):
    print(pformat(obj, indent, width, depth, sort_dicts=sort_dicts), file=sys.stdout if stream is None else stream)


def _module(name: str, doc: str, values: dict) -> types.ModuleType:
    module = types.ModuleType(name, doc)
    module.__dict__.update(values)
    return module


def _names(source, names: str) -> dict:
    return {name: vars(source)[name] for name in names.split()}


_TYPING = _module(
    "typing",
    shim_typing.__doc__ or "",
    {name: shim_typing._Marker(name) for name in shim_typing.MARKERS}
    | _names(shim_typing, "TYPE_CHECKING Generic NamedTuple Protocol TypeVar cast final overload runtime_checkable"),
)
_COLLECTIONS = _module(
    "collections",
    "The real containers; namedtuple without eval.",
    _names(_collections, "deque defaultdict OrderedDict Counter ChainMap UserDict UserList")
    | {"abc": _abc, "namedtuple": shim_typing.namedtuple},
)
_FUNCTOOLS = _module(
    "functools",
    "partial, reduce, cmp_to_key, lru_cache, cache, wraps.",
    _names(_functools, "partial reduce cmp_to_key")
    | {"lru_cache": lru_cache, "cache": cache, "wraps": wraps, "update_wrapper": update_wrapper},
)
_WARNINGS = _module(
    "warnings",
    "warn and the filters; catch_warnings without record.",
    _names(_warnings, "warn filterwarnings simplefilter resetwarnings") | {"catch_warnings": catch_warnings},
)
_TRACEBACK = _module(
    "traceback",
    "The exception being handled, without its frames.",
    {
        "print_exc": print_exc,
        "format_exc": format_exc,
        "print_exception": print_exception,
        "format_exception": format_exception,
        "format_exception_only": format_exception_only,
    },
)
_CONTEXTLIB = _module(
    "contextlib",
    "contextmanager, suppress, nullcontext, closing, ExitStack.",
    _names(_contextlib, "suppress nullcontext closing ExitStack AbstractContextManager")
    | {"contextmanager": contextmanager},
)
_PPRINT = _module("pprint", "pprint and pformat over repr.", {"pprint": pprint, "pformat": pformat, "pp": pprint})
_DATACLASSES = _module(
    "dataclasses", shim_dataclasses.__doc__ or "", _names(shim_dataclasses, " ".join(shim_dataclasses.__all__))
)
_ENUM = _module("enum", shim_enum.__doc__ or "", _names(shim_enum, " ".join(shim_enum.__all__)))
_LOGGING = _module("logging", shim_logging.__doc__ or "", _names(shim_logging, " ".join(shim_logging.__all__)))

# Module name -> the shim a submission gets in its place.
SHIMS: dict[str, types.ModuleType] = {
    "dataclasses": _DATACLASSES,
    "logging": _LOGGING,
    "typing": _TYPING,
    "typing_extensions": _TYPING,
    "collections": _COLLECTIONS,
    "functools": _FUNCTOOLS,
    "warnings": _WARNINGS,
    "traceback": _TRACEBACK,
    "contextlib": _CONTEXTLIB,
    "pprint": _PPRINT,
    "enum": _ENUM,
}


def exports(name: str) -> frozenset[str]:
    """The names a shim holds (the subset's ``ALLOWED_ONLY`` for that module)."""
    return frozenset(n for n in vars(SHIMS[name]) if not n.startswith("_"))


def impostor(module: types.ModuleType) -> str | None:
    """Why a module object is refused although its name is allowed: the real module a shim
    stands for, reached through another module's attribute (``re.functools``)."""
    shim = SHIMS.get(module.__name__)
    if shim is not None and module is not shim:
        return f"the standard library's {module.__name__} (import {module.__name__} gives the subset's own)"
    return None
