"""The student-facing contract as data, read from ``solutions/``: nothing here is written twice.

- ``MODULES``: the topics in teaching order, the one declaration ``TOPICS`` of
  ``solutions/__init__.py`` (copied into the stubs' ``exercises/__init__.py``);
- ``SIGNATURES``: every public ``def`` of ``solutions/<topic>.py``, in file order, with its
  parameters exactly as written there (a function added to a solution module is a contract
  function; a helper students get for free starts with ``_``);
- ``DECLARED_CALLEES``: the contract functions each reference calls ("Calls between functions"
  in the student contract). During grading those calls, where the student's call is one the
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
    topics = _topics(solutions_dir / "__init__.py")
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
            signatures[names[d.name]] = f"({ast.unparse(d.args)})"
            calls[names[d.name]] = [
                names[n.func.id]
                for n in ast.walk(d)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
            ]
    order = list(signatures)
    callees = {
        q: sorted({c for c in called if c != q and c in signatures}, key=order.index) for q, called in calls.items()
    }
    return {"modules": list(topics), "signatures": signatures, "callees": {q: c for q, c in callees.items() if c}}


def _topics(init: Path) -> tuple[str, ...]:
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["TOPICS"]:
            return tuple(ast.literal_eval(node.value))
    raise LookupError(f"{init}: no TOPICS = (...) naming the topics in teaching order")


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
    _TABLE = {
        "modules": list(contract["modules"]),
        "signatures": dict(signatures),
        "callees": {q: list(c) for q, c in callees.items()},
    }
    _VIEWS.update(
        MODULES=tuple(contract["modules"]),
        SIGNATURES=signatures,
        FUNCTIONS=tuple(signatures),
        DECLARED_CALLEES=callees,
    )


def __getattr__(name: str) -> Any:
    if name in ("MODULES", "SIGNATURES", "FUNCTIONS", "DECLARED_CALLEES"):
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
