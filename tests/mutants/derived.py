"""Known-wrong submissions read from the graders' own mistake tables, so that a mistake is
declared once: as the row the grader names in its feedback.

A grader declares its mistakes as rows ``(name, switches, explanation)`` beside a variant, a
function that computes the wrong answers (``from_table(ROWS, variant)``, seqlab/grading/mistakes.py),
or as rows ``(name, function, explanation)`` whose function computes one mistake. Where the
variant (or the row's function) takes the contract function's own parameters first, by name
(``layer_norm_variant(x, weight, bias, eps=1e-5, *, unbiased=False, ...)``), the variant with a
row's switches *is* a student's wrong function: ``derived_mutants`` writes it as one, with the
grader-module helpers it reads (found by name, transitively), and the mutant test then asks of
the grader what it asks of every hand-written mutant: points lost in that function only, and
this row's name in the feedback. A table may be a list of tables, single rows and calls that
make rows (``[*TABLE, ROW, *in_the_step(...)]``); a switch may be a literal, a torch function or
a partial of a grader function. A variant built on the reference's pieces takes them first
(``functools.partial(encoder_variant, ref)``): in the submission it gets the submission's own
declared callees in their place, as a student's block calls them. A row whose variant or switch
needs more than that (a lambda, the reference's answer itself) is left to the hand-written bank.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import textwrap
import types
import warnings
from collections import Counter
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
import torch

from seqlab import contract
from tests.mutants import ROOT, Variant

# What a derived submission imports itself; any other global a variant reads must be a function
# or a plain constant of its grader module.
PROVIDED = {
    "torch": "import torch",
    "math": "import math",
    "F": "import torch.nn.functional as F",
    "functools": "import functools",
}


@cache
def grader_module(path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"_derived_graders_{abs(hash(path))}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():  # its @grades marks are registered by the grading plugin, not here
        warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
        spec.loader.exec_module(module)
    return module


def _tables(tree: ast.Module) -> list[tuple[tuple[tuple[str, bool], ...], str]]:
    """``(parts, variant)`` for every ``from_table(rows, variant)`` naming its variant plainly or
    as ``functools.partial(variant, ref)`` (then ``variant`` is written ``"variant(ref)"``):
    ``parts`` are the expressions ``rows`` lists (``ROWS``, or ``[*ROWS, ROW, *in_the_step(...)]``),
    each with whether it gives a table (True) or one row."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "from_table" and node.args:
            rows, variant = (node.args + [ast.Name("")])[:2]  # no variant: each row's function is one
            if _on_reference(variant):
                variant = ast.Name(f"{variant.args[0].id}(ref)")
            if not isinstance(variant, ast.Name):
                continue
            elements = rows.elts if isinstance(rows, ast.List) else [ast.Starred(rows)]
            parts = [
                (ast.unparse(e.value), True) if isinstance(e, ast.Starred) else (ast.unparse(e), False)
                for e in elements
            ]
            found.append((tuple(parts), variant.id))
    return sorted(set(found))


def _on_reference(node: ast.expr) -> bool:
    """Whether ``node`` is ``functools.partial(name, ref)``: a variant given the reference's pieces."""
    return (
        isinstance(node, ast.Call)
        and ast.unparse(node.func) == "functools.partial"
        and [type(a) for a in node.args] == [ast.Name, ast.Name]
        and node.args[1].id == "ref"
        and not node.keywords
    )


def _function_tables(module: types.ModuleType, taken: set[str]) -> list[tuple[tuple[tuple[str, bool], ...], str]]:
    """The grader's other tables of rows ``(name, function, explanation)`` (those it hands to a
    helper of its own rather than to ``from_table``), as ``_tables`` gives them."""
    return [
        (((name, True),), "")
        for name, value in vars(module).items()
        if name not in taken
        and isinstance(value, list)
        and value
        and all(
            isinstance(row, tuple) and len(row) == 3 and isinstance(row[0], str) and inspect.isfunction(row[1])
            for row in value
        )
    ]


def _switch(module: types.ModuleType, value) -> tuple[str, list] | None:
    """A switch's value as source a submission can run, with the grader functions it names;
    None where it has none."""
    if isinstance(value, types.BuiltinFunctionType) and getattr(torch, value.__name__, None) is value:
        return f"torch.{value.__name__}", []
    if isinstance(value, functools.partial) and not value.args and vars(module).get(value.func.__name__) is value.func:
        keywords = [(k, _switch(module, v)) for k, v in value.keywords.items()]
        if any(written is None for _, written in keywords):
            return None
        call = ", ".join([value.func.__name__, *(f"{k}={text}" for k, (text, _) in keywords)])
        return f"functools.partial({call})", [value.func, *(f for _, (_, fns) in keywords for f in fns)]
    text = repr(value)
    try:
        return (text, []) if ast.literal_eval(text) == value else None
    except (ValueError, SyntaxError):
        return None


def _contract_function(signatures: dict[str, str], topic: str, variant, on_reference: bool = False) -> str | None:
    """The contract function whose parameters the variant starts with (after ``ref``, for a
    variant on the reference), in order and by name."""
    params = [p.name for p in inspect.signature(variant).parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
    params = params[1:] if on_reference else params
    for qualname, signature in signatures.items():
        if qualname.startswith(f"{topic}.") and params == _parameters(signature):
            return qualname
    return None


def _parameters(signature: str) -> list[str]:
    namespace: dict = {}
    exec(f"import torch\ndef f{signature}: pass", namespace)
    return list(inspect.signature(namespace["f"]).parameters)


@cache
def _source(fn) -> tuple[str, list[str]]:
    """A grader function's source, and the names it reads (sorted): read once, however many rows
    write it (inspect re-tokenises the file each time)."""
    source = textwrap.dedent(inspect.getsource(fn))
    return source, sorted({n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)})


def _helpers(module: types.ModuleType, *fns) -> list[str] | None:
    """The source of ``fns`` and of every grader-module function and constant they read, helpers
    first; None where one reads something that cannot be written into a submission."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> bool:
        if name in seen or name in PROVIDED:
            return True
        seen.add(name)
        value = vars(module)[name]
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            source, names = _source(value)
            if not all(visit(n) for n in names if n in vars(module)):
                return False
            order.append(source)
            return True
        if isinstance(value, (int, float, str, tuple)) and not isinstance(value, bool):
            order.append(f"{name} = {value!r}\n")
            return True
        return False

    return order if all(visit(fn.__name__) for fn in fns) else None


@cache
def derived_mutants(course: Path = ROOT) -> tuple[Variant, ...]:
    """Every mutant the mistake tables of ``course``'s graders give (this course by default)."""
    table = contract.table() if course == ROOT else contract.read(course / "solutions")
    found = []
    for topic in table["modules"]:
        path = course / "graders" / f"test_{topic}.py"
        if not path.is_file():
            continue
        module = grader_module(path)
        tables = _tables(ast.parse(path.read_text(encoding="utf-8")))
        tables += _function_tables(module, {name for parts, _ in tables for name, _ in parts})
        for parts, written in tables:
            variant_name = written.removesuffix("(ref)")
            variant = vars(module).get(variant_name) if variant_name else None
            if variant_name and not callable(variant):
                continue  # a table applied to a local function (a lab's replay): no mutant to derive
            for rows_name, is_table in parts:
                value = eval(rows_name, vars(module))  # the grader's own expression, in its own namespace
                rows = value if is_table else [value]
                on_reference = written.endswith("(ref)")
                found += [
                    m for row in rows if (m := _mutant(module, table, topic, variant, rows_name, row, on_reference))
                ]
    # rows the grader cannot tell apart share a name (seqlab.grading.mistakes.first_match): their
    # ids say which form each one is
    twice = Counter(m.id for m in found)
    return tuple(replace(m, description=f"{m.description[:-1]}: {m.form})") if twice[m.id] > 1 else m for m in found)


def _mutant(
    module: types.ModuleType, table: dict, topic: str, variant, rows_name: str, row, on_reference: bool = False
) -> Variant | None:
    """The row ``(name, switches, explanation)`` of ``variant``'s table (or ``(name, function,
    explanation)`` of a table without one) written as a wrong contract function, or None where
    it cannot be written."""
    name, switches, _explain = row
    form = ""
    if variant is None and isinstance(switches, types.FunctionType) and switches.__name__ != "<lambda>":
        variant, switches, form = switches, {}, switches.__name__
    if variant is None or not isinstance(switches, dict):
        return None
    qualname = _contract_function(table["signatures"], topic, variant, on_reference)
    if qualname is None or (on_reference and qualname in table["labs"]):
        return None  # a lab has no declared callees to stand in for the reference's (it imports its own)
    written = {k: _switch(module, v) for k, v in switches.items()}
    if any(w is None for w in written.values()):
        return None
    helpers = _helpers(module, variant, *(f for _, fns in written.values() for f in fns))
    if helpers is None:
        return None
    function = qualname.split(".", 1)[1]
    params = table["signatures"][qualname][1:-1]
    passed = ", ".join(f"{p}={p}" for p in _parameters(table["signatures"][qualname]))
    call = ", ".join([*([OWN] if on_reference else []), passed, *(f"{k}={text}" for k, (text, _) in written.items())])
    if on_reference:
        helpers.append(_own_callees(table["callees"].get(qualname, [])))
    source = "\n".join(
        [*PROVIDED.values(), "", *helpers, f"def {function}({params}):", f"    return {variant.__name__}({call})", ""]
    )
    form = form or ", ".join(f"{k}={text}" for k, (text, _) in written.items())
    return Variant(qualname, f"{name} (the grader's {rows_name})", source, hint=name, form=form)


# What a variant on the reference is given in a submission: the submission's own declared callees.
OWN = "own_callee"


def _own_callees(callees: list[str]) -> str:
    """The function a variant on the reference calls as ``ref(qualname)``, in a submission: the
    names the reference calls them by, looked up when called (so the grading's stand-ins answer)."""
    pairs = ", ".join(f"{q!r}: {q.split('.', 1)[1]}" for q in callees)
    return f"def {OWN}(qualname):\n    return {{{pairs}}}[qualname]\n"
