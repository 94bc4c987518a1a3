"""The code policy for submissions, decided in the trusted parent before any of it runs.

``policy_violations`` reads each ``exercises/<module>.py`` as a syntax tree (never importing it)
and refuses what a sequence-model exercise never needs and an attack always does. Imports come
from an allow-list (torch and its public modules, numpy, math and a few pure standard modules,
the submission's own modules); no private or dunder attribute of anything (``torch._C``,
``x._base``, ``f.__globals__``); no attribute named after a dangerous module (``torch.os``,
``np.ctypeslib``); no dynamic code or introspection (``eval``, ``exec``, ``compile``,
``__import__``, ``globals``, ``vars``, ``getattr`` with a computed name, ``open``); no assignment
to an attribute (monkeypatching ``torch.allclose`` or a recorder). A violation voids the whole
module: it is never loaded (code at import time is code that runs), and the message names the
file, the line and the rule.

The other verdict on the source, a forbidden operation (``grading_config.yaml``) named in a
function or a helper it calls, is ``seqlab.grading.forbidden_names``.

Every rule was checked against the honest code we have (the reference solutions, every
known-wrong and alternative-correct variant in tests/mutants): ``tests/student/test_sandbox.py`` keeps it
that way, because a rule must never take points from honest code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from .. import contract

# Top-level modules a submission may import, and why each is harmless: pure computation,
# no files, processes or introspection.
ALLOWED_IMPORTS = frozenset(
    {
        "torch",
        "numpy",
        "math",
        "cmath",
        "numbers",
        "typing",
        "functools",
        "itertools",
        "collections",
        "dataclasses",
        "operator",
        "enum",
        "abc",
        "statistics",
        "random",
        "warnings",
        "__future__",
        "string",
        "exercises",  # the submission's own modules, imported absolutely
    }
)
# Public parts of the allowed packages that still reach files, native code, processes or the
# network: a name in this set anywhere in an import or an attribute chain is refused.
DANGEROUS_NAMES = frozenset(
    {
        "os",
        "sys",
        "subprocess",
        "ctypes",
        "ctypeslib",
        "gc",
        "inspect",
        "importlib",
        "builtins",
        "socket",
        "signal",
        "shutil",
        "pickle",
        "marshal",
        "multiprocessing",
        "threading",
        "resource",
        "pathlib",
        "io",
        "cpp_extension",
        "load_library",
        "hub",
        "load",
        "save",
        "fromfile",
        "tofile",
        "from_file",
        "memmap",
        "distributed",
        "package",
        "f2py",
        "testing",
        "serialization",
        "mmap",
        "pty",
        "atexit",
        "posix",
    }
)
# Builtins that run code, reach frames and namespaces, or read files.
DANGEROUS_BUILTINS = frozenset(
    {
        "eval",
        "exec",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "open",
        "breakpoint",
        "input",
        "memoryview",
        "__builtins__",
        "help",
        "exit",
        "quit",
        "delattr",
    }
)
# getattr/setattr/hasattr are fine with a literal name (it is then just an attribute access,
# checked like one); a computed name hides what is reached.
NAMED_ATTRIBUTE_BUILTINS = frozenset({"getattr", "setattr", "hasattr"})
MAX_SOURCE_CHARS = 1_000_000  # a real exercise module is ~10 kB; beyond this it is not one


def _module_level_names(tree: ast.Module) -> set[str]:
    """Names bound at module level: imports and assignments (``t = torch``). Setting an attribute
    through one of them changes something every graded call shares."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


class _Checker(ast.NodeVisitor):
    def __init__(self, shared_names: set[str]):
        self.problems: list[tuple[int, str]] = []
        self.shared_names = shared_names

    def flag(self, node: ast.AST, rule: str) -> None:
        self.problems.append((getattr(node, "lineno", 0), rule))

    def _check_module_path(self, node: ast.AST, dotted: str) -> None:
        parts = dotted.split(".")
        if parts[0] not in ALLOWED_IMPORTS:
            self.flag(node, f"import of {dotted!r} (allowed: {', '.join(sorted(ALLOWED_IMPORTS - {'__future__'}))})")
        elif any(p.startswith("_") and p != "__future__" for p in parts) or DANGEROUS_NAMES & set(parts[1:]):
            self.flag(node, f"import of {dotted!r} (a private or system part of an allowed package)")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module_path(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0:
            self._check_module_path(node, node.module or "")
        for alias in node.names:
            if alias.name == "*" or alias.name.startswith("_") or alias.name in DANGEROUS_NAMES:
                self.flag(node, f"import of {alias.name!r} from {'.' * node.level}{node.module or ''}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            self.flag(node, f"private or dunder attribute {node.attr!r} (the public API is enough)")
        elif node.attr in DANGEROUS_NAMES:
            self.flag(node, f"attribute {node.attr!r} reaches files, processes or native code")
        if isinstance(node.ctx, (ast.Store, ast.Del)) and _root_name(node.value) in self.shared_names:
            # ``p.grad = g`` on a local is ordinary; ``torch.allclose = ...`` changes every call.
            self.flag(node, f"assignment to the attribute {node.attr!r} of a module-level object (monkeypatching)")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in DANGEROUS_BUILTINS:
            self.flag(node, f"{node.id} (dynamic code, namespaces or files)")
        elif node.id.startswith("__") and node.id.endswith("__") and node.id not in ("__name__", "__all__", "__doc__"):
            self.flag(node, f"dunder name {node.id!r}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in NAMED_ATTRIBUTE_BUILTINS:
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self.flag(node, f"{func.id} with a computed attribute name")
            elif name.value.startswith("_") or name.value in DANGEROUS_NAMES:
                self.flag(node, f"{func.id}(..., {name.value!r}): a private or system attribute")
            elif func.id == "setattr":
                self.flag(node, "setattr (monkeypatching)")
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        # A module-level variable a function writes is state that survives from one graded call
        # to the next (the answer of an earlier call kept for a later one).
        self.flag(node, f"global {', '.join(node.names)} (state kept between calls)")


def policy_violations_of(source: str, filename: str) -> list[str]:
    """Every violation in ``source``, as 'filename, line N: rule' (empty: the module may load)."""
    if len(source) > MAX_SOURCE_CHARS:
        return [f"{filename}: {len(source)} characters (more than {MAX_SOURCE_CHARS}; not an exercise module)"]
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError:
        return []  # the loader reports it with its line, and the module scores 0 anyway
    except (ValueError, RecursionError, MemoryError) as exc:
        return [f"{filename}: cannot be parsed ({type(exc).__name__})"]
    checker = _Checker(_module_level_names(tree))
    try:
        checker.visit(tree)
    except RecursionError:
        return [f"{filename}: nested too deeply to check"]
    return [f"{filename}, line {line}: {rule}" for line, rule in sorted(set(checker.problems))]


def policy_violations(submission: Path, modules: Iterable[str] = contract.MODULES) -> dict[str, str]:
    """Module -> why it is not loaded, for every module of the submission that breaks the policy."""
    refused: dict[str, str] = {}
    for module in modules:
        path = Path(submission) / "exercises" / f"{module}.py"
        try:
            source = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # a missing module is reported by the loader
        problems = policy_violations_of(source, f"exercises/{module}.py")
        if problems:
            shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
            refused[module] = (
                f"exercises/{module}.py was not loaded: it breaks the code policy for submissions "
                f"({shown}); every function in it scores 0"
            )
    return refused
