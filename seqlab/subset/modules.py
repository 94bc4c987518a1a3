"""A submission's own modules: read once and checked (the parent), then served to the import
system from that checked text (the student's process, and the student's own tests).

``read_modules`` is the parent's side. It reads every ``.py`` file in ``exercises/`` exactly once,
decodes it as Python would (or refuses it), and checks it through the subset. The student's
process receives the texts in its load request and never reads a module from disk again:
``ModuleFinder`` serves ``exercises.<name>`` from those texts, compiled through the same policy,
so what runs is what was checked. The package's ``__path__`` is empty, so nothing else on disk
(a planted ``.pyc`` or ``.so``, a sub-folder) can be imported under it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import stat
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

from . import rules
from .safe_builtins import make_builtins
from .shims import SHIMS
from .transform import Problem, SourceRefused, check, decode_source, module_refusal
from .writes import guard_globals

# Every refusal of a module by the subset says this, and only such a refusal: the per-test
# messages shorten it to a pointer at the report's head, where it is given once in full.
REFUSED = "breaks the language subset"
MAX_MODULES = 64  # seven contract modules and a few helpers; past this it is not an exercise folder


@dataclass(frozen=True)
class Modules:
    """What the parent read of ``exercises/``: the checked texts and why the others are refused.

    ``subset`` False means the texts are run as plain Python (the attack bank switches the
    subset off to show that the layers beneath it hold on their own)."""

    texts: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    subset: bool = True

    def as_message(self) -> dict:
        return {"texts": dict(self.texts), "refused": dict(self.refused), "subset": self.subset}

    @classmethod
    def from_message(cls, message: dict) -> Modules:
        return cls(dict(message["texts"]), dict(message["refused"]), bool(message["subset"]))


def _refusal(filename: str, problems, limit: int = 3) -> str:
    syntax = [p for p in problems if p.rule.startswith("SyntaxError")]
    if syntax:  # not a rule of the subset: the module does not compile at all
        return f"{filename} failed to import: {syntax[0].rule} ({filename.rsplit('/', 1)[-1]}, line {syntax[0].line})"
    shown = "; ".join(p.render(filename) for p in problems[:limit])
    more = f"; and {len(problems) - limit} more" if len(problems) > limit else ""
    return f"{filename} was not loaded: it {REFUSED} for submissions ({shown}{more})"


def _in_package(name: str) -> str:
    """The file name a module is checked and reported under, whichever folder it was read from:
    the check's cache is keyed on it, so a text is checked once in a process (the parent's
    verdict, an in-process load, the next submission's identical stub)."""
    return f"{rules.PACKAGE}/{name}.py"


def read_modules(exercises: Path, *, subset: bool = True) -> Modules:
    """Every ``exercises/*.py`` of a submission, read once, decoded and checked.

    Entries that are not regular files (a symbolic link, a FIFO, a device) are refused by name,
    never opened: a link would let a submission hand in the course's own reference code."""
    texts: dict[str, str] = {}
    refused: dict[str, str] = {}
    try:
        entries = sorted(os.scandir(exercises), key=lambda e: e.name)
    except OSError:
        return Modules({}, {}, subset)
    candidates = [e for e in entries if e.name.endswith(".py") and e.name != "__init__.py"]
    for entry in candidates[:MAX_MODULES]:
        name = entry.name[:-3]
        filename = _in_package(name)
        if not name.isidentifier():
            continue  # cannot be imported by any import statement
        try:
            info = os.lstat(entry.path)
        except OSError as exc:
            refused[name] = f"{filename} cannot be read ({exc.strerror})"
            continue
        if not stat.S_ISREG(info.st_mode):
            kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
            refused[name] = f"{filename} was not loaded: it is {kind} (hand in the file itself)"
            continue
        try:
            data = _read_regular(entry.path)
            text = decode_source(data)
        except SourceRefused as exc:
            refused[name] = _refusal(filename, [exc.problem])
            continue
        except OSError as exc:
            refused[name] = f"{filename} cannot be read ({exc.strerror or exc})"
            continue
        texts[name] = text
    for entry in candidates[MAX_MODULES:]:
        refused[entry.name[:-3]] = f"{rules.PACKAGE}/{entry.name} was not loaded: more than {MAX_MODULES} modules"
    if subset:
        siblings = frozenset(texts) | frozenset(refused)
        for name in list(texts):
            verdict = check(texts[name], _in_package(name), siblings)
            if verdict.problems:
                refused[name] = _refusal(_in_package(name), list(verdict.problems))
                del texts[name]
    return Modules(texts, refused, subset)


def _read_regular(path: str) -> bytes:
    """The bytes of a regular file, opened without following a link and without blocking on a
    FIFO swapped in after the look."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 16):
            size += len(chunk)
            if size > rules.MAX_SOURCE_BYTES:
                raise SourceRefused(Problem(1, f"more than {rules.MAX_SOURCE_BYTES} bytes: not an exercise module"))
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class _Loader(importlib.abc.Loader):
    def __init__(self, finder: ModuleFinder, name: str):
        self.finder, self.name = finder, name

    def create_module(self, spec):
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        self.finder.execute(self.name, module)


class ModuleFinder(importlib.abc.MetaPathFinder):
    """Serves ``exercises.<name>`` from checked texts; nothing under the package comes from disk."""

    def __init__(self, modules: Modules, origin: Path | str = rules.PACKAGE):
        self.modules = modules
        self.origin = Path(origin)
        self.siblings = frozenset(modules.texts) | frozenset(modules.refused)

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.partition(".")
        if package != rules.PACKAGE or not name:
            return None
        if name not in self.siblings:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(self, name), origin=str(self.origin / f"{name}.py"))

    def execute(self, name: str, module: types.ModuleType) -> None:
        if name in self.modules.refused:
            raise ImportError(self.modules.refused[name], name=module.__name__)
        text, filename = self.modules.texts[name], str(self.origin / f"{name}.py")
        _remember_lines(filename, text)
        if not self.modules.subset:
            module.__dict__["__file__"] = filename
            exec(compile(text, filename, "exec", dont_inherit=True), module.__dict__)
            return
        verdict = check(text, _in_package(name), self.siblings)  # the parent's verdict, if it checked here
        if verdict.problems:  # the parent refuses these first; the student's own tests come here
            raise ImportError(_refusal(_in_package(name), list(verdict.problems)), name=module.__name__)
        module.__dict__.update(guard_globals())
        module.__dict__["__builtins__"] = make_builtins(self.guarded_import)
        module.__dict__["__file__"] = filename
        assert verdict.code is not None  # no problems: it compiled
        exec(_located(verdict.code, filename), module.__dict__)

    def guarded_import(self, name, globals=None, locals=None, fromlist=(), level=0):
        """The import statement of a submission's module."""
        from .guards import SubsetViolation, guarded_getattr

        if type(fromlist) is list and not fromlist and level == 0 and name in sys.modules:
            # Not a statement of the submission: the compiler passes None or a tuple, and the
            # submission cannot name this hook. It is the C API's ``PyImport_Import``, which
            # looks the hook up in the calling frame's builtins: the first ``torch.tensor`` made
            # at a module's top level asks for ``torch.storage`` this way. An already loaded
            # module runs nothing and goes back to the C code that asked, never to the student.
            return sys.modules[name]
        top = name.partition(".")[0]
        if level == 0 and top in self.siblings and top not in rules.ALLOWED_MODULES and top != rules.PACKAGE:
            # a helper named torch.py must not stand in for torch: allowed names always mean the library
            # ``from attention import x`` in a fallback: the sibling, under the package's name
            module = __import__(f"{rules.PACKAGE}.{name}", None, None, ("_",), 0)
            return module if fromlist else sys.modules[f"{rules.PACKAGE}.{top}"]
        if level == 0:
            problem = module_refusal(name, self.siblings)
            if problem:
                raise SubsetViolation(f"import {name}: {problem}")
        if level > 1:
            raise SubsetViolation("an import from above the exercises package")
        module = __import__(name, globals, locals, fromlist, level)
        if level == 0 and (name in SHIMS or (not fromlist and top in SHIMS)):
            # the vetted shim stands for the module (``import collections.abc`` binds the
            # top, the shim; ``from collections.abc import Mapping`` takes the real submodule)
            module = SHIMS[name] if fromlist else SHIMS[top]
        if fromlist and level == 0:
            target = module if name in SHIMS else sys.modules.get(name, module)
            for item in fromlist:
                if item != "*" and hasattr(target, item):
                    guarded_getattr(target, item)  # refuses ``from torch import load`` by any route
        return module


def _located(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` and every code object compiled inside it, as if compiled from ``filename``
    (tracebacks and the line cache name the file where the submission lies)."""
    consts = tuple(_located(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _remember_lines(filename: str, text: str) -> None:
    """Tracebacks show the checked text's lines, whatever is (or is not) on disk at that path."""
    import linecache

    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)


def install(modules: Modules, origin: Path | str) -> ModuleFinder:
    """Make ``exercises`` an empty-path package served by a new finder (replacing an older one)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, ModuleFinder)]
    finder = ModuleFinder(modules, origin)
    sys.meta_path.insert(0, finder)
    package = types.ModuleType(rules.PACKAGE)
    package.__path__ = []
    package.__package__ = rules.PACKAGE
    sys.modules[rules.PACKAGE] = package
    return finder
