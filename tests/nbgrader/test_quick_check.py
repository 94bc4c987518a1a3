"""A notebook's test cell applies the language subset to the answer cell, in the grader's words."""

from __future__ import annotations

import linecache
import sys

import pytest

from seqlab.nbgrader import kernel


def _define_in_a_cell(monkeypatch, cell: str, name: str):
    """Run ``cell`` as a notebook kernel would: its text in linecache under the cell's filename."""
    filename = f"<cell-{name}>"
    linecache.cache[filename] = (len(cell), None, cell.splitlines(keepends=True), filename)
    namespace: dict = {}
    exec(compile(cell, filename, "exec"), namespace)
    monkeypatch.setattr(sys.modules["__main__"], name, namespace[name], raising=False)


def test_a_cell_that_breaks_a_rule_fails_its_quick_check(monkeypatch):
    _define_in_a_cell(monkeypatch, "def peek(x):\n    return x.__globals__\n", "peek")
    problems = kernel.subset_problems("peek")
    assert problems == [
        "your answer cell, line 2: the dunder attribute '__globals__' (use the public API: type(x), isinstance, x.__name__)"
    ]
    with pytest.raises(AssertionError, match="breaks the language subset"), kernel.quick_check("peek"):
        pass


def test_an_honest_cell_passes(monkeypatch, capsys):
    _define_in_a_cell(
        monkeypatch, "import sys\n\ndef fine(x):\n    print(type(x).__name__, file=sys.stderr)\n    return x\n", "fine"
    )
    assert kernel.subset_problems("fine") == []
    with kernel.quick_check("fine"):
        pass
    assert "fine: quick check passed" in capsys.readouterr().out
