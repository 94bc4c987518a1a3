"""The student-facing contract as data, read from ``solutions/``: nothing here is written twice.

- ``MODULES``: the topics in teaching order, the one declaration ``TOPICS`` of
  ``solutions/__init__.py`` (copied into the stubs' ``exercises/__init__.py``);
- ``SIGNATURES``: every public ``def`` of ``solutions/<topic>.py``, in file order, with its
  parameters exactly as written there (a function added to a solution module is a contract
  function; a helper students get for free starts with ``_``), but for the lab parts that
  ``LAB_PARTS`` in ``solutions/__init__.py`` names: a lab's task generator and its model's
  forward, public because the notebook calls them, graded only through their lab;
- ``LABS``: the functions of the curriculum's "Labs" section, declared as ``LABS`` in
  ``solutions/__init__.py`` (a topic's functions put together; ``seqlab grade --no-labs`` and the
  project's own tests leave them out); ``EXERCISES`` are the rest;
- ``DECLARED_CALLEES``: the contract functions each reference other than a lab's calls ("Calls
  between functions" in the student contract: a lab runs the student's own functions). During grading those calls, where the student's call is one the
  reference makes on the test's own inputs, get a correct callee (seqlab/student/callees.py);
  any other call between contract functions runs the student's own code.

The files are parsed, never imported, so reading the contract runs no course code. Each
function's full contract (the math, every argument's shape and dtype, the PyTorch built-in it
must agree with) is its docstring, copied verbatim into the stub students get. A signature
never changes once students have it.

A student's child process cannot see ``solutions/``: its parent hands it the table it read
(:func:`table`, :func:`install`) before any of the child's code asks for it.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

_TABLE: dict[str, Any] | None = None
_VIEWS: dict[str, Any] = {}


def read(solutions_dir: Path) -> dict[str, Any]:
    """The contract of the course whose solutions are in ``solutions_dir``, as plain data."""
    init = solutions_dir / "__init__.py"
    topics, labs, parts = _declared(init, "TOPICS"), _declared(init, "LABS"), set(_declared(init, "LAB_PARTS"))
    signatures: dict[str, str] = {}
    calls: dict[str, list[str]] = {}
    for topic in topics:
        tree = ast.parse((solutions_dir / f"{topic}.py").read_text(encoding="utf-8"))
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
        names = {d.name: f"{topic}.{d.name}" for d in defs}
        for node in tree.body:  # from .attention import multi_head_attention
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module in topics:
                names.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
        for d in defs:
            if names[d.name] in parts:
                continue
            signatures[names[d.name]] = f"({ast.unparse(d.args)})"
            known = dict(names)  # and what the function imports inside itself (the labs do)
            for inner in ast.walk(d):
                if isinstance(inner, ast.ImportFrom) and inner.level == 1 and inner.module in topics:
                    known.update({a.asname or a.name: f"{inner.module}.{a.name}" for a in inner.names})
            calls[names[d.name]] = [
                known[n.func.id]
                for n in ast.walk(d)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in known
            ]
    unknown = sorted(set(labs) - set(signatures))
    if unknown:
        raise LookupError(f"{init}: LABS names {', '.join(unknown)}, not a function of solutions/")
    order = list(signatures)
    callees = {
        q: sorted({c for c in called if c != q and c in signatures}, key=order.index)
        for q, called in calls.items()
        if q not in labs
    }
    return {
        "modules": list(topics),
        "signatures": signatures,
        "labs": [q for q in order if q in labs],
        "callees": {q: c for q, c in callees.items() if c},
    }


def lab_parts(solutions_dir: Path) -> tuple[str, ...]:
    """The ``LAB_PARTS`` of ``solutions_dir/__init__.py``: qualified names, graded through a lab."""
    return _declared(solutions_dir / "__init__.py", "LAB_PARTS")


def _declared(init: Path, name: str) -> tuple[str, ...]:
    """The tuple of strings ``name = (...)`` in ``init`` (TOPICS must be there; the others may not)."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [name]:
            return tuple(ast.literal_eval(node.value))
    if name == "TOPICS":
        raise LookupError(f"{init}: no TOPICS = (...) naming the topics in teaching order")
    return ()


def table() -> dict[str, Any]:
    """This process's contract: the one ``install``-ed, else the course's own, read once."""
    if _TABLE is None:
        from .paths import SOLUTIONS_DIR

        install(read(SOLUTIONS_DIR))
    assert _TABLE is not None  # install() sets it
    return _TABLE


def install(contract: dict[str, Any]) -> None:
    """Use ``contract`` (a :func:`table` sent over by a trusted parent) in this process."""
    global _TABLE
    signatures = dict(contract["signatures"])
    callees = {q: tuple(c) for q, c in contract["callees"].items()}
    labs = tuple(contract.get("labs", ()))
    _TABLE = {
        "modules": list(contract["modules"]),
        "signatures": dict(signatures),
        "labs": list(labs),
        "callees": {q: list(c) for q, c in callees.items()},
    }
    _VIEWS.update(
        MODULES=tuple(contract["modules"]),
        SIGNATURES=signatures,
        FUNCTIONS=tuple(signatures),
        LABS=labs,
        EXERCISES=tuple(q for q in signatures if q not in labs),
        DECLARED_CALLEES=callees,
    )


def __getattr__(name: str) -> Any:
    if name in ("MODULES", "SIGNATURES", "FUNCTIONS", "LABS", "EXERCISES", "DECLARED_CALLEES"):
        table()
        return _VIEWS[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def functions_of(module: str) -> list[str]:
    """Qualified names of the contract functions in ``module``, in contract order."""
    return [name for name in table()["signatures"] if name.partition(".")[0] == module]


def split(qualname: str) -> tuple[str, str]:
    """``"attention.causal_mask"`` -> ``("attention", "causal_mask")``; KeyError for a name that is
    not a contract function, so a typo fails where it is made."""
    module, _, function = qualname.partition(".")
    if qualname not in table()["signatures"]:
        raise KeyError(f"{qualname!r} is not a contract function")
    return module, function


def declared_callees(qualname: str) -> tuple[str, ...]:
    """The contract functions ``qualname`` may call and get a correct callee for (maybe none)."""
    table()
    return _VIEWS["DECLARED_CALLEES"].get(qualname, ())
