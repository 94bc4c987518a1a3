"""Turn reference solutions into student stubs: ``seqlab build`` writes ``exercises/``.

The rule itself (which lines are cleared, the stub lines, the header) lives in
:mod:`seqlab.regions`, shared with the release and the nbgrader notebooks; this module only
decides which files to write. Signatures, docstrings and everything outside the regions are
copied as they are, so one source serves the stubs, the notebooks and the graders.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

from .regions import stub_module


@dataclass(frozen=True)
class StubFile:
    name: str
    text: str


def render_stubs(solutions_dir: Path) -> list[StubFile]:
    stubs = []
    for path in sorted(Path(solutions_dir).glob("*.py")):
        source = path.read_text(encoding="utf-8")
        stubs.append(StubFile(path.name, stub_module(source, path.stem, filename=str(path))))
    return stubs


def stale_files(solutions_dir: Path, exercises_dir: Path) -> list[str]:
    """Names of exercise files that differ from what ``build`` would write (or are extra)."""
    expected = {stub.name: stub.text for stub in render_stubs(solutions_dir)}
    stale = [
        name
        for name, text in expected.items()
        if not (exercises_dir / name).is_file() or (exercises_dir / name).read_text(encoding="utf-8") != text
    ]
    stale += sorted(p.name for p in Path(exercises_dir).glob("*.py") if p.name not in expected)
    return sorted(stale)


def build(solutions_dir: Path, exercises_dir: Path) -> list[str]:
    """Write the stubs; returns the names of files that changed."""
    exercises_dir.mkdir(parents=True, exist_ok=True)
    changed = stale_files(solutions_dir, exercises_dir)
    expected = {stub.name: stub.text for stub in render_stubs(solutions_dir)}
    for name in changed:
        target = exercises_dir / name
        if name in expected:
            target.write_text(expected[name], encoding="utf-8")
        else:
            target.unlink()
    return changed


def replace_function(module_source: str, name: str, new_source: str) -> str:
    """``module_source`` with the top-level ``def name`` replaced by ``new_source`` (the whole
    def, decorators included). Used to assemble example and test submissions from the solutions."""
    for node in ast.parse(module_source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
            lines = module_source.splitlines(keepends=True)
            return (
                "".join(lines[:start])
                + textwrap.dedent(new_source).strip("\n")
                + "\n"
                + "".join(lines[node.end_lineno :])
            )
    raise KeyError(f"no top-level function {name}()")
