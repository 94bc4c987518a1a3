"""Load a submission's ``exercises/`` modules, one at a time, so one broken module costs
only its own part.

The package object is made here rather than by executing the submission's
``exercises/__init__.py``, its modules come from the texts the parent checked (never from
disk), and the submission's directory never goes on ``sys.path``: a shipped ``torch.py``,
``conftest.py``, ``sitecustomize.py``, ``.pyc`` or ``.so`` is never imported.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import contract
from ..results import MESSAGE_LIMIT
from ..subset.modules import REFUSED, Modules, install, read_modules

PACKAGE = "exercises"
# A module has no business keeping files open once imported; a few (a cached handle, a lazily
# imported extension) are tolerated, more is a module hoarding descriptors, which would leave
# the modules after it unable to import (EMFILE): that costs the hoarding module alone.
FD_ALLOWANCE = 16


def _open_fds() -> set[int] | None:
    """The open descriptors, or None when they cannot be listed (no /proc, or none left to list with)."""
    try:
        return {int(name) for name in os.listdir("/proc/self/fd")}
    except OSError:
        return None


def _hoarded(before: set[int] | None) -> int:
    """How many descriptors were opened since ``before`` and are still open (all of them, if
    listing needs a descriptor and none is left)."""
    if before is None:
        return 0
    after = _open_fds()
    if after is None:
        import resource

        return resource.getrlimit(resource.RLIMIT_NOFILE)[0] - len(before)
    return len(after - before)


def _release_fds(before: set[int] | None) -> None:
    """Close the descriptors opened since ``before``."""
    if before is None:
        return
    gc.collect()  # file objects of a dropped module close themselves when collected
    after = _open_fds()
    if after is None:  # raw descriptors still fill the table: try every number up to the limit
        import resource

        after = set(range(resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
    for fd in sorted(after - before):
        try:
            os.close(fd)
        except OSError:
            pass


def _short_traceback(exc: BaseException, filename_hint: str) -> str:
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} ({Path(exc.filename or filename_hint).name}, line {exc.lineno})"
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if PACKAGE in (f.filename or "") or "submission" in (f.filename or "")
    ]
    where = f" ({Path(frames[-1].filename).name}, line {frames[-1].lineno})" if frames else ""
    text = str(exc)
    if len(text) > MESSAGE_LIMIT:  # a huge message is copied into every test of the module
        text = text[:MESSAGE_LIMIT] + f" [... {len(text) - MESSAGE_LIMIT} more characters cut]"
    return f"{type(exc).__name__}: {text}{where}"


class Placeholder:
    """Stands in for a contract function whose module failed to load, so its siblings still
    import (``from .attention import multi_head_attention`` works); calling it without a
    substitute raises with the original load error."""

    def __init__(self, qualname: str, reason: str):
        self.qualname, self.reason = qualname, reason

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise ImportError(f"{self.qualname} is unavailable: {self.reason}")


def unload() -> None:
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def load_submission(
    exercises_dir: Path,
    modules: tuple[str, ...] | None = None,
    *,
    skip: dict[str, str] | None = None,
    on_module: Callable[[str], object] | None = None,
    texts: Modules | None = None,
) -> tuple[dict[str, types.ModuleType], dict[str, str]]:
    """Import ``exercises/<module>.py`` for every contract module, from ``texts``: what the
    trusted parent read and checked (``seqlab.subset.read_modules``; read here when not given).

    Returns ``(loaded, errors)``: the modules that imported, and for the others a one-line
    reason. A module whose file is missing, fails to import or lacks contract functions still
    gets a module object with placeholders, so that other modules can import from it.
    ``skip`` names modules not to import at all (with the reason: the parent's refusals, or the
    isolated runner skipping a module whose import hung or killed the process);
    ``on_module(name)`` is called before each.
    """
    modules = contract.MODULES if modules is None else modules
    skip = dict(skip or {})
    exercises_dir = Path(exercises_dir)
    texts = texts if texts is not None else read_modules(exercises_dir)
    unload()
    finder = install(texts, exercises_dir)
    package = sys.modules[PACKAGE]
    loaded: dict[str, types.ModuleType] = {}
    errors: dict[str, str] = {}
    mod: types.ModuleType | None = None

    def placeholder_module(module: str, reason: str) -> types.ModuleType:
        stand_in = types.ModuleType(f"{PACKAGE}.{module}")
        for qualname in contract.SIGNATURES:
            if qualname.startswith(module + "."):
                setattr(stand_in, qualname.split(".", 1)[1], Placeholder(qualname, reason))
        return stand_in

    def stand_in(module: str, reason: str) -> None:
        errors[module] = reason
        sys.modules[f"{PACKAGE}.{module}"] = placeholder_module(module, reason)
        setattr(package, module, sys.modules[f"{PACKAGE}.{module}"])

    # Placeholders first: a module that imports a skipped or missing sibling still loads, and a
    # refused sibling's code never runs by being imported from another module.
    for module in modules:
        if module in skip:
            stand_in(module, skip[module])
        elif module in texts.refused:
            stand_in(module, texts.refused[module])
        elif module not in finder.siblings:
            stand_in(module, f"exercises/{module}.py is missing")
    for module in modules:
        if module in errors:
            continue
        name = f"{PACKAGE}.{module}"
        if name in sys.modules:  # imported already, by a sibling loaded before it
            loaded[module] = sys.modules[name]
            continue
        if on_module is not None:
            on_module(module)
        fds_before = _open_fds()
        try:
            mod = importlib.import_module(name)
            hoarded = _hoarded(fds_before)
            if hoarded > FD_ALLOWANCE:
                raise ImportError(f"it left {hoarded} files open at import (at most {FD_ALLOWANCE} are allowed)")
        except BaseException as exc:  # SystemExit at import is a broken module, not our exit
            if isinstance(exc, KeyboardInterrupt):
                raise
            stand_in(
                module, f"exercises/{module}.py failed to import: {_short_traceback(exc, str(exercises_dir / module))}"
            )
            mod = None  # the module's objects (and the files they hold) must be collectable
            del exc
            _release_fds(fds_before)
            continue
        setattr(package, module, mod)
        loaded[module] = mod
    return loaded, errors


def resolve(loaded: dict[str, types.ModuleType], errors: dict[str, str], qualname: str) -> Callable[..., Any]:
    """The student's callable for ``qualname``, or raise ``LookupError`` with the reason."""
    module, function = qualname.split(".", 1)
    if module in errors:
        reason = errors[module]
        if REFUSED in reason:  # the full rule and line head the report, once
            reason = f"exercises/{module}.py was not loaded: it {REFUSED} (the report's first lines say where)"
        raise LookupError(reason)
    fn: object = getattr(loaded[module], function, None)
    if fn is None:
        raise LookupError(f"exercises/{module}.py has no function {function}()")
    if not callable(fn):
        raise LookupError(f"exercises/{module}.py: {function} is not a function")
    return fn


def contract_objects(loaded: dict[str, types.ModuleType], errors: dict[str, str]) -> dict[str, object]:
    """Every contract function as the submission has it: the student's callable, the
    placeholder standing in for a broken module's function (so a sibling that imported it
    still gets a correct callee swapped in), or None."""
    objects: dict[str, object] = {}
    for qualname in contract.SIGNATURES:
        module, function = qualname.split(".", 1)
        holder = loaded.get(module) or sys.modules.get(f"{PACKAGE}.{module}")
        obj = getattr(holder, function, None) if holder is not None else None
        objects[qualname] = obj if callable(obj) else None
    return objects
