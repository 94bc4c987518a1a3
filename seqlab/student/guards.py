"""What a graded call is watched with: operation recorders, an autograd detector, a static
scan of the source, and (in the isolated child) an audit hook.

Each layer catches what the one before can miss: the TorchFunctionMode sees every torch-level
call by its public name, including an alias bound at import time and ``torch.ops.aten.*``;
the TorchDispatchMode sees the aten kernels underneath, however they were reached; saved-tensor
hooks fire whenever autograd records a graph; and the static scan (run in the trusted parent on
the source text) names forbidden attributes even on paths the call never took.
"""
from __future__ import annotations

import ast
import contextlib
import sys
from collections import Counter
from typing import Iterable

import torch
from torch.overrides import TorchFunctionMode, resolve_name
from torch.utils._python_dispatch import TorchDispatchMode


def torch_function_name(func) -> str:
    name = resolve_name(func)
    if name:
        return name
    module = getattr(func, "__module__", None) or ""
    qualname = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    return f"{module}.{qualname}" if module else str(qualname)


class OpRecorder(TorchFunctionMode):
    """Counts every torch function called while active (the complexity rule counts these)."""

    def __init__(self):
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.paused = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if not self.paused:
            self.counts[torch_function_name(func)] += 1
        return func(*args, **(kwargs or {}))


class KernelRecorder(TorchDispatchMode):
    """Records the aten kernels reached, whatever Python path led there."""

    def __init__(self):
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.paused = 0

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Otherwise torch wraps __torch_dispatch__ in torch._disable_dynamo, whose first call
        # imports all of dynamo (~4 s, 800 modules). Nothing here is ever compiled.
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not self.paused:
            packet = getattr(func, "overloadpacket", func)
            self.counts[f"aten.{getattr(packet, '__name__', func)}"] += 1
        return func(*args, **(kwargs or {}))


class AutogradDetector:
    """Fires when autograd records a graph: ``saved_tensors_hooks`` are called on every save."""

    def __init__(self):
        self.used = False
        self.paused = 0

    def _pack(self, tensor):
        if not self.paused:
            self.used = True
        return tensor

    @staticmethod
    def _unpack(tensor):
        return tensor

    def context(self):
        return torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)


class CallWatch:
    """All recorders of one graded call, entered and paused together."""

    def __init__(self, *, kernels: bool):
        self.ops = OpRecorder()
        self.kernels = KernelRecorder() if kernels else None
        self.autograd = AutogradDetector()

    @contextlib.contextmanager
    def active(self):
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.autograd.context())
            if self.kernels is not None:
                stack.enter_context(self.kernels)
            stack.enter_context(self.ops)
            yield self

    @contextlib.contextmanager
    def paused(self):
        """Trusted work inside a watched call (a correct callee) is not charged to the student."""
        recorders = [r for r in (self.ops, self.kernels, self.autograd) if r is not None]
        for r in recorders:
            r.paused += 1
        try:
            yield
        finally:
            for r in recorders:
                r.paused -= 1

    def report(self) -> dict:
        names = Counter(self.ops.counts)
        if self.kernels is not None:
            names.update({k: v for k, v in self.kernels.counts.items()})
        if self.autograd.used:
            names["autograd.graph (a tensor was saved for backward)"] += 1
        return {"ops": dict(names), "op_count": int(sum(self.ops.counts.values()))}


# --- static scan ----------------------------------------------------------------------------

_ROOTS = ("torch", "numpy", "os", "sys", "subprocess", "ctypes", "inspect", "gc", "importlib", "builtins")


class _AliasResolver(ast.NodeVisitor):
    """Collects module-level names bound to torch objects: imports and simple assignments."""

    def __init__(self):
        self.aliases: dict[str, str] = {}

    def visit_Import(self, node):
        for alias in node.names:
            root = alias.name.split(".")[0]
            if root in _ROOTS:
                self.aliases[alias.asname or root] = alias.name if alias.asname else root

    def visit_ImportFrom(self, node):
        if node.module and node.module.split(".")[0] in _ROOTS and node.level == 0:
            for alias in node.names:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def visit_Assign(self, node):
        target = node.targets[0] if len(node.targets) == 1 else None
        if isinstance(target, ast.Name):
            dotted = dotted_name(node.value, self.aliases)
            if dotted:
                self.aliases[target.id] = dotted


def dotted_name(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in aliases:
        return ".".join([aliases[node.id], *reversed(parts)])
    return None


def referenced_names(source: str, function: str | None = None, callees_excluded: Iterable[str] = ()) -> list[tuple[int, str]]:
    """Dotted torch/os/... names referenced in ``source`` (or only inside ``function``).

    Aliases bound at module level (``from torch.nn import functional as F``,
    ``sdpa = F.scaled_dot_product_attention``) are resolved to their full names. Each dotted
    chain is reported once at its longest, together with every prefix, so a pattern like
    ``torch.autograd.*`` matches ``torch.autograd.grad(...)``. Module-level helpers the
    function calls are scanned too, except ``callees_excluded`` (other contract functions:
    the grader swaps those for correct ones, so what they use is charged to them alone).
    """
    callees_excluded = set(callees_excluded)
    tree = ast.parse(source)
    resolver = _AliasResolver()
    for node in tree.body:
        resolver.visit(node)
    scope: Iterable[ast.AST] = [tree]
    if function is not None:
        scope = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function]
        # A module-level helper the function calls is part of what it runs.
        called = {c.func.id for f in scope for c in ast.walk(f) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
        scope += [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.name in called and n.name != function and n.name not in callees_excluded]
    found: list[tuple[int, str]] = []
    for root in scope:
        for node in ast.walk(root):
            if isinstance(node, (ast.Attribute, ast.Name)):
                dotted = dotted_name(node, resolver.aliases)
                if dotted:
                    found.append((getattr(node, "lineno", 0), dotted))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "__import__", "eval", "exec"):
                found.append((node.lineno, f"builtins.{node.func.id}"))
    return found


# --- audit hook (isolated child only) -------------------------------------------------------

_BLOCKED_EVENTS = {
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
    "os.forkpty", "os.kill", "os.killpg", "signal.pthread_kill", "socket.connect",
    "socket.bind", "socket.sendto", "socket.getaddrinfo", "resource.setrlimit", "os.startfile",
    "pty.spawn", "sys.addaudithook", "ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle",
}


class AuditRefusal(PermissionError):
    pass


def install_audit_hook(protected_dirs: list[str], writable_dir: str) -> None:
    """Refuse, for the rest of this process, opening protected files, writing outside
    ``writable_dir``, starting processes, sending signals and opening network sockets.

    Audit hooks cannot be removed once added, and adding another one is refused too.
    """
    import os

    protected = tuple(os.path.realpath(p) + os.sep for p in protected_dirs)
    protected_files = tuple(os.path.realpath(p) for p in protected_dirs)
    writable = os.path.realpath(writable_dir) + os.sep
    realpath, fspath = os.path.realpath, os.fspath

    def hook(event: str, args: tuple) -> None:
        if event == "open":
            path, mode = args[0], args[1]
            if isinstance(path, int) or path is None:
                return
            try:
                full = realpath(fspath(path))
            except (TypeError, ValueError):
                return
            if full.startswith(protected) or full in protected_files:
                raise AuditRefusal(f"seqlab: reading {path!r} is not allowed while grading")
            writing = isinstance(mode, str) and any(c in mode for c in "wax+")
            if not writing and isinstance(args[2], int):
                writing = bool(args[2] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC))
            if writing and not (full + os.sep).startswith(writable) and full != "/dev/null":
                raise AuditRefusal(f"seqlab: writing {path!r} is not allowed while grading")
            return
        if event in _BLOCKED_EVENTS or event.startswith(("os.exec", "os.spawn", "os.posix_spawn")):
            raise AuditRefusal(f"seqlab: {event} is not allowed while grading")

    # Popen's audit event is raised in Python before the C-level fork_exec; take the C entry
    # point itself away, so calling it directly cannot start a process either.
    import _posixsubprocess
    import subprocess

    def refused(*args, **kwargs):
        raise AuditRefusal("seqlab: starting processes is not allowed while grading")

    _posixsubprocess.fork_exec = refused
    subprocess._fork_exec = refused
    sys.addaudithook(hook)
