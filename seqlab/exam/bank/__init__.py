"""The question bank: the course's questions, loaded from ``exams/questions/`` beside the exams.

Each question is one declaration (``declare``: its sampler, text, key, named mistakes, validity
and degenerate draws) in the module of its topic, ``exams/questions/<topic>.py`` or a module of
the folder ``exams/questions/<topic>/`` (a topic split into several files, loaded through its
``__init__.py``). The modules import the bank's vocabulary by absolute name, ``declare`` for the
facts and ``helpers`` for drawing parameters and calling the references, and register their
questions when imported. They live in the course, not in this package: a course keeps its own
questions, and the Gradescope bundle and the student release never carry them (one folder of
the course, ``exams/``, that neither ships).

``load_bank()`` imports the topics once, in the order ``exams/questions/topics.yaml`` lists them
(the registry's order: ``docs/coverage.md`` and the bank preview list questions in it; a topic
not listed comes after them, in name order), then loads the concept questions (multiple choice
and true/false) from ``exams/concepts.yaml``. The folder is the course root's, not an exam
file's: every exam of the course (the final, a quiz, a test's exam written to a temporary folder)
draws from the one bank, and ``load_bank`` runs without an exam file (coverage, the bank lint).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import yaml

from ...paths import COURSE_ROOT
from ..errors import QuestionError
from .declare import BANK_PREFIXES, MODULE_PREFIX

QUESTIONS_DIR = COURSE_ROOT / "exams" / "questions"
ORDER_FILE = "topics.yaml"

_loaded = False


def topics(folder: Path) -> list[str]:
    """The folder's topics in load order: ``topics.yaml``'s list first, then the rest by name."""
    if not folder.is_dir():
        raise QuestionError(f"{folder}: no such folder; the course's exam questions live there (docs/exams.md)")
    found = sorted(
        p.stem if p.is_file() else p.name
        for p in folder.iterdir()
        if not p.name.startswith(("_", "."))
        and ((p.is_file() and p.suffix == ".py") or (p.is_dir() and (p / "__init__.py").is_file()))
    )
    order_path = folder / ORDER_FILE
    listed = yaml.safe_load(order_path.read_text(encoding="utf-8")) if order_path.is_file() else []
    if not isinstance(listed, list) or not all(isinstance(t, str) for t in listed):
        raise QuestionError(f"{order_path}: a list of topic names")
    missing = [t for t in listed if t not in found]
    if missing:
        raise QuestionError(f"{order_path}: no module or folder for topic(s) {', '.join(missing)} in {folder}")
    return list(listed) + [t for t in found if t not in listed]


def _import(name: str, path: Path) -> ModuleType:
    package = path.is_dir()
    location = path / "__init__.py" if package else path
    spec = importlib.util.spec_from_file_location(
        name, location, submodule_search_locations=[str(path)] if package else None
    )
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a spec
        raise QuestionError(f"{location}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before it runs: its own modules import each other through it
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load_questions(folder: Path, prefix: str = MODULE_PREFIX) -> list[ModuleType]:
    """Import every topic module of ``folder`` (``topics``) as ``<prefix>.<topic>``: each registers
    its questions. A topic imported already under that name is not imported again."""
    BANK_PREFIXES.add(prefix)
    if prefix not in sys.modules:  # the parent of the topics' names: a namespace, no code
        parent = ModuleType(prefix)
        parent.__path__ = [str(folder)]
        sys.modules[prefix] = parent
    modules = []
    for topic in topics(folder):
        name = f"{prefix}.{topic}"
        path = folder / topic if (folder / topic).is_dir() else folder / f"{topic}.py"
        modules.append(sys.modules.get(name) or _import(name, path))
    return modules


def load_bank() -> None:
    global _loaded
    if _loaded:
        return
    load_questions(QUESTIONS_DIR)
    importlib.import_module(f"{__name__}.concepts")
    _loaded = True


def question_module(name: str) -> ModuleType:
    """A module of the course's bank by its name under ``exams/questions/`` (``"rnn.generation"``),
    loaded with the bank: for tests that check a question's helpers."""
    load_bank()
    full = f"{MODULE_PREFIX}.{name}"
    if full not in sys.modules:
        importlib.import_module(full)
    return sys.modules[full]
