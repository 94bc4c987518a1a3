"""Generated Python programs for the subset's checker: a Hypothesis strategy that builds syntax
trees statement by statement, with the constructs a course module is made of and the ones a
transformer most easily gets wrong (tuple and starred targets inside every kind of block, ``match``
with every pattern kind, augmented assignment to attributes and items, decorators and class
bases, walrus, comprehensions, ``try``/``except*``, ``async``), then unparsed to text.

hypothesmith generates from CPython's grammar (breadth: odd but valid token sequences) and from
libcst's node types; neither reaches ``match`` or nests a tuple target inside a case body, which
is where the checker once crashed (issue "One world"). This strategy reaches them on purpose, so
the next construct of that kind is found by generation rather than by a student.

Every program drawn is valid Python (``compile`` accepts it, or the draw is rejected), so any
exception out of the checker is the checker's fault.
"""

from __future__ import annotations

import ast
import functools

from hypothesis import assume
from hypothesis import strategies as st

NAMES = ("x", "y", "h", "params", "state", "_tmp", "__x", "self", "torch", "math", "i", "out")
ATTRS = ("shape", "T", "grad", "data", "weight", "_cache", "__dict__", "real", "append")
MODULES = ("torch", "math", "functools", "dataclasses", "enum", "typing", "itertools", "os", "sys")


def _name(ctx=None) -> st.SearchStrategy[ast.Name]:
    return st.sampled_from(NAMES).map(lambda n: ast.Name(n, ctx or ast.Load()))


_constants = st.one_of(
    st.integers(-3, 300),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text("ab\u2028é\\'\"{}", max_size=5),
    st.sampled_from([None, True, False, ...]),
    st.binary(max_size=3),
).map(ast.Constant)


@functools.cache  # one strategy object per depth, shared: reprs and draws stay small
def _expressions(depth: int) -> st.SearchStrategy[ast.expr]:
    leaf = st.one_of(_name(), _constants)
    if depth <= 0:
        return leaf
    sub = st.deferred(lambda: _expressions(depth - 1))
    subs = st.lists(sub, min_size=0, max_size=3)
    binops = st.sampled_from([ast.Add, ast.Sub, ast.Mult, ast.MatMult, ast.Div, ast.Pow, ast.FloorDiv, ast.Mod])
    comp_target = st.sampled_from(["i", "j", "_k"]).map(lambda n: ast.Name(n, ast.Store()))

    def comprehension(kind, elt, target, it, cond):
        gens = [ast.comprehension(target=target, iter=it, ifs=cond, is_async=0)]
        return {"list": ast.ListComp, "set": ast.SetComp, "gen": ast.GeneratorExp}[kind](elt=elt, generators=gens)

    return st.one_of(
        leaf,
        st.builds(ast.Attribute, value=sub, attr=st.sampled_from(ATTRS), ctx=st.just(ast.Load())),
        st.builds(
            ast.Subscript, value=sub, slice=st.one_of(sub, st.builds(ast.Slice, sub, sub)), ctx=st.just(ast.Load())
        ),
        st.builds(ast.BinOp, left=sub, op=binops.map(lambda o: o()), right=sub),
        st.builds(ast.UnaryOp, op=st.sampled_from([ast.USub(), ast.Not(), ast.Invert()]), operand=sub),
        st.builds(ast.Compare, left=sub, ops=st.just([ast.Lt()]), comparators=st.lists(sub, min_size=1, max_size=1)),
        st.builds(ast.BoolOp, op=st.sampled_from([ast.And(), ast.Or()]), values=st.lists(sub, min_size=2, max_size=3)),
        st.builds(
            ast.Call,
            func=st.one_of(sub, st.sampled_from(["getattr", "len", "zip", "super", "type", "print"]).map(ast.Name)),
            args=st.lists(st.one_of(sub, st.builds(ast.Starred, value=sub, ctx=st.just(ast.Load()))), max_size=3),
            keywords=st.lists(
                st.builds(ast.keyword, arg=st.sampled_from([None, "dim", "key"]), value=sub),
                max_size=2,
                unique_by=lambda k: k.arg or id(k),
            ),
        ),
        st.builds(ast.Tuple, elts=subs, ctx=st.just(ast.Load())),
        st.builds(ast.List, elts=subs, ctx=st.just(ast.Load())),
        st.lists(st.tuples(st.one_of(st.none(), sub), sub), max_size=2).map(
            lambda items: ast.Dict(keys=[k for k, _ in items], values=[v for _, v in items])
        ),
        st.builds(ast.IfExp, test=sub, body=sub, orelse=sub),
        st.builds(
            ast.Lambda,
            args=st.just(
                ast.arguments(posonlyargs=[], args=[ast.arg("a")], kwonlyargs=[], kw_defaults=[], defaults=[])
            ),
            body=sub,
        ),
        st.builds(ast.NamedExpr, target=st.sampled_from(["w", "n"]).map(lambda n: ast.Name(n, ast.Store())), value=sub),
        st.builds(
            comprehension, st.sampled_from(["list", "set", "gen"]), sub, comp_target, sub, st.lists(sub, max_size=1)
        ),
        st.builds(
            ast.JoinedStr,
            values=st.lists(
                st.one_of(
                    st.text("ab {}", max_size=3).map(ast.Constant),
                    st.builds(
                        ast.FormattedValue, value=sub, conversion=st.sampled_from([-1, 114]), format_spec=st.none()
                    ),
                ),
                max_size=3,
            ),
        ),
    )


@functools.cache  # one strategy object per depth, shared: reprs and draws stay small
def _targets(depth: int = 2) -> st.SearchStrategy[ast.expr]:
    """Assignment targets: names, attributes, items, and (nested, starred) tuples and lists of them."""
    simple = st.one_of(
        _name(ast.Store()),
        st.builds(ast.Attribute, value=_name(), attr=st.sampled_from(ATTRS), ctx=st.just(ast.Store())),
        st.builds(ast.Subscript, value=_name(), slice=_expressions(0), ctx=st.just(ast.Store())),
    )
    if depth <= 0:
        return simple
    inner = st.deferred(lambda: _targets(depth - 1))

    def unpack(kind, elts, star):
        if star is not None and elts:
            elts = [*elts[:star], ast.Starred(_name_store(elts[star]), ast.Store()), *elts[star + 1 :]]
        return kind(elts=elts, ctx=ast.Store())

    return st.one_of(
        st.builds(
            unpack,
            st.sampled_from([ast.Tuple, ast.List]),
            st.lists(inner, min_size=1, max_size=3),
            st.sampled_from([None, 0]),
        ),
        simple,
    )


def _name_store(node: ast.expr) -> ast.expr:
    return node if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) else ast.Name("rest", ast.Store())


@functools.cache  # one strategy object per depth, shared: reprs and draws stay small
def _patterns(depth: int) -> st.SearchStrategy[ast.pattern]:
    capture = st.sampled_from(["a", "b", "rest", "_x"]).map(lambda n: ast.MatchAs(pattern=None, name=n))
    leaf = st.one_of(
        st.just(ast.MatchAs(pattern=None, name=None)),
        capture,
        st.sampled_from([1, "s", 2.5]).map(lambda v: ast.MatchValue(ast.Constant(v))),
        st.sampled_from([None, True]).map(ast.MatchSingleton),
        st.sampled_from(["Color.RED", "torch.float64", "self._mode", "Cell.LSTM"]).map(
            lambda d: ast.MatchValue(ast.parse(d, mode="eval").body)
        ),
    )
    if depth <= 0:
        return leaf
    sub = st.deferred(lambda: _patterns(depth - 1))
    return st.one_of(
        leaf,
        st.builds(ast.MatchSequence, patterns=st.lists(st.one_of(sub, st.just(ast.MatchStar("rest"))), max_size=3)),
        st.builds(ast.MatchOr, patterns=st.lists(leaf, min_size=2, max_size=3)),
        st.builds(
            ast.MatchClass,
            cls=st.sampled_from(["Point", "torch.Tensor", "dict"]).map(lambda d: ast.parse(d, mode="eval").body),
            patterns=st.lists(sub, max_size=2),
            kwd_attrs=st.just([]),
            kwd_patterns=st.just([]),
        ),
        st.builds(
            lambda keys, pats, rest: ast.MatchMapping(
                keys=[ast.Constant(k) for k in keys], patterns=pats[: len(keys)], rest=rest
            ),
            st.lists(st.sampled_from(["k", "v", 1]), unique=True, min_size=1, max_size=2),
            st.lists(sub, min_size=2, max_size=2),
            st.sampled_from([None, "others"]),
        ),
        st.builds(ast.MatchAs, pattern=sub, name=st.sampled_from(["whole", "_y"])),
    )


@functools.cache  # one strategy object per depth, shared: reprs and draws stay small
def _statements(depth: int) -> st.SearchStrategy[ast.stmt]:
    expr = _expressions(2)
    simple = st.one_of(
        st.builds(ast.Assign, targets=st.lists(_targets(), min_size=1, max_size=2), value=expr, type_comment=st.none()),
        st.builds(
            ast.AugAssign,
            target=_targets(0),
            op=st.sampled_from([ast.Add(), ast.Mult(), ast.MatMult(), ast.BitOr()]),
            value=expr,
        ),
        st.builds(
            ast.AnnAssign,
            target=_name(ast.Store()),
            annotation=expr,
            value=st.one_of(st.none(), expr),
            simple=st.just(1),
        ),
        st.builds(ast.Expr, value=expr),
        st.builds(ast.Return, value=st.one_of(st.none(), expr)),
        st.builds(ast.Delete, targets=st.lists(_targets(0), min_size=1, max_size=2)),
        st.builds(ast.Assert, test=expr, msg=st.one_of(st.none(), expr)),
        st.builds(ast.Raise, exc=st.one_of(st.none(), expr), cause=st.none()),
        st.just(ast.Pass()),
        st.builds(
            ast.Import, names=st.lists(st.sampled_from(MODULES).map(lambda m: ast.alias(m)), min_size=1, max_size=2)
        ),
        st.builds(
            ast.ImportFrom,
            module=st.sampled_from(["torch", "math", "functools", "dataclasses", "", "rnn"]),
            names=st.lists(
                st.sampled_from(["nn", "sqrt", "partial", "dataclass", "rnn_cell", "load"]).map(ast.alias),
                min_size=1,
                max_size=2,
            ),
            level=st.sampled_from([0, 1]),
        ).filter(lambda n: n.module or n.level),
        st.builds(ast.Global, names=st.just(["state"])),
        st.builds(ast.Nonlocal, names=st.just(["h"])),
    )
    if depth <= 0:
        return simple
    body = st.lists(_statements(depth - 1), min_size=1, max_size=4)
    orelse = st.one_of(st.just([]), body)
    handler = st.builds(
        ast.ExceptHandler,
        type=st.one_of(st.none(), st.just(ast.Name("ValueError"))),
        name=st.sampled_from([None, "e"]),
        body=body,
    )
    decorators = st.lists(
        st.one_of(_expressions(1), st.just(ast.parse("dataclass(frozen=True)", mode="eval").body)), max_size=2
    )
    arguments = st.sampled_from(["self, x", "*args, **kwargs", "a, /, b=1, *, c", ""]).map(
        lambda a: ast.parse(f"def f({a}): pass").body[0].args
    )
    return st.one_of(
        simple,
        st.builds(ast.If, test=expr, body=body, orelse=orelse),
        st.builds(ast.While, test=expr, body=body, orelse=orelse),
        st.builds(ast.For, target=_targets(), iter=expr, body=body, orelse=orelse, type_comment=st.none()),
        st.builds(ast.AsyncFor, target=_targets(), iter=expr, body=body, orelse=orelse, type_comment=st.none()),
        st.builds(
            ast.With,
            items=st.lists(
                st.builds(ast.withitem, context_expr=expr, optional_vars=st.one_of(st.none(), _targets(1))),
                min_size=1,
                max_size=2,
            ),
            body=body,
            type_comment=st.none(),
        ),
        st.builds(
            ast.Try, body=body, handlers=st.lists(handler, min_size=1, max_size=2), orelse=orelse, finalbody=orelse
        ),
        st.builds(
            ast.TryStar,
            body=body,
            handlers=st.lists(
                st.builds(ast.ExceptHandler, type=st.just(ast.Name("ValueError")), name=st.none(), body=body),
                min_size=1,
                max_size=2,
            ),
            orelse=st.just([]),
            finalbody=orelse,
        ),
        st.builds(
            ast.Match,
            subject=expr,
            cases=st.lists(
                st.builds(ast.match_case, pattern=_patterns(2), guard=st.one_of(st.none(), expr), body=body),
                min_size=1,
                max_size=3,
            ),
        ),
        st.builds(
            ast.FunctionDef,
            name=st.sampled_from(["f", "forward", "__init__", "__call__", "_helper"]),
            args=arguments,
            body=body,
            decorator_list=decorators,
            returns=st.one_of(st.none(), expr),
            type_comment=st.none(),
        ),
        st.builds(
            ast.AsyncFunctionDef,
            name=st.just("g"),
            args=arguments,
            body=body,
            decorator_list=st.just([]),
            returns=st.none(),
            type_comment=st.none(),
        ),
        st.builds(
            ast.ClassDef,
            name=st.sampled_from(["Model", "Point", "_State"]),
            bases=st.lists(_expressions(1), max_size=2),
            keywords=st.just([]),
            body=body,
            decorator_list=decorators,
        ),
    )


def _valid(tree: ast.Module) -> str | None:
    """The program's text when Python accepts it (every draw's text is compiled once here)."""
    ast.fix_missing_locations(tree)
    try:
        text = ast.unparse(tree)
        compile(text, "<generated>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return None
    return text


def _module(preamble: list[str], statements: list[ast.stmt]) -> ast.Module:
    head = ast.parse("\n".join(preamble)).body
    return ast.Module(body=[*head, *statements], type_ignores=[])


PREAMBLES = st.lists(
    st.sampled_from(
        ["from __future__ import annotations", "import torch", "import math", "from dataclasses import dataclass"]
    ),
    unique=True,
).map(lambda lines: sorted(lines, key=lambda line: "__future__" not in line))


@st.composite
def programs(draw) -> str:
    """A valid Python module text (see the module docstring)."""
    tree = _module(draw(PREAMBLES), draw(st.lists(_statements(3), min_size=2, max_size=6)))
    text = _valid(tree)
    assume(text is not None)
    return text  # type: ignore[return-value]
