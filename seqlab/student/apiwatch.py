"""Forbidden Python-level APIs recorded at run time, however the name was reached.

The grader's TorchFunctionMode names every torch function that dispatches through
``__torch_function__``; torch.optim's optimizers and functional forms, ``torch.nn.utils``'s
clipping, the ``torch.nn`` module classes and a few autograd entry points are plain Python that
never does, so the mode saw only their inner arithmetic (``foreach=False`` reaches no fused kernel
either). The static scan reads names in the source, and a name can be reached by more spellings
than any scan follows (a tuple-unpacked alias, a class attribute, a partial, a lambda, a helper
module, a sibling contract function).

So the real objects are wrapped, once, before any student code is imported: a class's own
``__init__``/``step``/``forward``/``__enter__`` in place (every alias, subclass and instance calls
the wrapper), a function by rebinding it in every loaded ``torch`` module that holds it (the
student reaches it only through those). The wrapper reports ``"<public name>"`` (the name the
forbidden-operation rules use: ``torch.optim.SGD``, ``torch.nn.utils.clip_grad_norm_``) to the
sink of the graded call running in this thread, if any, then calls the original. Outside a graded
call it only passes through.

Self-contained (the standard library and torch): the grader's child and the student's own tests
(their ``_apiwatch.py``) record the same names.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch

# The methods that run an optimizer, a module or a context: wrapped where a class defines them.
_OPTIMIZER_METHODS = ("__init__", "step")
_MODULE_METHODS = ("__init__", "forward")
# Autograd entry points by public module: the names (None: every public function of the module).
_AUTOGRAD: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    ("torch.autograd", ("grad", "backward")),
    ("torch.autograd.functional", None),
    ("torch.autograd.forward_ad", ("make_dual", "unpack_dual")),
    ("torch.func", None),
)
COMPLEX = "a complex tensor was made"  # the words after a complex dtype's name (complex_name)

_LOCAL = threading.local()  # .sinks: the recorders of this thread's graded calls, innermost last
_INSTALLED: list[bool] = []


def _sink() -> Callable[[str], None] | None:
    sinks = getattr(_LOCAL, "sinks", None)
    return sinks[-1] if sinks else None


def _watched(original: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``original``, reporting ``name`` first. No ``__wrapped__``: nothing leads back to it."""

    def watched(*args: Any, **kwargs: Any) -> Any:
        sinks = getattr(_LOCAL, "sinks", None)
        if sinks:
            sinks[-1](name)
        return original(*args, **kwargs)

    for attribute in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(watched, attribute, getattr(original, attribute, None))
    watched.__watched_api__ = name  # type: ignore[attr-defined]  # marks it: never wrapped twice
    return watched


# Each watched class by identity, with its public name: a method a base class defines (the
# Optimizer's __init__, RNNBase's) is reported by the name of the instance's class when that is
# a watched one (torch.optim.SGD, not torch.optim.Optimizer), so the feedback names what was used.
_CLASSES: dict[int, tuple[type, str]] = {}


def _watched_method(original: Callable[..., Any], name: str) -> Callable[..., Any]:
    def watched(self: Any, *args: Any, **kwargs: Any) -> Any:
        sinks = getattr(_LOCAL, "sinks", None)
        if sinks:
            known = _CLASSES.get(id(type(self)))
            sinks[-1](known[1] if known is not None and known[0] is type(self) else name)
        return original(self, *args, **kwargs)

    for attribute in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(watched, attribute, getattr(original, attribute, None))
    watched.__watched_api__ = name  # type: ignore[attr-defined]
    return watched


def _wrap_methods(cls: type, methods: tuple[str, ...], name: str) -> None:
    _CLASSES[id(cls)] = (cls, name)
    for method in methods:
        original = cls.__dict__.get(method)
        if isinstance(original, types.FunctionType) and not hasattr(original, "__watched_api__"):
            setattr(cls, method, _watched_method(original, name))


def _public(namespace: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    return ((key, value) for key, value in list(namespace.items()) if not key.startswith("_"))


def _functions() -> dict[int, tuple[Any, str]]:
    """Every watched function by identity: (the function, its public name). Classes are wrapped
    here as they are found."""
    import torch.autograd.forward_ad
    import torch.autograd.functional
    import torch.func
    import torch.nn.utils
    import torch.optim

    found: dict[int, tuple[Any, str]] = {}

    def add(function: Any, name: str) -> None:
        if isinstance(function, types.FunctionType) and id(function) not in found:
            found[id(function)] = (function, name)

    optimizer = torch.optim.Optimizer
    for module_name, module in sorted(sys.modules.items()):
        if module_name != "torch.optim" and not module_name.startswith("torch.optim."):
            continue
        for key, value in _public(vars(module)):
            if isinstance(value, type) and issubclass(value, optimizer):
                _wrap_methods(value, _OPTIMIZER_METHODS, f"torch.optim.{value.__name__}")
            elif getattr(value, "__module__", "").startswith("torch.optim"):
                add(value, f"{value.__module__}.{key}")  # the functional forms: torch.optim.adam.adam
    for key, value in _public(vars(torch.nn.utils)):
        if getattr(value, "__module__", "") == "torch.nn.utils.clip_grad":
            add(value, f"torch.nn.utils.{key}")
    for key, value in _public(vars(torch.nn)):
        if isinstance(value, type) and issubclass(value, torch.nn.Module) and value is not torch.nn.Module:
            _wrap_methods(value, _MODULE_METHODS, f"torch.nn.{key}")
    for module_name, names in _AUTOGRAD:
        namespace = vars(sys.modules[module_name])
        for key, value in _public(namespace):
            if names is None or key in names:
                add(value, f"{module_name}.{key}")
    _wrap_methods(torch.enable_grad, ("__enter__",), "torch.enable_grad")
    return found


def install() -> None:
    """Wrap the watched APIs of this process, once; before any student code is imported, so an
    alias bound at import time holds the wrapper."""
    if _INSTALLED:
        return
    _INSTALLED.append(True)
    functions = _functions()
    wrappers = {key: _watched(function, name) for key, (function, name) in functions.items()}
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "torch" or module_name.startswith("torch.")):
            continue
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for key, value in list(namespace.items()):
            wrapper = wrappers.get(id(value))
            if wrapper is not None and functions[id(value)][0] is value:
                namespace[key] = wrapper


@contextlib.contextmanager
def recording(sink: Callable[[str], None]) -> Iterator[None]:
    """While the body runs in this thread, every watched API called reports its name to ``sink``."""
    sinks = getattr(_LOCAL, "sinks", None)
    if sinks is None:
        sinks = _LOCAL.sinks = []
    sinks.append(sink)
    try:
        yield
    finally:
        sinks.pop()


def complex_name(value: Any) -> str | None:
    """``"torch.complex128 (a complex tensor was made)"`` for a complex tensor, else None.

    Read past a tensor subclass's ``__torch_function__``, so no student code runs here."""
    kind = type(value)
    if kind is torch.Tensor or kind is torch.nn.Parameter:
        dtype = value.dtype
    elif isinstance(value, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            dtype = value.dtype
    else:
        return None
    return f"{dtype} ({COMPLEX})" if dtype.is_complex else None
