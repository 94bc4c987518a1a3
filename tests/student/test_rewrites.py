"""The rewrite bank (issue "One world"): every honest submission of the bank, rewritten module by
module in ways that change how it is written and never what it computes (``rewrites.py``), grades
exactly as the original does, test by test. A rule, guard or transformer that treats one of
these styles differently (a match statement, a module-level tensor, a helper class) costs a point
here before it costs a student one.

Graded in-process with the labs off (the subset and the guards are the same as in the child; the
sandbox around the child changes no honest grade, and the labs' own honest bank is
``test_honest_idioms.py``'s full gradings). Each rewrite grades only its own module.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest

from seqlab.grading import grade_submission, grading_settings
from tests.student.rewrites import REWRITES

ROOT = Path(__file__).resolve().parents[2]
HONEST = ROOT / "tests" / "student" / "honest_submissions"
SEED = 11


def _cases() -> list[tuple[str, str, str]]:
    cases = []
    for style in sorted(p.name for p in HONEST.iterdir() if p.is_dir()):
        for path in sorted((HONEST / style / "exercises").glob("*.py")):
            if path.name == "__init__.py":
                continue
            text = path.read_text(encoding="utf-8")
            cases += [(style, path.stem, name) for name, rewrite in REWRITES.items() if rewrite(text) is not None]
    return cases


CASES = _cases()


def _grade(folder: Path, module: str) -> dict[str, float]:
    result = grade_submission(folder, grading_settings(seed=SEED, isolated=False, only=f"{module}.*", labs=False))
    assert not result.errors, result.errors
    return {t.name: t.score for t in result.tests}


@functools.cache
def _original(style: str, module: str) -> tuple[tuple[str, float], ...]:
    return tuple(sorted(_grade(HONEST / style, module).items()))


def test_the_bank_holds_at_least_200_rewrites_of_at_least_6_submissions():
    assert len(CASES) >= 200, len(CASES)
    assert len({style for style, _, _ in CASES}) >= 6
    assert {name for _, _, name in CASES} == set(REWRITES), "every rewrite applies somewhere"


@pytest.mark.bank
@pytest.mark.slow
@pytest.mark.parametrize(("style", "module", "rewrite"), CASES, ids=["-".join(c) for c in CASES])
def test_a_rewritten_honest_module_grades_as_the_original(tmp_path, style, module, rewrite):
    folder = tmp_path / style
    shutil.copytree(HONEST / style, folder)
    target = folder / "exercises" / f"{module}.py"
    text = REWRITES[rewrite](target.read_text(encoding="utf-8"))
    assert text is not None
    target.write_text(text, encoding="utf-8")
    original = dict(_original(style, module))
    rewritten = _grade(folder, module)
    assert rewritten == original, {
        t: (original.get(t), rewritten.get(t)) for t in original if original[t] != rewritten.get(t)
    }
