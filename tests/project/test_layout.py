"""The package's shape: imports go one way (no cycle, function-level imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

import seqlab

PACKAGE_DIR = Path(seqlab.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The seqlab modules ``path`` imports anywhere (top level or inside a function). Imports
    under ``if TYPE_CHECKING:`` are left out: they never run, so they cannot form a cycle."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _is_type_checking(node)
        for child in node.body
        for n in ast.walk(child)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # ``from . import x`` imports the submodule x when there is one
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # seqlab.a.b.attr -> seqlab.a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE_DIR.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    graph = {module_name(p): imported_modules(p, modules) for p in paths}
    # a package's __init__ running is a side effect of importing any of its modules, not an edge
    # the module chose; cycles through a package's own __init__ re-exports are not import cycles
    for name, targets in graph.items():
        graph[name] = {t for t in targets if not name.startswith(t + ".")}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as [a, b, ..., a], or [] when the graph is acyclic."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return []


def test_the_cycle_finder_finds_a_cycle_and_accepts_a_chain():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_sees_function_level_and_relative_imports():
    graph = import_graph()
    assert "seqlab.exam.model" in graph["seqlab.exam.variants"]  # from .model import ... (top level)
    assert "seqlab.grading" in graph["seqlab.batch"]  # inside worker_main


def test_seqlab_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


# A module is at most about a few screens (docs/DESIGN.md): past that it usually does two jobs.
MAX_MODULE_LINES = 350
# The safe expression parser is one grammar with its checks; cut, its parts would not stand alone.
OVER_BY_DECISION = {"seqlab/exam/safeexpr.py"}


def test_no_module_is_over_the_line_limit():
    over = {
        p.relative_to(PACKAGE_DIR.parent).as_posix(): n
        for p in sorted(PACKAGE_DIR.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert set(over) - OVER_BY_DECISION == set(), f"modules over {MAX_MODULE_LINES} lines: {over}"
