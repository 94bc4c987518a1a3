"""The example submission `seqlab demo` grades: the reference solutions, as a student would
hand them in, with the bugs of ``examples/demo_bugs.py`` swapped in. Assembled on the fly, so
it always matches the course."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from . import contract
from .build import replace_function
from .paths import EXAMPLES_DIR, SOLUTIONS_DIR
from .regions import strip_markers


def load_bugs(path: Path = EXAMPLES_DIR / "demo_bugs.py") -> list[tuple[str, str, str, str]]:
    spec = importlib.util.spec_from_file_location("_seqlab_demo_bugs", path)
    assert spec is not None and spec.loader is not None  # a .py path always has a source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.BUGS)


def assemble(target: Path) -> Path:
    """Write the example submission to ``target`` (a folder holding ``exercises/``)."""
    exercises = Path(target) / "exercises"
    shutil.rmtree(exercises, ignore_errors=True)
    exercises.mkdir(parents=True)
    sources = {p.name: strip_markers(p.read_text(encoding="utf-8")) for p in sorted(SOLUTIONS_DIR.glob("*.py"))}
    for function, _, _, source in load_bugs():
        module, name = contract.split(function)
        sources[f"{module}.py"] = replace_function(sources[f"{module}.py"], name, source)
    for name, text in sources.items():
        (exercises / name).write_text(text, encoding="utf-8")
    return Path(target)
