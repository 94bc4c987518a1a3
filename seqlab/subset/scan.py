"""What the transformer needs to know of a module before it walks it: the names it binds, the names
bound only by imports, and its self-test block."""

from __future__ import annotations

import ast


def is_main_test(test: ast.AST) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


def without_self_test(statement: ast.stmt) -> ast.stmt:
    """``if __name__ == "__main__":`` at module level is the student's self-test: it never runs
    when a grader or a test imports the module (its name is ``exercises.<name>``, and the subset
    refuses assignments to ``__name__``), so it is compiled as ``pass`` and its imports (unittest,
    argparse, timeit) are not held against the module. Run directly, it is plain Python."""
    if isinstance(statement, ast.If) and is_main_test(statement.test):
        statement.body = [ast.copy_location(ast.Pass(), statement.body[0])]
    return statement


def bound_names(tree: ast.AST) -> frozenset[str]:
    """Every name the module binds anywhere: a student's own ``input`` or ``vars`` shadows the
    builtin of that name, and then refusing the builtin would refuse their variable."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
    return frozenset(names)


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Names bound by imports and by nothing else, with the module path each stands for."""
    aliases: dict[str, str] = {}
    other: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            other.add(node.id)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            other.add(node.name)
    return {name: path for name, path in aliases.items() if name not in other}
