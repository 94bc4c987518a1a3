"""Review flags: constructs the child cannot hold soundly and no honest student of this course
writes, found in the trusted parent on the sources the child runs (a syntax tree, never run).

A flag takes no points. It says, for a person to look at, which construct, where (the function,
or the file at module level) and on which line, in one sentence of evidence: the results model
carries it (``GradingResult.review_flags``), the gradebook's ``review`` column and the class
report's "For review" list show it, and so does the instructor's copy of the student's report
(``report_instructor.html``); the student's own feedback never does.

Each rule below says why it exists, what it stops and why an honest hand-in never needs it. The
honest hand-ins the repository holds (the eight honest styles, ``solutions/``, the example
submission, the honest idioms, the unseen-mistake and lab-mistake banks) give no flag at all:
``tests/grading/test_review_flags.py`` scans them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass

# --- the rules ----------------------------------------------------------------------------------
#
# autograd-function: a subclass of torch.autograd.Function chooses its own backward. The child's
# recorders see the kernels a backward runs, but not that the gradient handed back is the one the
# forward computes: a Function can give any gradient (a forged one, or the forbidden kernel's
# result computed earlier). The course writes gradients by hand or lets autograd differentiate
# the student's forward; nothing in it defines a Function.
AUTOGRAD_FUNCTION = "autograd-function"
# autograd-hook: register_hook and its kin (register_*_hook, register_prehook, the module and
# multi-grad hooks) run the student's code inside autograd's engine, after the graded call has
# returned: a hook can replace every gradient the engine passes (the backward route's forged
# gradients). No exercise or lab asks for a hook; gradients are read from .grad or returned.
AUTOGRAD_HOOK = "autograd-hook"
# saved-tensors-hooks: torch.autograd.graph's context managers (saved_tensors_hooks, save_on_cpu,
# disable_saved_tensors_hooks) are how the child itself watches autograd; a student's own ones
# replace the detector's for their extent. An honest submission has no reason to touch
# torch.autograd.graph at all.
SAVED_TENSORS_HOOKS = "saved-tensors-hooks"
# torch-override: a class that defines __torch_function__ or __torch_dispatch__ runs the student's
# code inside every torch call made on its values, the grader's own included (a comparison, a
# stand-in's look at its arguments): the carriers of the blind integrity bank queued work there
# to run while the recorders were paused. The stand-ins now refuse such values (plain.py), but a
# value of that class still reaches torch calls the child cannot list. Students compute with plain
# tensors; no exercise asks for a tensor subclass.
TORCH_OVERRIDE = "torch-override"
_OVERRIDES = frozenset({"__torch_function__", "__torch_dispatch__"})
# graph-walk: reading grad_fn or next_functions walks the autograd
# graph by hand; calling the nodes computes every gradient with no derivative written and none of
# the entry points the recorders name (the subset bank's manual reverse mode). Hand-written
# backward passes never look at the graph.
GRAPH_WALK = "graph-walk"
# pasted-table: many numbers written into the source, or much text in string or bytes literals
# that are not docstrings, is data: weights trained offline and pasted in (train_recall 5/6 with
# every other function a stub), a recorded answer, or code kept as text to run elsewhere.
# Measured on every honest source the repository holds (669 modules, tests/grading/
# honest_corpus.py): at most 16 numbers in one literal (a shape, a few tolerances, a small worked
# example in a self-test), 80 numbers in one module, 47 characters in one string and 977 in all
# of a module's strings (the error messages of the verbose style). The bounds are four to eight
# times those: 64 numbers in one literal, 400 in a module (a table split into small literals),
# 400 characters in one string (fewer than 70 float32 weights in base64) and 5000 in a module.
# Every trained model of the labs holds hundreds to thousands of weights.
PASTED_TABLE = "pasted-table"
MAX_NUMBERS = 64
MAX_MODULE_NUMBERS = 400
MAX_STRING = 400
MAX_MODULE_STRING = 5000

RULES = (AUTOGRAD_FUNCTION, AUTOGRAD_HOOK, SAVED_TENSORS_HOOKS, TORCH_OVERRIDE, GRAPH_WALK, PASTED_TABLE)

# register_hook, register_forward_hook, register_full_backward_pre_hook,
# register_post_accumulate_grad_hook, register_prehook, register_multi_grad_hook, and the
# torch.nn.modules.module global ones (register_module_forward_hook, ...)
_HOOK_NAME = re.compile(r"^register_(?:\w+_)?(?:pre)?hooks?$")
_SAVED_HOOKS = frozenset({"saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"})
_GRAPH_ATTRS = frozenset({"grad_fn", "next_functions"})
_FUNCTION_BASES = frozenset({"Function", "InplaceFunction", "NestedIOFunction", "FunctionCtx"})


@dataclass(frozen=True)
class ReviewFlag:
    """One construct for a person to look at: the rule, where it is (``module.function``, or
    ``exercises/<module>.py`` at module level), its line and a sentence of evidence."""

    rule: str
    where: str
    line: int
    evidence: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def review_flags(texts: Mapping[str, str]) -> list[ReviewFlag]:
    """The flags of every module of ``texts`` (module name -> source, as the child runs it), in
    module and line order, each construct once. A module that does not parse gives none: the
    loader has refused it already."""
    flags: list[ReviewFlag] = []
    for module in sorted(texts):
        try:
            tree = ast.parse(texts[module])
        except (SyntaxError, ValueError, RecursionError):
            continue
        flags += _module_flags(module, tree)
    return flags


def _module_flags(module: str, tree: ast.Module) -> list[ReviewFlag]:
    scan = _Scan(module, _aliases(tree))
    for top in tree.body:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scan.where = f"{module}.{top.name}"
        else:
            scan.where = f"exercises/{module}.py"
        scan.visit(top)
    if scan.numbers > MAX_MODULE_NUMBERS:
        line, where = scan.passed_at
        scan.add(
            PASTED_TABLE, where, line, f"{scan.numbers} numbers written in the module (more than {MAX_MODULE_NUMBERS})"
        )
    if scan.text > MAX_MODULE_STRING:
        line, where = scan.text_passed_at
        what = (
            f"{scan.text} characters of strings in the module (more than {MAX_MODULE_STRING}): data pasted in as text"
        )
        scan.add(PASTED_TABLE, where, line, what)
    return sorted(scan.flags, key=lambda f: (f.line, f.rule))


class _Scan:
    """One walk of a module's tree: every node's rules, the numbers of each outermost literal and
    of the module, docstrings left out."""

    def __init__(self, module: str, aliases: Mapping[str, str]) -> None:
        self.module, self.aliases, self.where = module, aliases, ""
        self.flags: list[ReviewFlag] = []
        self.numbers, self.passed_at = 0, (0, "")  # numbers written, where the module's bound was passed
        self.text, self.text_passed_at = 0, (0, "")  # characters of strings, the same

    def add(self, rule: str, where: str, line: int, evidence: str) -> None:
        if not any((f.rule, f.where, f.line) == (rule, where, line) for f in self.flags[-8:]):
            self.flags.append(ReviewFlag(rule, where, line, evidence))

    def visit(self, top: ast.AST) -> None:
        """Every node under ``top`` with its rules, and each literal's numbers counted from its
        children up; with a stack, not recursion: a deep expression is one more node."""
        counts: dict[int, int] = {}  # id(node) -> the numbers written in its subtree
        stack: list[tuple[ast.AST, bool]] = [(top, False)]
        while stack:
            node, children_done = stack.pop()
            if children_done:
                count = sum(counts.pop(id(child), 0) for child in ast.iter_child_nodes(node))
                if count > MAX_NUMBERS and isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
                    what = f"a literal of {count} numbers (more than {MAX_NUMBERS}): pasted data"
                    self.add(PASTED_TABLE, self.where, node.lineno, what)
                    count = 0  # its numbers are flagged here, not again by a literal around it
                counts[id(node)] = count
            elif isinstance(node, ast.Constant):
                counts[id(node)] = self._constant(node)
            elif (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                continue  # a docstring, or a string left as a comment: documentation the code never reads
            else:
                for rule, evidence in _node_rules(node, self.aliases):
                    self.add(rule, self.where, getattr(node, "lineno", 0), evidence)
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(list(ast.iter_child_nodes(node))))

    def _constant(self, node: ast.Constant) -> int:
        if type(node.value) in (int, float, complex):
            self.numbers += 1
            if self.numbers == MAX_MODULE_NUMBERS + 1:
                self.passed_at = (node.lineno, self.where)
            return 1
        if isinstance(node.value, str):
            for rule, evidence in _name_rules(node.value):
                self.add(rule, self.where, node.lineno, f"the string {evidence}")
        if isinstance(node.value, (str, bytes)):
            before, self.text = self.text, self.text + len(node.value)
            if before <= MAX_MODULE_STRING < self.text:
                self.text_passed_at = (node.lineno, self.where)
        if isinstance(node.value, (str, bytes)) and len(node.value) > MAX_STRING:
            what = f"a string of {len(node.value)} characters (more than {MAX_STRING}): data or code pasted in as text"
            self.add(PASTED_TABLE, self.where, node.lineno, what)
        return 0


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from imports and plain assignments of a name
    or an attribute chain (``from torch.autograd import Function as F``, ``AF = torch.autograd``)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            dotted = _dotted(node.value, aliases)
            if dotted:
                aliases[node.targets[0].id] = dotted
    return aliases


def _dotted(node: ast.AST, aliases: Mapping[str, str]) -> str:
    """``a.b.c`` for a name or an attribute chain, its head resolved through ``aliases``."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _node_rules(node: ast.AST, aliases: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in _OVERRIDES:
        yield TORCH_OVERRIDE, f"def {node.name}: the class's values run this code inside every torch call on them"
    if isinstance(node, ast.ClassDef):
        for base in node.bases:
            dotted = _dotted(base, aliases)
            head, _, last = dotted.rpartition(".")
            if last in _FUNCTION_BASES and "autograd" in head:
                yield AUTOGRAD_FUNCTION, f"class {node.name} subclasses {dotted}: it chooses its own gradients"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        prefix = f"{node.module}." if isinstance(node, ast.ImportFrom) and node.module else ""
        for alias in node.names:
            imported = prefix + alias.name
            last = imported.rpartition(".")[2]
            if last in _SAVED_HOOKS or "autograd.graph" in imported:
                yield (
                    SAVED_TENSORS_HOOKS,
                    f"import of {imported}: torch.autograd.graph's hooks replace the grader's own",
                )
            elif _HOOK_NAME.match(last):
                yield AUTOGRAD_HOOK, f"import of {imported}: a hook runs code inside autograd, after the graded call"
        return
    if isinstance(node, ast.Attribute):
        graph = node.attr == "graph" and _dotted(node, aliases).endswith("autograd.graph")
        yield from _name_rules(node.attr, graph)
    elif isinstance(node, ast.Name) and node.id in aliases:
        # a variable is judged by what it was bound to (an import, an attribute chain), never by
        # its own name: a student may call a helper grad_fn
        dotted = aliases[node.id]
        yield from _name_rules(dotted.rpartition(".")[2], dotted.endswith("autograd.graph"))


def _name_rules(name: str, graph: bool = False) -> Iterator[tuple[str, str]]:
    """The rules a name read (an attribute, a variable, or a string that names one for
    ``getattr``, ``setattr`` or a ``__dict__``) breaks."""
    if _HOOK_NAME.match(name):
        yield AUTOGRAD_HOOK, f"{name}: a hook runs this code inside autograd, after the graded call"
    if name in _SAVED_HOOKS or graph:
        yield SAVED_TENSORS_HOOKS, f"{name}: torch.autograd.graph's hooks replace the grader's own"
    if name in _GRAPH_ATTRS:
        yield GRAPH_WALK, f"{name}: the autograd graph is read by hand"
