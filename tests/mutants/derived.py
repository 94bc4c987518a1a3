"""Known-wrong submissions read from the graders' own mistake tables, so that a mistake is
declared once: as the row the grader names in its feedback.

A grader declares its mistakes as rows ``(name, switches, explanation)`` beside a variant, a
function that computes the wrong answers (``from_table(ROWS, variant)``, seqlab/grading/mistakes.py).
Where the variant takes the contract function's own parameters first (``layer_norm_variant(x,
weight, bias, eps=1e-5, *, unbiased=False, ...)``), the variant with a row's switches *is* a
student's wrong function: ``derived_mutants`` writes it as one, with the grader-module helpers
it reads (found by name, transitively), and the mutant test then asks of the grader what it asks
of every hand-written mutant: points lost in that function only, and this row's name in the
feedback. A row whose variant needs more than its inputs (the reference, a partial) is left to
the hand-written bank.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import textwrap
import types
import warnings
from functools import cache
from pathlib import Path

import pytest

from seqlab import contract
from tests.mutants import ROOT, Variant

# What a derived submission imports itself; any other global a variant reads must be a function
# or a plain constant of its grader module.
PROVIDED = {"torch": "import torch", "math": "import math", "F": "import torch.nn.functional as F"}


@cache
def grader_module(path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"_derived_graders_{abs(hash(path))}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():  # its @grades marks are registered by the grading plugin, not here
        warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
        spec.loader.exec_module(module)
    return module


def _tables(tree: ast.Module) -> list[tuple[str, str]]:
    """``(ROWS, variant)`` for every ``from_table(ROWS, variant)`` naming both plainly."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "from_table" and len(node.args) == 2:
            rows, variant = node.args
            if isinstance(rows, ast.Name) and isinstance(variant, ast.Name):
                found.append((rows.id, variant.id))
    return sorted(set(found))


def _contract_function(signatures: dict[str, str], topic: str, variant) -> str | None:
    """The contract function whose parameters the variant starts with, in order and by name."""
    params = [p.name for p in inspect.signature(variant).parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
    for qualname, signature in signatures.items():
        if qualname.startswith(f"{topic}.") and params == _parameters(signature):
            return qualname
    return None


def _parameters(signature: str) -> list[str]:
    namespace: dict = {}
    exec(f"import torch\ndef f{signature}: pass", namespace)
    return list(inspect.signature(namespace["f"]).parameters)


def _helpers(module: types.ModuleType, fn) -> list[str] | None:
    """The source of ``fn`` and of every grader-module function and constant it reads, helpers
    first; None where it reads something that cannot be written into a submission."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> bool:
        if name in seen or name in PROVIDED:
            return True
        seen.add(name)
        value = vars(module)[name]
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            names = {
                n.id for n in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(value)))) if isinstance(n, ast.Name)
            }
            if not all(visit(n) for n in sorted(names) if n in vars(module)):
                return False
            order.append(textwrap.dedent(inspect.getsource(value)))
            return True
        if isinstance(value, (int, float, str, tuple)) and not isinstance(value, bool):
            order.append(f"{name} = {value!r}\n")
            return True
        return False

    return order if visit(fn.__name__) else None


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
        for rows_name, variant_name in _tables(ast.parse(path.read_text(encoding="utf-8"))):
            variant = vars(module).get(variant_name)
            if not callable(variant):
                continue  # a table applied to a local function (a lab's replay): no mutant to derive
            qualname = _contract_function(table["signatures"], topic, variant)
            helpers = _helpers(module, variant) if qualname else None
            if helpers is None:
                continue
            function = qualname.split(".", 1)[1]
            params = table["signatures"][qualname][1:-1]
            passed = ", ".join(f"{p}={p}" for p in _parameters(table["signatures"][qualname]))
            for name, switches, _explain in vars(module)[rows_name]:
                if not isinstance(switches, dict):
                    continue
                call = ", ".join([passed, *(f"{k}={v!r}" for k, v in switches.items())])
                source = "\n".join(
                    [
                        *PROVIDED.values(),
                        "",
                        *helpers,
                        f"def {function}({params}):",
                        f"    return {variant.__name__}({call})",
                        "",
                    ]
                )
                found.append(Variant(qualname, f"{name} (the grader's {rows_name})", source, hint=name))
    return tuple(found)
