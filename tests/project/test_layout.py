"""The package's shape: imports go one way (no cycle, function-level and type-checking imports
included), down the layers below, and no module is longer than a few screens."""

from __future__ import annotations

import ast
from functools import cache
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


def imported_modules(path: Path, modules: set[str], *, type_checking: bool = False) -> set[str]:
    """The seqlab modules ``path`` imports anywhere (top level or inside a function). Imports
    under ``if TYPE_CHECKING:`` count only with ``type_checking``: they never run, but a cycle
    through one is still two modules that each need the other to be read."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(n)
        for node in ast.walk(tree)
        if not type_checking and isinstance(node, ast.If) and _is_type_checking(node)
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


@cache  # read-only after it is built; three tests walk it
def import_graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    paths = sorted(PACKAGE_DIR.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    graph = {module_name(p): imported_modules(p, modules, type_checking=type_checking) for p in paths}
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


def test_seqlab_has_no_import_cycle_even_through_type_checking_imports():
    cycle = find_cycle(import_graph(type_checking=True))
    assert not cycle, "import cycle (type-checking imports included): " + " -> ".join(cycle)


# The layers of seqlab, lowest first: each top-level module or package (``seqlab.X``) is in
# exactly one, and imports only from its own layer or a lower one.
LAYERS = {
    # plain data and the course's one facts: what everything else reads
    "foundation": {"seqlab", "errors", "defaults", "paths", "tolerance", "seeds", "results", "templating"}
    | {"contract", "regions", "escape", "studentfiles"},
    # the course as read from disk: config, references, the language subset, stubs
    "course": {"config", "reference", "subset", "build", "similarity", "fingerprints", "demo", "docs_figures"},
    # running student code
    "student": {"student"},
    # grading one hand-in (or one exam paper) and writing what it earned
    "grading": {"grading", "grader_index", "submission", "reports", "gradebook", "gradescope", "lms", "exam", "labs"},
    # a class: many hand-ins, the student repository, the nbgrader course
    "class": {"batch", "classroom", "release", "nbgrader", "engines"},
    # the command line
    "commands": {"commands", "cli", "__main__"},
}


def layer_of(module: str) -> int:
    unit = module.split(".")[1] if "." in module else module
    ranks = [rank for rank, units in enumerate(LAYERS.values()) if unit in units]
    assert len(ranks) == 1, f"{module}: in {len(ranks)} layers of LAYERS (name it in exactly one)"
    return ranks[0]


def test_no_import_runs_up_the_layers():
    upward = sorted(
        f"{name} -> {target}"
        for name, targets in import_graph(type_checking=True).items()
        for target in targets
        if layer_of(target) > layer_of(name)
    )
    assert not upward, "imports from a higher layer (tests/project/test_layout.py LAYERS): " + ", ".join(upward)


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
