"""The ``logging`` a submission imports: console logging, with nothing that reads frames or
attributes through a format string.

The standard library's records are built by walking the caller's frames (``findCaller``), its
``{``- and ``$``-style formats read any attribute of a record's values, and its handlers reach files,
sockets and the process's root logger. Here a record is a flat dict of a few strings (name, level,
message, time), a format is ``%``-style only and can name nothing but those keys, and a handler
writes to a stream the submission already holds (``sys.stderr`` by default). What honest code
uses is kept: ``getLogger(__name__)``, the level methods with lazy ``%`` arguments,
``basicConfig(level=..., format=...)``, ``setLevel``, ``NullHandler``, ``StreamHandler`` and
``Formatter``, ``exception()`` inside an ``except``.
"""

from __future__ import annotations

import sys
import time

__all__ = ["CRITICAL", "DEBUG", "ERROR", "FATAL", "INFO", "NOTSET", "WARN", "WARNING"]
__all__ += ["Formatter", "Handler", "Logger", "NullHandler", "StreamHandler", "basicConfig", "critical"]
__all__ += ["debug", "disable", "error", "exception", "getLevelName", "getLogger", "info", "log", "warning"]

CRITICAL = FATAL = 50
ERROR = 40
WARNING = WARN = 30
INFO = 20
DEBUG = 10
NOTSET = 0
_NAMES = {CRITICAL: "CRITICAL", ERROR: "ERROR", WARNING: "WARNING", INFO: "INFO", DEBUG: "DEBUG", NOTSET: "NOTSET"}
_LEVELS = {name: level for level, name in _NAMES.items()} | {"WARN": WARNING, "FATAL": CRITICAL}
# The keys a format may name: everything else a real record holds comes from frames or processes.
_KEYS = ("name", "levelname", "levelno", "message", "asctime", "created", "msecs", "relativeCreated")
_START = time.time()


def getLevelName(level):
    if isinstance(level, str):
        return _LEVELS.get(level.upper(), f"Level {level}")
    return _NAMES.get(level, f"Level {level}")


def _level(level) -> int:
    if isinstance(level, str):
        if level.upper() not in _LEVELS:
            raise ValueError(f"Unknown level: {level!r}")
        return _LEVELS[level.upper()]
    return int(level)


class Formatter:
    """``%``-style formats over the record's few keys (``style`` other than ``%`` is refused)."""

    def __init__(self, fmt=None, datefmt=None, style="%"):
        if style != "%":
            raise ValueError("only %-style formats are in the subset (a {-style format reads attributes)")
        self.fmt = "%(message)s" if fmt is None else str(fmt)
        self.datefmt = datefmt
        self.format_record(_record("check", INFO, "", 0.0))  # a key it cannot name fails here, not mid-run

    def format_record(self, record: dict) -> str:
        try:
            return self.fmt % record
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"logging format {self.fmt!r}: {exc}") from None

    def format(self, record: dict) -> str:
        return self.format_record(record)


def _record(name: str, level: int, message: str, created: float) -> dict:
    return {
        "name": name,
        "levelname": getLevelName(level),
        "levelno": level,
        "message": message,
        "asctime": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(created)),
        "created": created,
        "msecs": (created % 1) * 1000,
        "relativeCreated": (created - _START) * 1000,
    }


class Handler:
    def __init__(self, level=NOTSET):
        self.level = _level(level)
        self.formatter = Formatter()

    def setLevel(self, level) -> None:
        self.level = _level(level)

    def setFormatter(self, formatter) -> None:
        if not isinstance(formatter, Formatter):
            raise TypeError("setFormatter() takes a logging.Formatter")
        self.formatter = formatter

    def handle(self, record: dict) -> None:
        if record["levelno"] >= self.level:
            self.emit(record)

    def emit(self, record: dict) -> None:
        """A plain Handler writes nothing."""


class NullHandler(Handler):
    pass


class StreamHandler(Handler):
    def __init__(self, stream=None):
        super().__init__()
        self.stream = stream

    def emit(self, record: dict) -> None:
        stream = sys.stderr if self.stream is None else self.stream
        print(self.formatter.format_record(record), file=stream)

    def flush(self) -> None:
        """Each line is written whole."""


class _Config:
    """The process's logging state: the level ``disable()`` set."""

    disabled = NOTSET - 1


_LOGGERS: dict[str, Logger] = {}  # the loggers made so far, by name


class Logger:
    def __init__(self, name: str, level=NOTSET):
        self.name, self.level = name, _level(level)
        self.handlers: list = []
        self.propagate, self.disabled = True, False

    def setLevel(self, level) -> None:
        self.level = _level(level)

    def getEffectiveLevel(self) -> int:
        return self.level or _ROOT.level

    def isEnabledFor(self, level) -> bool:
        return level > _Config.disabled and level >= self.getEffectiveLevel()

    def addHandler(self, handler) -> None:
        if not isinstance(handler, Handler):
            raise TypeError("addHandler() takes a logging.Handler")
        if handler not in self.handlers:
            self.handlers.append(handler)

    def removeHandler(self, handler) -> None:
        if handler in self.handlers:
            self.handlers.remove(handler)

    def hasHandlers(self) -> bool:
        return bool(self.handlers or (self.propagate and _ROOT.handlers))

    def log(self, level, msg, *args, exc_info=None, stack_info=False, stacklevel=1, extra=None) -> None:
        if self.disabled or not self.isEnabledFor(level):
            return
        message = str(msg) % args if args else str(msg)
        if exc_info:
            message += "\n" + _exception_text()
        record = _record(self.name, level, message, time.time())
        targets = list(self.handlers)
        if self.propagate and self is not _ROOT:
            targets += _ROOT.handlers
        for handler in targets:
            handler.handle(record)
        if not targets and level >= WARNING:  # the standard library's "last resort": stderr
            print(message, file=sys.stderr)

    def debug(self, msg, *args, **kwargs) -> None:
        self.log(DEBUG, msg, *args, **kwargs)

    def info(self, msg, *args, **kwargs) -> None:
        self.log(INFO, msg, *args, **kwargs)

    def warning(self, msg, *args, **kwargs) -> None:
        self.log(WARNING, msg, *args, **kwargs)

    warn = warning

    def error(self, msg, *args, **kwargs) -> None:
        self.log(ERROR, msg, *args, **kwargs)

    def exception(self, msg, *args, exc_info=True, **kwargs) -> None:
        self.log(ERROR, msg, *args, exc_info=exc_info, **kwargs)

    def critical(self, msg, *args, **kwargs) -> None:
        self.log(CRITICAL, msg, *args, **kwargs)

    fatal = critical

    def getChild(self, suffix: str):
        return getLogger(f"{self.name}.{suffix}" if self is not _ROOT else suffix)


def _exception_text() -> str:
    exc = sys.exc_info()[1]
    return "NoneType: None" if exc is None else f"{type(exc).__name__}: {exc}"


_ROOT = Logger("root", WARNING)


def getLogger(name=None) -> Logger:
    if not name or name == "root":
        return _ROOT
    if not isinstance(name, str):
        raise TypeError("A logger name must be a string")
    if name not in _LOGGERS:
        _LOGGERS[name] = Logger(name)
    return _LOGGERS[name]


def basicConfig(*, level=None, format=None, datefmt=None, style="%", stream=None, force=False, handlers=None):
    """Configure the root logger once (or again with ``force=True``); ``filename`` is not in the subset."""
    if _ROOT.handlers and not force:
        return
    _ROOT.handlers = []
    formatter = Formatter(format or "%(levelname)s:%(name)s:%(message)s", datefmt, style)
    for handler in handlers or [StreamHandler(stream)]:
        if handlers is None:
            handler.setFormatter(formatter)
        _ROOT.addHandler(handler)
    if level is not None:
        _ROOT.setLevel(level)


def disable(level=CRITICAL) -> None:
    _Config.disabled = _level(level)


def log(level, msg, *args, **kwargs) -> None:
    _ROOT.log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs) -> None:
    _ROOT.log(DEBUG, msg, *args, **kwargs)


def info(msg, *args, **kwargs) -> None:
    _ROOT.log(INFO, msg, *args, **kwargs)


def warning(msg, *args, **kwargs) -> None:
    _ROOT.log(WARNING, msg, *args, **kwargs)


def error(msg, *args, **kwargs) -> None:
    _ROOT.log(ERROR, msg, *args, **kwargs)


def exception(msg, *args, **kwargs) -> None:
    _ROOT.log(ERROR, msg, *args, exc_info=True, **kwargs)


def critical(msg, *args, **kwargs) -> None:
    _ROOT.log(CRITICAL, msg, *args, **kwargs)
