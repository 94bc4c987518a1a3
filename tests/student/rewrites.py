"""Semantics-preserving rewrites of a student's module, for the rewrite bank (issue "One world").

Each rewrite changes how a module is written and never what it computes, the way compiler
testers rewrite programs into equivalent ones (equivalence modulo inputs): an honest submission
and each of its rewrites must grade alike, so a rule or a transformer that treats one of these
styles differently shows up as a lost point. The rewrites are the styles honest students were
seen to write, and the ones that once broke the grader:

* ``hoist_constants``: float literals inside functions become module-level constants, and a
  module-level tensor constant is added (the first tensor made by the module itself);
* ``if_to_match``: an ``if``/``elif`` chain comparing one name with literals becomes ``match``;
* ``loops_to_comprehensions``: ``out = []`` then ``for v in xs: out.append(e)`` becomes a
  list comprehension (only where ``v`` is not used after the loop);
* ``tuple_unpacking``: two independent assignments in a row become one tuple assignment;
* ``walrus``: an assignment whose name the next ``if`` test starts with moves into the test;
* ``range_loops_to_while``: ``for i in range(n)`` becomes a counted ``while`` loop;
* ``helper_class``: every top-level function's body moves into a static method of a helper
  class, and the function calls it with the same arguments;
* ``all_of_them``: every rewrite above that applies, in turn.

Each returns the new text, or None when the module holds no place for it. Comments are not kept
(the text is unparsed from the tree): they never change what a module computes.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]


def _insert_after_imports(tree: ast.Module, statements: list[ast.stmt]) -> None:
    last = 0
    for i, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)) or (
            i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        ):
            last = i + 1
    tree.body[last:last] = statements


def hoist_constants(text: str) -> str | None:
    tree = ast.parse(text)
    constants: dict[float, str] = {}

    class Hoist(ast.NodeTransformer):
        def visit_JoinedStr(self, node):  # a literal inside an f-string's format spec stays
            return node

        def visit_Constant(self, node):
            if type(node.value) is float:
                name = constants.setdefault(node.value, f"_HOISTED_{len(constants)}")
                return ast.copy_location(ast.Name(name, ast.Load()), node)
            return node

    for function in _functions(tree):
        for default in [*function.args.defaults, *function.args.kw_defaults]:
            if default is not None:
                Hoist().visit(default)
        function.body = [Hoist().visit(s) for s in function.body]
    if not constants:
        return None
    hoisted: list[ast.stmt] = [
        ast.Assign([ast.Name(name, ast.Store())], ast.Constant(value)) for value, name in constants.items()
    ]
    if "torch" in {a.asname or a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}:
        hoisted += ast.parse("_HOISTED_TINY = torch.tensor(1e-300, dtype=torch.float64)").body
    _insert_after_imports(tree, hoisted)
    return ast.unparse(ast.fix_missing_locations(tree))


def _chain(node: ast.If) -> tuple[str, list[tuple[ast.Constant, list[ast.stmt]]], list[ast.stmt]] | None:
    """``if x == 'a': ... elif x == 'b': ... else: ...`` as (x, [(literal, body)], else-body)."""
    arms, subject, current = [], None, node
    while True:
        test = current.test
        if not (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.left, ast.Name)
            and isinstance(test.comparators[0], ast.Constant)
            and type(test.comparators[0].value) in (str, int)
            and type(test.comparators[0].value) is not bool
        ):
            return None
        if subject not in (None, test.left.id):
            return None
        subject = test.left.id
        arms.append((test.comparators[0], current.body))
        if len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
            current = current.orelse[0]
            continue
        assert subject is not None
        return subject, arms, current.orelse


def if_to_match(text: str) -> str | None:
    tree = ast.parse(text)
    changed = []

    class ToMatch(ast.NodeTransformer):
        def visit_If(self, node):
            self.generic_visit(node)
            found = _chain(node)
            if found is None or (len(found[1]) < 2 and not found[2]):
                return node
            subject, arms, rest = found
            cases = [ast.match_case(ast.MatchValue(copy.deepcopy(literal)), None, body) for literal, body in arms]
            if rest:
                cases.append(ast.match_case(ast.MatchAs(None, None), None, rest))
            changed.append(subject)
            return ast.copy_location(ast.Match(ast.Name(subject, ast.Load()), cases), node)

    tree = ToMatch().visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree)) if changed else None


def _bodies(tree: ast.AST):
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield node, field, block


def loops_to_comprehensions(text: str) -> str | None:
    tree = ast.parse(text)
    changed = False
    for function in _functions(tree):
        for owner, _field, block in list(_bodies(function)):
            i = 0
            while i + 1 < len(block):
                first, loop = block[i], block[i + 1]
                if (
                    isinstance(first, ast.Assign)
                    and len(first.targets) == 1
                    and isinstance(first.targets[0], ast.Name)
                    and isinstance(first.value, ast.List)
                    and not first.value.elts
                    and isinstance(loop, ast.For)
                    and not loop.orelse
                    and len(loop.body) == 1
                    and isinstance(loop.body[0], ast.Expr)
                    and isinstance(call := loop.body[0].value, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "append"
                    and isinstance(call.func.value, ast.Name)
                    and call.func.value.id == first.targets[0].id
                    and len(call.args) == 1
                    and not call.keywords
                ):
                    loop_names = _names_in(loop.target)
                    later = [s for s in block[i + 2 :]] + [
                        s for s in function.body if s not in block and s is not owner
                    ]
                    used_after = set().union(*(_names_in(s) for s in later)) if later else set()
                    uses_itself = first.targets[0].id in _names_in(call.args[0]) | _names_in(loop.iter)
                    if (
                        not (loop_names & used_after)
                        and not uses_itself
                        and not any(
                            isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await))
                            for n in ast.walk(call.args[0])
                        )
                    ):
                        comp = ast.ListComp(call.args[0], [ast.comprehension(loop.target, loop.iter, [], 0)])
                        block[i : i + 2] = [ast.copy_location(ast.Assign([first.targets[0]], comp), first)]
                        changed = True
                i += 1
    return ast.unparse(ast.fix_missing_locations(tree)) if changed else None


def tuple_unpacking(text: str) -> str | None:
    tree = ast.parse(text)
    changed = False
    for function in _functions(tree):
        for _, _, block in list(_bodies(function)):
            i = 0
            while i + 1 < len(block):
                a, b = block[i], block[i + 1]
                if (
                    all(isinstance(s, ast.Assign) and len(s.targets) == 1 for s in (a, b))
                    and all(isinstance(s.targets[0], ast.Name) for s in (a, b))  # type: ignore[attr-defined]
                    and a.targets[0].id != b.targets[0].id  # type: ignore[attr-defined]
                    and a.targets[0].id not in _names_in(b.value)  # type: ignore[attr-defined]
                    and not any(isinstance(n, ast.NamedExpr) for s in (a, b) for n in ast.walk(s))  # type: ignore[attr-defined]
                ):
                    targets = ast.Tuple([a.targets[0], b.targets[0]], ast.Store())  # type: ignore[attr-defined]
                    values = ast.Tuple([a.value, b.value], ast.Load())  # type: ignore[attr-defined]
                    block[i : i + 2] = [ast.copy_location(ast.Assign([targets], values), a)]
                    changed = True
                i += 1
    return ast.unparse(ast.fix_missing_locations(tree)) if changed else None


def walrus(text: str) -> str | None:
    tree = ast.parse(text)
    changed = False
    for function in _functions(tree):
        for _, _, block in list(_bodies(function)):
            i = 0
            while i + 1 < len(block):
                a, b = block[i], block[i + 1]
                if (
                    isinstance(a, ast.Assign)
                    and len(a.targets) == 1
                    and isinstance(a.targets[0], ast.Name)
                    and isinstance(b, ast.If)
                    and isinstance(b.test, ast.Compare)
                    and isinstance(b.test.left, ast.Name)
                    and b.test.left.id == a.targets[0].id
                    and not any(isinstance(n, ast.NamedExpr) for n in ast.walk(a.value))
                ):
                    b.test.left = ast.NamedExpr(ast.Name(a.targets[0].id, ast.Store()), a.value)
                    del block[i]
                    changed = True
                i += 1
    return ast.unparse(ast.fix_missing_locations(tree)) if changed else None


def helper_class(text: str) -> str | None:
    tree = ast.parse(text)
    functions = [
        n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.decorator_list and not _is_generator(n)
    ]
    if not functions:
        return None
    methods = []
    for function in functions:
        method = copy.deepcopy(function)
        method.decorator_list = [ast.Name("staticmethod", ast.Load())]
        methods.append(method)
        args = function.args
        positional = [ast.Name(a.arg, ast.Load()) for a in [*args.posonlyargs, *args.args]]
        if args.vararg:
            positional.append(ast.Starred(ast.Name(args.vararg.arg, ast.Load()), ast.Load()))
        keywords = [ast.keyword(a.arg, ast.Name(a.arg, ast.Load())) for a in args.kwonlyargs]
        if args.kwarg:
            keywords.append(ast.keyword(None, ast.Name(args.kwarg.arg, ast.Load())))
        call = ast.Call(ast.Attribute(ast.Name("_Impl", ast.Load()), function.name, ast.Load()), positional, keywords)
        docstring = function.body[:1] if ast.get_docstring(function) else []
        function.body = [*docstring, ast.Return(call)]
    tree.body.append(ast.ClassDef("_Impl", [], [], methods, []))
    return ast.unparse(ast.fix_missing_locations(tree))


def range_loops_to_while(text: str) -> str | None:
    """``for i in range(n): body`` -> ``i = 0`` / ``while i < n: body; i += 1``, where the body
    neither breaks, continues nor assigns ``i`` or the bounds, and ``i`` is not read after."""
    tree = ast.parse(text)
    changed = False
    for function in _functions(tree):
        for _, _, block in list(_bodies(function)):
            for i, loop in enumerate(list(block)):
                if not (
                    isinstance(loop, ast.For)
                    and not loop.orelse
                    and isinstance(loop.target, ast.Name)
                    and isinstance(loop.iter, ast.Call)
                    and isinstance(loop.iter.func, ast.Name)
                    and loop.iter.func.id == "range"
                    and 1 <= len(loop.iter.args) <= 2
                    and not loop.iter.keywords
                    and all(isinstance(a, (ast.Name, ast.Constant)) for a in loop.iter.args)
                ):
                    continue
                name = loop.target.id
                bounds = {a.id for a in loop.iter.args if isinstance(a, ast.Name)}
                stored = {
                    n.id
                    for s in loop.body
                    for n in ast.walk(s)
                    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
                }
                jumps = any(
                    isinstance(n, (ast.Break, ast.Continue, ast.Return)) for s in loop.body for n in ast.walk(s)
                )
                later = set().union(set(), *(_names_in(s) for s in block[i + 1 :]))
                if jumps or ({name} | bounds) & stored or name in later or name in bounds:
                    continue
                start, stop = (ast.Constant(0), loop.iter.args[0]) if len(loop.iter.args) == 1 else loop.iter.args
                init = ast.Assign([ast.Name(name, ast.Store())], copy.deepcopy(start))
                test = ast.Compare(ast.Name(name, ast.Load()), [ast.Lt()], [copy.deepcopy(stop)])
                step = ast.AugAssign(ast.Name(name, ast.Store()), ast.Add(), ast.Constant(1))
                at = block.index(loop)
                block[at : at + 1] = [init, ast.While(test, [*loop.body, step], [])]
                changed = True
    return ast.unparse(ast.fix_missing_locations(tree)) if changed else None


def all_of_them(text: str) -> str | None:
    """Every rewrite that applies, one after the other."""
    out = text
    for name, rewrite in REWRITES.items():
        if name != "all_of_them":
            out = rewrite(out) or out
    return out if out != text else None


def _is_generator(function: ast.FunctionDef) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(function))


REWRITES: dict[str, Callable[[str], str | None]] = {
    "hoist_constants": hoist_constants,
    "if_to_match": if_to_match,
    "loops_to_comprehensions": loops_to_comprehensions,
    "tuple_unpacking": tuple_unpacking,
    "walrus": walrus,
    "range_loops_to_while": range_loops_to_while,
    "helper_class": helper_class,
    "all_of_them": all_of_them,
}
