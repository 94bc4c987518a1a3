"""The language subset against the honest-idioms corpus: a rule must never take points from
honest work. Each idiom is put into the reference solution's module where a student would write
it (after the imports, or at the start of a function), and the module must then pass the subset's
check and grade exactly as it does without it."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from seqlab import contract
from seqlab.grading import grade_submission, grading_settings
from seqlab.regions import strip_markers
from seqlab.subset import check
from tests.student.honest_idioms import IDIOMS

ROOT = Path(__file__).resolve().parents[2]
SIBLINGS = frozenset(contract.MODULES)
# Honest-looking idioms the subset refuses by decision, and why (each is shown to the student with
# what to write instead):
REFUSED_BY_DECISION = {
    # getattr(torch, name) can fetch any kernel, a forbidden one included, by a name built at run
    # time: the forbidden-operation check could no longer see what a function calls.
    "getattr-dynamic-activation": "getattr used other than as getattr(obj, 'name')",
    # sys.path reaches the interpreter's import machinery; own modules import with `from .x`.
    "sys-path-insert-fallback": "sys.path",
    # unittest's loader imports modules by string and calls what they name; a self-test class
    # goes under `if __name__ == "__main__":`, where the subset never holds an import against it.
    "main-unittest": "the module 'unittest' is not in the subset",
}


def insert(source: str, idiom: dict) -> str:
    """``source`` with the idiom where a student would write it."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    code = idiom["code"]
    if idiom["where"] == "prelude":
        future = [ln + "\n" for ln in code.splitlines() if ln.startswith("from __future__")]
        rest = "".join(ln + "\n" for ln in code.splitlines() if not ln.startswith("from __future__"))
        imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        after = max(n.end_lineno for n in imports)
        first_future = next(
            (n.lineno - 1 for n in imports if isinstance(n, ast.ImportFrom) and n.module == "__future__"), 0
        )
        new = lines[:after] + ["\n", rest, "\n"] + lines[after:]
        return "".join(new[:first_future] + future + new[first_future:])
    function = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == idiom["target"].split(".")[1])
    first = function.body[1] if ast.get_docstring(function) and len(function.body) > 1 else function.body[0]
    indented = textwrap.indent(code, " " * first.col_offset)
    return "".join(lines[: first.lineno - 1] + [indented] + lines[first.lineno - 1 :])


def reference(module: str) -> str:
    return strip_markers((ROOT / "solutions" / f"{module}.py").read_text())


def test_the_corpus_is_big_and_covers_every_module():
    assert len(IDIOMS) >= 150
    assert {i["module"] for i in IDIOMS} == set(contract.MODULES)
    assert len({i["name"] for i in IDIOMS}) == len(IDIOMS)


@pytest.mark.parametrize("idiom", IDIOMS, ids=lambda i: i["name"])
def test_an_honest_idiom_passes_the_subset(idiom):
    verdict = check(insert(reference(idiom["module"]), idiom), f"exercises/{idiom['module']}.py", SIBLINGS)
    problems = [p.render(f"exercises/{idiom['module']}.py") for p in verdict.problems]
    if idiom["name"] in REFUSED_BY_DECISION:
        assert any(REFUSED_BY_DECISION[idiom["name"]] in p for p in problems), problems
        assert all("(" in p for p in problems), "a refusal says what to write instead"
    else:
        assert not problems, problems


@pytest.mark.slow
@pytest.mark.parametrize("module", contract.MODULES)
def test_a_module_full_of_honest_idioms_grades_as_without_them(tmp_path, module):
    """All of a module's idioms at once (the refused-by-decision ones left out), graded in the
    subset: every function keeps full marks."""
    source = reference(module)
    for idiom in IDIOMS:
        if idiom["module"] == module and idiom["name"] not in REFUSED_BY_DECISION:
            source = insert(source, idiom)
    submission = tmp_path / "s"
    (submission / "exercises").mkdir(parents=True)
    for other in contract.MODULES:
        (submission / "exercises" / f"{other}.py").write_text(source if other == module else reference(other))
    result = grade_submission(submission, grading_settings(isolated=False, seed=3, only=module))
    lost = {f: s for f, s in result.by_function().items() if s[0] != s[1]}
    assert not lost and not result.errors, (lost, result.errors[:3])


STYLES = sorted(p.name for p in (ROOT / "tests" / "student" / "honest_submissions").iterdir())


@pytest.mark.slow
@pytest.mark.bank  # six full gradings: make test-banks
@pytest.mark.parametrize("style", STYLES)
def test_an_honest_submission_in_any_style_scores_full_marks(style):
    """Six complete, correct submissions written blind from the release in six styles (terse,
        verbose with debug prints and logging, helper classes, fully typed, functional, numpy-minded
        with imports between its own modules), graded in the subset (in-process: the sandbox around it
    changes no honest grade, and the attack banks test it)."""
    result = grade_submission(
        ROOT / "tests" / "student" / "honest_submissions" / style, grading_settings(seed=11, isolated=False)
    )
    lost = [t for t in result.tests if t.score < t.max_score]
    assert not lost, [(t.name, t.output[:300]) for t in lost]
    assert not result.errors, result.errors
