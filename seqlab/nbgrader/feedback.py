"""The text a test cell shows for one function's hidden tests, and the points it is worth.

``seqlab nbgrader autograde`` writes this into the autograded notebook's test cell. It follows,
line for line, what ``kernel.hidden_points`` prints in a kernel (the round-trip test compares the
two), so a student's feedback reads the same whichever way the course was graded.
No nbgrader or torch import here: this module is safe to import anywhere.
"""

from __future__ import annotations

# What one test's feedback may take in a notebook: enough for the case, the error and the worst
# index the graders report; a flood of output from a failing test would bury the other tests.
OUTPUT_CHARS = 500
HINT_CHARS = 300
ERROR_CHARS = 600


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _field(test, name: str):
    return test[name] if isinstance(test, dict) else getattr(test, name)


def function_feedback(qualname: str, functions: dict, tests, *, errors=(), missing=()) -> tuple[str, float]:
    """``(text, points)`` for ``qualname`` ("topic.function").

    ``functions``: ``{qualname: (score, max_score)}`` (``GradingResult.by_function()``);
    ``tests``: the graded tests (``TestResult`` or dicts with name, score, max_score, output, hint);
    ``errors``: problems outside any one test (an import error of the module, ...);
    ``missing``: function names whose answer cell was not in the notebook.
    Raises KeyError when the grading has no tests for ``qualname``.
    """
    function = qualname.split(".", 1)[1]
    lines = []
    if function in missing:
        lines.append(f"{function}: its answer cell is missing from the notebook; 0 points")
    lines += [f"problem: {error[:ERROR_CHARS]}" for error in errors]
    score, max_score = functions[qualname]
    own = [t for t in tests if _field(t, "name").split(":", 1)[0].strip() == qualname]
    failed = [t for t in own if _field(t, "score") < _field(t, "max_score") - 1e-9]
    lines.append(
        f"{function}: {_fmt(score)} of {_fmt(max_score)} points from the hidden tests "
        f"({len(own) - len(failed)} of {len(own)} tests passed)"
    )
    said, hinted = set(), set()
    for t in failed:
        output = _field(t, "output")
        if output in said:  # e.g. "not implemented yet", once
            continue
        said.add(output)
        title = _field(t, "name").split(":", 1)[-1].strip()
        lines.append(
            f"  - {title} ({_fmt(_field(t, 'score'))}/{_fmt(_field(t, 'max_score'))}): {output[:OUTPUT_CHARS]}"
        )
        if _field(t, "hint") and _field(t, "hint") not in hinted:  # each hint once per function
            hinted.add(_field(t, "hint"))
            lines.append(f"    hint: {_field(t, 'hint')[:HINT_CHARS]}")
    return "\n".join(lines) + "\n", round(float(score), 6)
