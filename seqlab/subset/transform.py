"""The static half of the subset: decode a module's bytes as Python would, and compile it through
RestrictedPython's restricting transformer, configured for this course.

RestrictedPython rewrites every attribute read into ``_getattr_(obj, "name")``, every item read
into ``_getitem_(obj, key)``, every attribute or item write into ``_write_(obj).name = value``,
every iteration through ``_getiter_``; the host supplies those guards (``guards.py``, ``writes.py``).
Its stock policy is Zope's: no name may start with ``_``, no annotated assignment, no
``nonlocal``, no augmented assignment to an attribute. A student's honest code needs all of
those, so ``CoursePolicy`` allows them and moves the line to where the danger is: dunder names
outside the data model's special methods, the interpreter's frame and code attributes, imports
outside the allow-list, builtins that run strings as code, and attribute names that are not
literals in the source. What the transformer cannot know (whether ``x._d`` belongs to the
student's own object) the runtime guards decide.

The same code runs in the trusted parent (to decide what loads and to refuse with a message),
in the student's process (to compile exactly the text the parent checked) and in the student's
own tests (to show the same message before hand-in).
"""

from __future__ import annotations

import ast
import functools
import types
from dataclasses import dataclass

from RestrictedPython.transformer import IOPERATOR_TO_STR, RestrictingNodeTransformer, copy_locations

from . import rules
from .names import attribute_problem, attribute_refusal, is_dunder, is_guard_name, module_refusal
from .patterns import MatchRules
from .scan import bound_names, import_aliases, without_self_test
from .source import Problem, SourceRefused, decode_source

__all__ = ["Checked", "CoursePolicy", "Problem", "SourceRefused", "check", "decode_source", "module_refusal"]


class CoursePolicy(MatchRules, RestrictingNodeTransformer):
    """RestrictedPython's transformer with this course's rules (see the module docstring)."""

    def __init__(
        self, siblings: frozenset[str] = frozenset(), bound: frozenset[str] = frozenset(), lazy_annotations=False
    ):
        super().__init__()
        # Under ``from __future__ import annotations`` the compiler keeps annotations as the
        # text written, never evaluated: left untransformed, they read as written (dataclasses
        # look for "ClassVar" in that text); evaluated ones are code and are guarded like code.
        self.lazy_annotations = lazy_annotations
        self.aliases: dict[str, str] = {}  # names bound only by imports -> the dotted module path
        self.problems: list[Problem] = []
        self.siblings = siblings  # the submission's own module names
        self.bound = bound  # every name the module binds somewhere
        self.classes: list[str] = []  # enclosing class names, for private-name mangling
        self._literal_calls: set[int] = set()  # ids of getattr-family names called with a literal

    # --- reporting ---------------------------------------------------------------------------

    def refuse(self, node: ast.AST, rule: str, instead: str = "") -> None:
        self.problems.append(Problem(getattr(node, "lineno", 0) or 0, rule, instead))
        self.errors.append(rule)

    def error(self, node: ast.AST, info: str) -> None:  # RestrictedPython's own refusals
        self.refuse(node, info.rstrip("."))

    def warn(self, node: ast.AST, info: str) -> None:
        self.warnings.append(info)

    # --- names -------------------------------------------------------------------------------

    def check_name(self, node, name, allow_magic_methods=False):
        if name is None:
            return
        if is_guard_name(name):
            self.refuse(node, f"the name {name!r} is reserved for the grader's guards", "choose another name")
        elif is_dunder(name):
            allowed = rules.READABLE_DUNDER_NAMES | rules.BINDABLE_DUNDERS
            if allow_magic_methods and self.classes:
                allowed = allowed | rules.SPECIAL_METHODS
            if name not in allowed:
                self.refuse(node, f"the dunder name {name!r}", "special methods go inside a class")
        elif name in ("builtins", "breakpoint"):
            self.refuse(node, f"the name {name!r}", rules.REFUSED_BUILTINS.get(name, "not part of the subset"))

    def visit_Name(self, node: ast.Name):
        if not isinstance(node.ctx, ast.Load) and node.id in rules.READABLE_DUNDER_NAMES - rules.BINDABLE_DUNDERS:
            self.refuse(node, f"assignment to {node.id}", "a module's own name and file are the grader's")
        if isinstance(node.ctx, ast.Load):
            if (
                node.id in rules.NAMED_ATTRIBUTE_BUILTINS
                and id(node) not in self._literal_calls
                and node.id not in self.bound
            ):
                self.refuse(
                    node,
                    f"{node.id} used other than as {node.id}(obj, 'name')",
                    "write the attribute name as a literal, or use obj.name",
                )
            elif node.id in rules.REFUSED_BUILTINS and node.id not in self.bound:
                self.refuse(node, f"the builtin {node.id}()", rules.REFUSED_BUILTINS[node.id])
            self.used_names[node.id] = True
        self.check_name(node, node.id)
        return node

    # --- attributes --------------------------------------------------------------------------

    def _mangled(self, name: str) -> str:
        """``self.__x`` inside ``class C`` means ``self._C__x``, as the compiler would write it:
        the name becomes a string argument of ``_getattr_``, where the compiler no longer sees it."""
        if name.startswith("__") and not name.endswith("__") and self.classes:
            owner = self.classes[-1].lstrip("_")
            if owner:
                return f"_{owner}{name}"
        return name

    def _dotted(self, node: ast.AST) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return ".".join([self.aliases[node.id], *reversed(parts)])
        return None

    def _own_top(self, dotted: str) -> bool:
        top = dotted.split(".")[0]
        return top == rules.PACKAGE or (top in self.siblings and top not in rules.ALLOWED_MODULES)

    def visit_Attribute(self, node: ast.Attribute):
        store = isinstance(node.ctx, (ast.Store, ast.Del))
        problem = attribute_problem(node.attr, store=store)
        if problem:
            self.refuse(node, *problem)
        owner = self._dotted(node.value)
        if owner is not None and not problem:
            # ``torch.load`` where ``torch`` is only ever the import: refused here, with its
            # line, rather than when the line runs (the guards refuse it there too).
            foreign = not self._own_top(owner)
            settable = node.attr in rules.WRITABLE_MODULE_ATTRIBUTES.get(owner, ())
            if store and foreign and not settable:
                self.refuse(node, f"assignment to {owner}.{node.attr}", "monkeypatching changes every graded call")
            elif foreign:
                refused = attribute_refusal(owner, node.attr)
                if refused and not node.attr.startswith("_"):
                    self.refuse(node, refused, "README: The language subset")
                elif refused:
                    self.refuse(node, f"the private attribute {node.attr!r} of {owner}", "the public API is enough")
        node.attr = self._mangled(node.attr)
        node = self.node_contents_visit(node)
        if store:
            node.value = self._call("_write_", [node.value], node.value)
            return node
        return self._call("_getattr_", [node.value, ast.Constant(node.attr)], node)

    @staticmethod
    def _call(name: str, args: list, where: ast.AST) -> ast.Call:
        # The call takes the line of what it replaces; its new leaves get theirs from the final
        # fix_missing_locations (RestrictedPython's copy_locations walks the whole subtree each time).
        return ast.copy_location(ast.Call(func=ast.Name(name, ast.Load()), args=args, keywords=[]), where)

    def visit_Call(self, node: ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in ("exec", "eval") and func.id not in self.bound:
                self.refuse(node, f"the builtin {func.id}()", rules.REFUSED_BUILTINS[func.id])
            if func.id in rules.NAMED_ATTRIBUTE_BUILTINS and func.id not in self.bound:
                name = node.args[1] if len(node.args) > 1 else None
                if isinstance(name, ast.Constant) and isinstance(name.value, str) and not node.keywords:
                    self._literal_calls.add(id(func))
                    problem = attribute_problem(name.value, store=func.id in ("setattr", "delattr"))
                    if problem:
                        self.refuse(node, *problem)
        wrap = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        node = self.node_contents_visit(node)
        if wrap:  # f(*a, **k) -> _apply_(f, *a, **k): one place where every spread call passes
            node.args.insert(0, node.func)
            node.func = ast.Name("_apply_", ast.Load())
            copy_locations(node.func, node.args[0])
        return node

    # --- statements RestrictedPython refuses and students need -------------------------------

    def visit_AugAssign(self, node: ast.AugAssign):
        """``x.a += v`` and ``x[i] += v`` keep Python's in-place meaning (``operator.iadd`` on the
        value read, then one guarded write), with ``x`` and ``i`` evaluated once."""
        target = node.target
        if isinstance(target, ast.Name):
            return super().visit_AugAssign(node)
        op = ast.Constant(IOPERATOR_TO_STR[type(node.op)])
        value = self.visit(node.value)
        if isinstance(target, ast.Attribute):
            problem = attribute_problem(target.attr, store=True)
            if problem:
                self.refuse(target, *problem)
            obj = self.visit(target.value)
            call = self._call("_aug_attr_", [obj, ast.Constant(self._mangled(target.attr)), op, value], node)
        else:
            obj, key = self.visit(target.value), self.visit(target.slice)
            call = self._call("_aug_item_", [obj, key, op, value], node)
        statement = ast.Expr(value=call)
        copy_locations(statement, node)
        return statement

    def visit_AnnAssign(self, node: ast.AnnAssign):
        annotation = node.annotation
        node = self.node_contents_visit(node)
        if self.lazy_annotations:
            node.annotation = annotation
        return node

    def visit_arg(self, node: ast.arg):
        self.check_name(node, node.arg)
        if node.annotation is not None and not self.lazy_annotations:
            node.annotation = self.visit(node.annotation)
        return node

    def visit_Nonlocal(self, node: ast.Nonlocal):
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_Global(self, node: ast.Global):
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef):
        self.check_name(node, node.name, allow_magic_methods=True)
        self.check_function_argument_names(node)
        returns = node.returns
        try:
            node = self.node_contents_visit(node)
        finally:
            if self.lazy_annotations:
                node.returns = returns
        return node

    def visit_ClassDef(self, node: ast.ClassDef):
        self.check_name(node, node.name)
        if any(k.arg == "metaclass" for k in node.keywords):
            self.refuse(node, "a metaclass", "plain classes, dataclasses and Enum are enough")
        # The visits' results are kept: an attribute read in a base or decorator becomes a guarded
        # ``_getattr_`` call like any other, rather than being checked and then run unguarded.
        node.bases = [self.visit(expr) for expr in node.bases]
        node.keywords = [self.visit(keyword) for keyword in node.keywords]
        node.decorator_list = [self.visit(expr) for expr in node.decorator_list]
        self.classes.append(node.name)
        try:
            body = [self.visit(statement) for statement in node.body]
            node.body = [s for item in body for s in (item if isinstance(item, list) else [item])]
        finally:
            self.classes.pop()
        return node

    def visit_Module(self, node: ast.Module):
        node.body = [without_self_test(s) for s in node.body]
        return self.node_contents_visit(node)

    # --- imports -----------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import):
        self.check_import_names(node)
        for alias in node.names:
            problem = module_refusal(alias.name, self.siblings)
            if problem:
                self.refuse(
                    node, f"import {alias.name}: {problem}", "README: The language subset, for the allowed modules"
                )
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom):
        self.check_import_names(node)
        module = node.module or ""
        if node.level > 1:
            self.refuse(node, "an import from above the exercises package", "import your own modules with from .name")
            return node
        top = module.split(".")[0]
        own = node.level == 1 or top == rules.PACKAGE or (top in self.siblings and top not in rules.ALLOWED_MODULES)
        if own or module == "__future__":
            return node
        problem = module_refusal(module, self.siblings)
        if problem:
            self.refuse(
                node, f"from {module} import ...: {problem}", "README: The language subset, for the allowed modules"
            )
            return node
        for alias in node.names:
            refused = attribute_refusal(module, alias.name)
            if refused:
                self.refuse(node, f"from {module} import {alias.name}: {refused}", "README: The language subset")
        return node


@dataclass(frozen=True)
class Checked:
    """A module's verdict: the code object to run, or the problems that keep it from loading."""

    code: types.CodeType | None
    problems: tuple[Problem, ...]


# The one refusal that is the grader's fault: the checker failed on text Python accepts. The
# program banks (tests/student/test_subset_fuzz.py) require none; should one happen, the module is
# refused with a line like any other, and the student's pytest shows the same words.
INTERNAL_FAULT = "the grader's checker failed on this module"


@functools.lru_cache(maxsize=64)
def check(text: str, filename: str, siblings: frozenset[str] = frozenset()) -> Checked:
    """Compile ``text`` through the course's policy: a verdict for any text, never an exception. A
    syntax error is a problem like any other, so the student sees it with its line whichever tool
    they run. The same text is checked once a process (parent and in-process load share it)."""
    try:
        return _check(text, filename, siblings)
    except Exception as exc:  # a verdict for any input; the banks require none
        return Checked(None, (_internal_fault(exc),))


def _internal_fault(exc: BaseException) -> Problem:
    return Problem(
        1,
        f"{INTERNAL_FAULT} ({type(exc).__name__}: {str(exc)[:200]})",
        "not a rule of the subset: tell the course staff, with this module",
    )


def _check(text: str, filename: str, siblings: frozenset[str]) -> Checked:
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as exc:
        return Checked(None, (Problem(exc.lineno or 1, f"SyntaxError: {exc.msg}"),))
    except (ValueError, RecursionError, MemoryError) as exc:
        return Checked(None, (Problem(1, f"cannot be parsed ({type(exc).__name__})"),))
    lazy = any(
        isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations" for a in n.names)
        for n in tree.body
    )
    policy = CoursePolicy(siblings=siblings, bound=bound_names(tree), lazy_annotations=lazy)
    policy.aliases = import_aliases(tree)
    try:
        tree = policy.visit(tree)
    except RecursionError:
        return Checked(None, (Problem(1, "nested too deeply to check"),))
    if policy.problems:
        return Checked(None, tuple(sorted(set(policy.problems), key=lambda p: (p.line, p.rule))))
    ast.fix_missing_locations(tree)
    try:
        return Checked(compile(tree, filename, "exec", dont_inherit=True), ())
    except (SyntaxError, ValueError, RecursionError) as exc:  # e.g. 'return' outside a function
        return Checked(None, (Problem(getattr(exc, "lineno", 1) or 1, f"{type(exc).__name__}: {exc}"),))
