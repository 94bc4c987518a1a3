"""The allowed surface, audited by machine: every Python function a submission can reach through
the modules the subset lets it import, and which of them run strings or reach the interpreter.

A submission's own code is compiled through the subset, but library code it calls runs as plain
Python: a library function that ``exec``s text built from the student's data (``@dataclass``
pastes ``__annotations__`` keys into generated source), ``eval``s an annotation
(``functools.singledispatch``), imports by string (``unittest``'s loader) or walks frames and
closures (``logging``'s formatters and ``findCaller``) is a way around every rule. This audit lists
such functions so that none stays on the surface.

What it walks: for each module a submission may import (``rules.ALLOWED_MODULES``, the vetted
shim in place of the real module where there is one), the attributes the subset lets it read
(``ALLOWED_ONLY`` where the module has one, else every public name less ``DENIED_ATTRIBUTES``),
and from every Python function or class found there, transitively, every global, module
attribute chain (``os.path.join``) and function-level import its source names. A class is walked
whole: every function in the ``__dict__`` of its Python-level bases and of its metaclass.

What it flags in a reachable function's source: a name that resolves to ``exec``, ``eval``,
``compile``, ``__import__``, ``globals``, ``locals`` or ``breakpoint``; a reference to, or an
import of, ``sys``, ``gc``, ``importlib`` or ``inspect``; ``getattr`` whose name argument is not
a literal; ``.format`` or ``.format_map`` on a template that is not a literal (a format string
reads attributes: ``logging.Formatter(style="{")``); an attribute that reaches frames or closures (``_getframe``, ``f_back``, ``tb_frame``,
``__closure__``, ``cell_contents``, ``__globals__``...). A function with no source (made by
``exec``) is read from its bytecode's names.

Its limits, on purpose: calls through values whose type the source does not show (``self.x()``,
a callback argument) are not followed, which the whole-class walk covers for methods of a class
on the surface, but not for objects a surface function receives from outside it; C functions
are leaves (they cannot run a string without going back through Python, which would be another
function on the list); torch is left out of the walk (its attributes are held by the deny list
and the operation recorders, and its own Python code is the library's, not the surface's
concern here). Run as a module (``python -m`` and its dotted name), it prints the findings, one a
line, and exits 1 when there is any.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import linecache
import sys
import textwrap
import types
from dataclasses import dataclass

from . import rules, shims
from .names import module_refusal

# The builtins that run or compile strings, import by string or hand out a namespace.
STRING_BUILTINS = frozenset({"exec", "eval", "compile", "__import__", "globals", "locals", "breakpoint"})
# Modules whose mere use from library code is a door to the interpreter: its frames and modules
# (sys), every live object (gc), imports by string (importlib) and frames and sources (inspect).
INTERPRETER_MODULES = frozenset({"sys", "gc", "importlib", "inspect"})
# Attributes that reach frames, code and closures, whatever object they are read on.
INTERPRETER_ATTRIBUTES = frozenset(
    {"_getframe", "currentframe", "f_back", "f_globals", "f_locals", "f_builtins", "tb_frame", "gi_frame"}
    | {"__closure__", "cell_contents", "__globals__", "__code__", "__builtins__", "__subclasses__"}
)
# Left out of the walk (see the module docstring): the tensor library is the exercise itself.
UNWALKED = frozenset({"torch", "__future__"})
# Allowed modules whose reachable code the audit still flags, each kept for honest code that uses
# it, with why it stays for now. ``audit()`` leaves them out; ``open_findings()`` lists what they
# hold, so the list is seen, and a test requires that nothing else is ever flagged.
OPEN: dict[str, str] = {
    "numpy": "the numpy-minded honest submission; its dispatch decorators read code objects and "
    "inspect signatures (at numpy's import), its fromnumeric wrappers call methods by computed name",
}


@dataclass(frozen=True, order=True)
class Finding:
    """One reachable function that does one of the things the surface must not."""

    function: str  # module.qualname
    what: str  # e.g. "calls exec", "reads sys"
    via: str  # the surface name it is reached from

    def __str__(self) -> str:
        return f"{self.function}: {self.what} (reached from {self.via})"


def surface_roots(allowed: dict[str, str] | None = None) -> dict[str, object]:
    """Surface name -> object, for every attribute of every allowed module a submission may read."""
    allowed = {m: w for m, w in rules.ALLOWED_MODULES.items() if m not in OPEN} if allowed is None else allowed
    roots: dict[str, object] = {}
    for name in sorted(allowed):
        if name in UNWALKED or name.split(".")[0] in UNWALKED:
            continue
        module = shims.SHIMS.get(name) or _import(name)
        if module is None:
            continue
        only = rules.ALLOWED_ONLY.get(name)
        names = sorted(only) if only is not None else [n for n in dir(module) if not n.startswith("_")]
        denied = rules.DENIED_ATTRIBUTES.get(name, {})
        for attribute in names:
            if attribute in denied or f"{name}.{attribute}" in rules.DENIED_MODULES:
                continue
            value = inspect.getattr_static(module, attribute, None)
            if isinstance(value, types.ModuleType):
                held = module_refusal(value.__name__) is None and shims.impostor(value) is None
                if held and value.__name__ not in allowed and value.__name__.split(".")[0] not in OPEN:
                    allowed = {**allowed, value.__name__: "a submodule"}
                    roots.update(surface_roots({value.__name__: ""}))
                continue
            roots[f"{name}.{attribute}"] = value
    return roots


def _import(name: str):
    try:
        return __import__(name, fromlist=["_"])
    except ImportError:
        return None


def open_findings() -> list[Finding]:
    """What the audit flags in the modules of ``OPEN``."""
    return audit(surface_roots({m: w for m, w in rules.ALLOWED_MODULES.items() if m in OPEN}))


def audit(roots: dict[str, object] | None = None) -> list[Finding]:
    """Every finding among the functions reachable from ``roots`` (the allowed surface by default)."""
    roots = surface_roots() if roots is None else roots
    findings: set[Finding] = set()
    seen: set[int] = set()
    queue: list[tuple[object, str]] = [(value, name) for name, value in roots.items()]
    while queue:
        value, via = queue.pop()
        for function in _functions_of(value, seen):
            what, reached = _read(function)
            name = f"{function.__module__}.{function.__qualname__}"
            findings.update(Finding(name, w, via) for w in what)
            queue.extend((r, via) for r in reached)
    return sorted(findings)


def _functions_of(value, seen: set[int]) -> list[types.FunctionType]:
    """The Python functions a value brings onto the surface (itself, or a class's methods)."""
    if id(value) in seen or isinstance(value, types.ModuleType):
        return []
    seen.add(id(value))
    if isinstance(value, (staticmethod, classmethod)):
        return _functions_of(value.__func__, seen)
    if isinstance(value, property):
        return [f for part in (value.fget, value.fset, value.fdel) for f in _functions_of(part, seen)]
    if isinstance(value, functools.partial):
        return _functions_of(value.func, seen)
    if isinstance(value, types.MethodType):
        return _functions_of(value.__func__, seen)
    if isinstance(value, types.FunctionType):
        return [value]
    if isinstance(value, type):
        found: list[types.FunctionType] = []
        for klass in (*inspect.getmro(value), *inspect.getmro(type(value))):
            if klass.__module__ == "builtins":
                continue  # C types: leaves
            found.extend(f for item in list(vars(klass).values()) for f in _functions_of(item, seen))
        return found
    wrapped = inspect.getattr_static(value, "__wrapped__", None)  # functools.lru_cache and kin
    return _functions_of(wrapped, seen) if wrapped is not None else []


@functools.cache
def _function_nodes(filename: str) -> dict[tuple[str, int], ast.AST]:
    """Every function and lambda of a source file, by (name, first line as the code object has it)."""
    lines = linecache.getlines(filename)
    try:
        tree = ast.parse("".join(lines)) if lines else None
    except SyntaxError:
        tree = None
    index: dict[tuple[str, int], ast.AST] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            index.setdefault((node.name, first), node)
            index.setdefault((node.name, node.lineno), node)
        elif isinstance(node, ast.Lambda):
            index.setdefault(("<lambda>", node.lineno), node)
    return index


def _node_of(function: types.FunctionType) -> ast.AST | None:
    """The function's own node in its module's parsed source, or None (no source: made by exec)."""
    code = function.__code__
    filename = code.co_filename
    if filename.startswith("<frozen "):  # a frozen standard module: its source file is beside it
        frozen = sys.modules.get(filename[len("<frozen ") : -1])
        filename = getattr(frozen, "__file__", None) or filename
    return _function_nodes(filename).get((code.co_name, code.co_firstlineno))


def _read(function: types.FunctionType) -> tuple[list[str], list[object]]:
    """What a function does that the surface must not, and the values its source reaches."""
    node = _node_of(function)
    if node is None:
        return _read_bytecode(function)
    namespace = function.__globals__
    what: list[str] = []
    reached: list[object] = []
    granted: set[int] = set()  # the module name of a ``sys.stderr``-like read (see _granted)
    for sub in _walk_body(node):  # breadth first: an attribute comes before the name it is read on
        if id(sub) in granted:
            continue
        if isinstance(sub, ast.Attribute) and _granted(sub, namespace):
            granted.add(id(sub.value))
            continue
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            value = _resolve(namespace, sub.id)
            what.extend(_judge_value(sub.id, value))
            if value is not None:
                reached.append(value)
        elif isinstance(sub, ast.Attribute):
            if sub.attr in INTERPRETER_ATTRIBUTES:
                what.append(f"reads .{sub.attr}")
            value = _chain(namespace, sub)
            if value is not None:
                what.extend(_judge_value(sub.attr, value))
                reached.append(value)
        elif isinstance(sub, ast.Call) and _is_dynamic_getattr(sub, namespace):
            what.append("calls getattr with a computed name")
        elif isinstance(sub, ast.Call) and _is_template_format(sub):
            what.append("formats a computed template (str.format reads attributes)")
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            for module in _imported(sub):
                if module.split(".")[0] in INTERPRETER_MODULES:
                    what.append(f"imports {module}")
                loaded = sys.modules.get(module)
                if loaded is not None and isinstance(sub, ast.ImportFrom):
                    reached.extend(inspect.getattr_static(loaded, a.name, None) for a in sub.names)
    return sorted(set(what)), [r for r in reached if r is not None]


def _walk_body(node: ast.AST):
    """What runs when the function is called: its body, not its decorators, defaults or
    annotations (they ran once, when the library defined it)."""
    body = node.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else [node.body]  # type: ignore[attr-defined]
    for statement in body:
        yield from ast.walk(statement)


def _granted(node: ast.Attribute, namespace: dict) -> bool:
    """``sys.stderr``-like: an attribute of an interpreter module that the subset lets a submission
    read itself (``ALLOWED_ONLY``) gives library code no more than the submission has. Only a
    plain module name read for that one attribute is granted."""
    if not isinstance(node.value, ast.Name):
        return False
    module = _resolve(namespace, node.value.id)
    if not isinstance(module, types.ModuleType) or module.__name__ not in INTERPRETER_MODULES:
        return False
    return node.attr in rules.ALLOWED_ONLY.get(module.__name__, ())


def _read_bytecode(function: types.FunctionType) -> tuple[list[str], list[object]]:
    """A function without source (generated by exec): the names its code and nested code use."""
    names: set[str] = set()
    stack = [function.__code__]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    what = [f"reads .{n}" for n in names & INTERPRETER_ATTRIBUTES]
    reached = []
    for name in names:
        value = _resolve(function.__globals__, name)
        what.extend(_judge_value(name, value))
        if value is not None:
            reached.append(value)
    return sorted(set(what)), reached


def _resolve(namespace: dict, name: str):
    if name in namespace:
        return namespace[name]
    return vars(builtins).get(name)


def _chain(namespace: dict, node: ast.Attribute):
    """The value of ``a.b.c`` when ``a`` is a global module or class, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value  # type: ignore[assignment]
    if not isinstance(node, ast.Name):
        return None
    value = _resolve(namespace, node.id)
    for part in reversed(parts):
        if not isinstance(value, (types.ModuleType, type)):
            return None
        value = inspect.getattr_static(value, part, None)
    return value


def _judge_value(name: str, value) -> list[str]:
    if value is None:
        return []
    own_name = getattr(value, "__name__", None)
    builtin = isinstance(value, types.BuiltinFunctionType) and value is vars(builtins).get(str(own_name))
    if builtin and own_name in STRING_BUILTINS:
        return [f"calls {own_name}"]
    if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] in INTERPRETER_MODULES:
        return [f"reads {value.__name__}"]
    return []


def _is_dynamic_getattr(call: ast.Call, namespace: dict) -> bool:
    if not (isinstance(call.func, ast.Name) and _resolve(namespace, call.func.id) is getattr):
        return False
    if len(call.args) < 2:
        return bool(call.args) or bool(call.keywords)  # getattr(*args): the name is computed
    name = call.args[1]
    return not (isinstance(name, ast.Constant) and isinstance(name.value, str))


def _is_template_format(call: ast.Call) -> bool:
    """``template.format(...)`` or ``.format_map(...)`` on anything but a literal string: a
    template that is data reads attributes and items of the values (``{0.__class__}``)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("format", "format_map")):
        return False
    return not (isinstance(func.value, ast.Constant) and isinstance(func.value.value, str))


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return [node.module or ""] if node.level == 0 else []


def report(findings: list[Finding]) -> str:
    if not findings:
        return "the allowed surface: nothing reachable runs strings or reaches the interpreter"
    lines = [str(f) for f in findings]
    return "\n".join([*lines, f"{len(findings)} finding(s)"])


def main() -> int:
    findings = audit()
    print(textwrap.dedent(report(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
