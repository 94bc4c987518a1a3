"""Every honest source the repository holds, as ``(label, module, text)``: what the review flags
are measured on (``tests/grading/test_review_flags.py``). Reading them costs no grading.

* the eight honest styles of ``tests/student/honest_submissions`` (the honest class, issue
  "One world", and the base of every blind bank);
* ``solutions/`` (markers stripped, as the example submission hands them in) and the stubs of
  ``exercises/``;
* the example submission: the references with ``examples/demo_bugs.py`` swapped in (``seqlab demo``);
* the honest idioms (``tests/student/honest_idioms.py``), each put where a student writes it;
* the unseen-mistake banks (``tests/heldout/unseen*``): wrong but honest functions;
* the four blind lab-mistake banks (``tests/labs/blind_slips*/bank.yaml``), each applied to its base.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import yaml

from seqlab import contract

ROOT = Path(__file__).resolve().parents[2]
HONEST = ROOT / "tests" / "student" / "honest_submissions"


def _styles() -> Iterator[tuple[str, str, str]]:
    for style in sorted(p for p in HONEST.iterdir() if (p / "exercises").is_dir()):
        for path in sorted((style / "exercises").glob("*.py")):
            yield f"honest/{style.name}/{path.name}", path.stem, path.read_text(encoding="utf-8")


def _course() -> Iterator[tuple[str, str, str]]:
    from seqlab.demo import load_bugs
    from tests.student.test_honest_idioms import reference

    for module in contract.MODULES:
        yield f"solutions/{module}.py", module, reference(module)
        yield f"exercises/{module}.py", module, (ROOT / "exercises" / f"{module}.py").read_text(encoding="utf-8")
    for function, _what, _word, source in load_bugs():
        module = function.split(".")[0]
        yield f"demo/{function}", module, reference(module) + "\n" + source


def _idioms() -> Iterator[tuple[str, str, str]]:
    from tests.student.honest_idioms import IDIOMS
    from tests.student.test_honest_idioms import insert, reference

    for idiom in IDIOMS:
        yield f"idiom/{idiom['name']}", idiom["module"], insert(reference(idiom["module"]), idiom)


def _unseen() -> Iterator[tuple[str, str, str]]:
    for path in sorted((ROOT / "tests" / "heldout").glob("unseen*/*.py")):
        module = path.name.split("_")[1]
        yield f"heldout/{path.parent.name}/{path.name}", module, path.read_text(encoding="utf-8")


def _lab_slips() -> Iterator[tuple[str, str, str]]:
    for bank in sorted((ROOT / "tests" / "labs").glob("blind_slips*/bank.yaml")):
        for entry in yaml.safe_load(bank.read_text(encoding="utf-8")):
            base = (HONEST / entry["base"] / "exercises" / entry["module"]).read_text(encoding="utf-8")
            text = base.replace(entry["old"], entry["new"] or "", 1)
            yield f"{bank.parent.name}/{entry['id']}", entry["module"][:-3], text


def honest_sources() -> list[tuple[str, str, str]]:
    return [*_styles(), *_course(), *_idioms(), *_unseen(), *_lab_slips()]
