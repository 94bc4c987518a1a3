"""Match statements for the course's policy (RestrictedPython refuses them): a value or class
pattern's dotted name must stay a plain name chain, so its attribute names are checked statically,
and a class pattern's keyword attributes (``case object(__globals__=g)``, an attribute read the
guards never see) must be public."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from . import rules


class MatchRules:
    """Mixed into ``CoursePolicy``: it provides ``refuse``, ``check_name`` and ``visit``."""

    if TYPE_CHECKING:  # what the mixin uses of CoursePolicy, declared for the type checker only

        def refuse(self, node: ast.AST, rule: str, instead: str = "") -> None: ...
        def check_name(self, node: Any, name: str | None, allow_magic_methods: bool = False) -> None: ...
        def visit(self, node: ast.AST) -> Any: ...

    # --- match statements --------------------------------------------------------------------

    def _dotted_ok(self, node: ast.AST) -> None:
        """A value or class pattern's dotted name (``Color.RED``, ``torch.Tensor``) stays a plain
        name chain (the grammar wants one), so its attribute names are checked here instead."""
        while isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                self.refuse(node, f"the private attribute {node.attr!r} in a pattern", "match on public names")
            node = node.value

    def visit_Match(self, node: ast.Match):
        node.subject = self.visit(node.subject)
        node.cases = [self.visit(case) for case in node.cases]
        return node

    def visit_match_case(self, node: ast.match_case):
        node.pattern = self.visit(node.pattern)
        if node.guard is not None:
            node.guard = self.visit(node.guard)
        # A statement's visit may return several statements (RestrictedPython unpacks ``a, b = x``
        # through a temporary): flattened here as ``generic_visit`` would, or compile() gets a list.
        node.body = [s for item in map(self.visit, node.body) for s in (item if isinstance(item, list) else [item])]
        return node

    def visit_MatchValue(self, node: ast.MatchValue):
        self._dotted_ok(node.value)
        return node

    def visit_MatchSingleton(self, node):
        return node

    def visit_MatchSequence(self, node: ast.MatchSequence):
        node.patterns = [self.visit(p) for p in node.patterns]
        return node

    def visit_MatchStar(self, node: ast.MatchStar):
        self.check_name(node, node.name)
        return node

    def visit_MatchMapping(self, node: ast.MatchMapping):
        for key in node.keys:
            self._dotted_ok(key)
        node.patterns = [self.visit(p) for p in node.patterns]
        self.check_name(node, node.rest)
        return node

    def visit_MatchClass(self, node: ast.MatchClass):
        self._dotted_ok(node.cls)
        for name in node.kwd_attrs:
            if name.startswith("_") or name in rules.INTERPRETER_INTERNALS:
                self.refuse(node, f"the attribute {name!r} in a class pattern", "match on public attributes")
        node.patterns = [self.visit(p) for p in node.patterns]
        node.kwd_patterns = [self.visit(p) for p in node.kwd_patterns]
        return node

    def visit_MatchAs(self, node: ast.MatchAs):
        self.check_name(node, node.name)
        if node.pattern is not None:
            node.pattern = self.visit(node.pattern)
        return node

    def visit_MatchOr(self, node: ast.MatchOr):
        node.patterns = [self.visit(p) for p in node.patterns]
        return node
