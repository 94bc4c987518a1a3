"""Dotted names a function's source references, read from its syntax tree and never run.

A forbidden-operation rule names the built-ins that compute a whole answer for the student
(``torch.nn.functional.layer_norm`` for ``layer_norm``, ...). The grader's recorders catch a
graded call that reaches one; this scan catches the name in the source of the function, or of a
module-level helper it calls, even on a path the graded calls never took. Aliases are resolved
(``from torch.nn import functional as F``, ``sdpa = F.sdpa``, ``getattr(F, "group_norm")``), so a
pattern matches whatever name the student gave the operation.

Self-contained (the standard library only): the grader's trusted side scans with it, and the
student's own tests carry the same file (their _forbidden.py), so both give the same verdict on
the same text, in the same words.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

# The modules whose dotted names are reported: where forbidden operations live, and the system
# modules a forbidden-operation pattern may name.
_ROOTS = ("torch", "numpy", "os", "sys", "subprocess", "ctypes", "inspect", "gc", "importlib", "builtins")


class _AliasResolver(ast.NodeVisitor):
    """Collects module-level names bound to torch objects: imports and simple assignments."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            root = alias.name.split(".")[0]
            if root in _ROOTS:
                self.aliases[alias.asname or root] = alias.name if alias.asname else root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.module.split(".")[0] in _ROOTS and node.level == 0:
            for alias in node.names:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def visit_Assign(self, node: ast.Assign) -> None:
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


# Keyed on the whole source text, which alone decides the tree and its aliases: static_voids scans
# each module once per contract function in it (up to 6), and the parse and alias walk were most
# of that work. Read-only for callers. 16 entries hold every module of a submission (7 today).
@functools.lru_cache(maxsize=16)
def _parsed_with_aliases(source: str) -> tuple[ast.Module, dict[str, str]]:
    tree = ast.parse(source)
    resolver = _AliasResolver()
    # Imports inside functions bind aliases too (``import torch.autograd.forward_ad as fwAD``).
    for node in [*tree.body, *(n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))]:
        resolver.visit(node)
    return tree, resolver.aliases


def referenced_names(
    source: str, function: str | None = None, callees_excluded: Iterable[str] = ()
) -> list[tuple[int, str]]:
    """Dotted torch/os/... names referenced in ``source`` (or only inside ``function``).

    Aliases bound at module level (``from torch.nn import functional as F``,
    ``sdpa = F.scaled_dot_product_attention``) are resolved to their full names. Each dotted
    chain is reported once at its longest, together with every prefix, so a pattern like
    ``torch.autograd.*`` matches ``torch.autograd.grad(...)``. Module-level helpers the
    function calls are scanned too, except ``callees_excluded`` (other contract functions:
    what they use is charged to them alone).
    """
    callees_excluded = set(callees_excluded)
    tree, aliases = _parsed_with_aliases(source)
    scope: Iterable[ast.AST] = [tree]
    if function is not None:
        scope = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function]
        # A module-level helper the function calls is part of what it runs.
        called = {
            c.func.id for f in scope for c in ast.walk(f) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
        }
        scope += [
            n
            for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name in called
            and n.name != function
            and n.name not in callees_excluded
        ]
    found: list[tuple[int, str]] = []
    for root in scope:
        for node in ast.walk(root):
            if isinstance(node, ast.Import):
                found += [(node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] in _ROOTS]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in _ROOTS:
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
            elif isinstance(node, (ast.Attribute, ast.Name)):
                dotted = dotted_name(node, aliases)
                if dotted:
                    found.append((getattr(node, "lineno", 0), dotted))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "__import__", "eval", "exec")
            ):
                found.append((node.lineno, f"builtins.{node.func.id}"))
                # getattr(F, "group_norm") is F.group_norm (a computed name is refused by the policy)
                if (
                    node.func.id == "getattr"
                    and len(node.args) > 1
                    and isinstance(node.args[1], ast.Constant)
                    and isinstance(node.args[1].value, str)
                ):
                    owner = dotted_name(node.args[0], aliases)
                    if owner:
                        found.append((node.lineno, f"{owner}.{node.args[1].value}"))
    return found
