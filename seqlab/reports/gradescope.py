"""Gradescope's autograder ``results.json``.

Schema (Gradescope autograder specification): top-level ``score``, ``max_score``,
``execution_time``, ``output``, ``visibility``, ``stdout_visibility`` and ``tests[]``, each test
with ``name``, ``score``, ``max_score``, ``status`` ("passed"/"failed"), ``output`` and
``visibility``. ``schemas/gradescope_results.schema.json`` in the repo validates it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..results import GradingResult


def _round(x: float) -> float:
    return round(float(x), 4)


def to_gradescope(result: GradingResult) -> dict[str, Any]:
    header = [f"seqlab: {_round(result.score):g} / {_round(result.max_score):g} points"]
    if result.seed is not None:
        header.append(f"seed {result.seed} (rerun with --seed {result.seed} to reproduce)")
    header.append(f"device {result.device}")
    header += [f"notice: {n}" for n in result.notices]
    header += [f"error: {e}" for e in result.errors]
    tests = []
    for t in result.tests:
        output = t.output
        if t.hint:
            output = f"{output}\nLooks like: {t.hint}" if output else f"Looks like: {t.hint}"
        tests.append(
            {
                "name": t.name,
                "score": _round(t.score),
                "max_score": _round(t.max_score),
                "status": t.status,
                "output": output,
                "visibility": t.visibility,
            }
        )
    return {
        "score": _round(result.score),
        "max_score": _round(result.max_score),
        "execution_time": _round(result.execution_time),
        "output": "\n".join(header),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def write(result: GradingResult, path: Path) -> Path:
    """Write atomically, so a reader never sees half a file (batch grading resumes on it)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(to_gradescope(result), indent=2, ensure_ascii=False), encoding="utf-8", errors="replace")
    os.replace(tmp, path)
    return path
