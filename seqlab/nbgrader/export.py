"""Notebooks -> a submission folder (``exercises/<topic>.py``): the secure path.

A topic's module is rebuilt from its solution file: the header (docstring, imports) and every
provided chunk come from ``solutions/`` exactly, and each answer chunk is replaced by the
student's answer cell -- found by its nbgrader ``grade_id`` (``<topic>-<name>``), whatever the
notebook is called or where the cell moved. Nothing else a student typed is exported (scratch
cells, outputs), and a missing answer cell leaves its function out (it scores zero).

The hidden test cells grade through this same function (``kernel.hidden_points`` sends the
notebook to the grading server, which exports and grades it), so a notebook graded by nbgrader
and the same notebook exported and graded by ``seqlab grade`` run the same module text.

Rules that match nbgrader's own handling of a submitted notebook:

* a ``grade_id`` that occurs more than once: the *last* cell keeps it (``DeduplicateIds``
  walks the notebook backwards);
* IPython-only lines (``%magic``, ``!shell``) become ``pass`` (a module cannot hold them).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import contract
from ..build import render_stubs
from ..errors import SeqlabError
from ..paths import SOLUTIONS_DIR
from ..studentfiles import StudentFileError, is_plain_dir, links_under, read_bytes, shown
from .handin import id_problem
from .source import TopicSource, load_topics

_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?P<line>[%!].*)$")
EXPORT_NOTE = (
    "# Exported by `seqlab nbgrader export-submission` from {notebook}; only the answer cells are the student's.\n"
)


class ExportError(SeqlabError, ValueError):
    """A notebook that cannot be read as a seqlab notebook."""


def answer_id(topic: str, name: str) -> str:
    return f"{topic}-{name}"


def grade_cell_id(topic: str, name: str) -> str:
    return f"{topic}-{name}-tests"


def _cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _grade_id(cell: dict) -> str | None:
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    grade_id = meta.get("grade_id")
    return grade_id if isinstance(grade_id, str) else None


def answer_cells(notebook: dict) -> dict[str, str]:
    """``{grade_id: source}`` of the code cells with an nbgrader grade_id; the last one wins."""
    found: dict[str, str] = {}
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        grade_id = _grade_id(cell)
        if grade_id:
            found[grade_id] = _cell_source(cell)
    return found


def notebook_topic(notebook: dict) -> str | None:
    """The topic a notebook belongs to: the one most of its cell ids name (the ids are what nbgrader
    checks against the gradebook), else seqlab's notebook metadata."""
    counts: dict[str, int] = {}
    for grade_id in answer_cells(notebook):
        prefix = grade_id.split("-", 1)[0]
        if prefix in contract.MODULES:
            counts[prefix] = counts.get(prefix, 0) + 1
    if counts:
        return max(counts, key=lambda topic: counts[topic])
    topic = ((notebook.get("metadata") or {}).get("seqlab") or {}).get("topic")
    return topic if topic in contract.MODULES else None


def module_code(cell_source: str) -> str:
    """An answer cell as module code: IPython-only lines become ``pass`` at their indentation."""
    lines = []
    for line in cell_source.splitlines():
        match = _MAGIC.match(line)
        if match:
            lines.append(f"{match['indent']}pass  # notebook-only line, not exported: {match['line'][:60]}")
        else:
            lines.append(line)
    return "\n".join(lines).rstrip() + "\n"


@dataclass
class ExportedModule:
    topic: str
    text: str
    answered: list[str] = field(default_factory=list)  # answer chunk names found in the notebook
    missing: list[str] = field(default_factory=list)  # answer chunk names with no cell

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


def export_topic(source: TopicSource, notebook: dict, notebook_name: str = "the notebook") -> ExportedModule:
    cells = answer_cells(notebook)
    parts = [EXPORT_NOTE.format(notebook=notebook_name), source.header.rstrip("\n") + "\n"]
    answered, missing = [], []
    for chunk in source.chunks:
        if chunk.answer:
            grade_id = answer_id(source.topic, chunk.name)
            if grade_id not in cells:
                missing.append(chunk.name)
                parts.append(f"# --- cell {grade_id}: missing from the notebook ---\n")
                continue
            answered.append(chunk.name)
            parts.append(f"# --- cell {grade_id} ---\n" + module_code(cells[grade_id]))
        else:
            parts.append(chunk.source)
    return ExportedModule(source.topic, "\n\n".join(parts), answered, missing)


# A notebook is read whole into memory and parsed: this bounds what one file may cost. A
# notebook's own text is some kilobytes; its outputs (plots as base64 PNG) a few megabytes.
MAX_NOTEBOOK_BYTES = 32 * 1024 * 1024
# nbformat nests about six deep (cells, metadata, nbgrader, ...; an output's JSON data a few
# more). Deeper JSON is no notebook, and a recursive reader (nbformat, nbgrader's writer) would
# stop on it with a RecursionError.
MAX_NOTEBOOK_DEPTH = 64
# An answer cell holds a function or two; a module this large is no answer (the reference's
# longest cell is a few kilobytes).
MAX_ANSWER_CHARS = 1024 * 1024


def _json_kind(value) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def _check_tree(data, path) -> None:
    """Depth and text of every value, without recursion: deeper than MAX_NOTEBOOK_DEPTH, or a
    string that is not valid Unicode (a lone surrogate written as ``\\ud800``, which no UTF-8
    file can hold), is refused."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_NOTEBOOK_DEPTH:
            raise ExportError(f"{path}: not a notebook (JSON nested more than {MAX_NOTEBOOK_DEPTH} deep)")
        if isinstance(value, dict):
            for key, item in value.items():
                _check_text(key, path)
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            _check_text(value, path)


def _check_text(text: str, path) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ExportError(f"{path}: holds text that is not valid Unicode (a lone surrogate)") from None


def check_notebook_shape(data, path) -> dict:
    """``data`` when it has the shape every reader of a notebook here relies on, else
    ``ExportError`` naming the first thing wrong (and the cell, counted from 1)."""
    if not isinstance(data, dict):
        raise ExportError(f"{path}: not a notebook (a JSON {_json_kind(data)}, not an object)")
    _check_tree(data, path)
    if not isinstance(data.get("cells"), list):
        raise ExportError(f"{path}: not a notebook (no cells)")
    for key in ("metadata",):
        if key in data and not isinstance(data[key], dict):
            raise ExportError(f"{path}: not a notebook (its {key} is a JSON {_json_kind(data[key])})")
    seqlab_meta = (data.get("metadata") or {}).get("seqlab")
    if seqlab_meta is not None and not isinstance(seqlab_meta, dict):
        raise ExportError(f"{path}: not a notebook (metadata.seqlab is a JSON {_json_kind(seqlab_meta)})")
    for number, cell in enumerate(data["cells"], start=1):
        where = f"{path}: cell {number}"
        if not isinstance(cell, dict):
            raise ExportError(f"{where} is a JSON {_json_kind(cell)}, not a cell")
        if not isinstance(cell.get("cell_type"), str):
            raise ExportError(f"{where} has no cell_type")
        source = cell.get("source", "")
        if not (isinstance(source, str) or (isinstance(source, list) and all(isinstance(s, str) for s in source))):
            raise ExportError(f"{where}: its source is neither text nor a list of lines")
        metadata = cell.get("metadata", {})
        if not isinstance(metadata, dict):
            raise ExportError(f"{where}: its metadata is a JSON {_json_kind(metadata)}")
        nb_meta = metadata.get("nbgrader", {})
        if nb_meta is not None and not isinstance(nb_meta, dict):
            raise ExportError(f"{where}: its nbgrader metadata is a JSON {_json_kind(nb_meta)}")
        answer = cell["cell_type"] == "code" and (nb_meta or {}).get("grade_id") is not None
        if answer and sum(map(len, source)) > MAX_ANSWER_CHARS:
            raise ExportError(f"{where}: more than {MAX_ANSWER_CHARS} characters in one answer cell")
    return data


def read_notebook(path: Path) -> dict:
    """A notebook file as a dict of the checked shape (``check_notebook_shape``), or ``ExportError``
    naming the file and the problem: never through a symbolic link, at most MAX_NOTEBOOK_BYTES,
    strict UTF-8 JSON no deeper than MAX_NOTEBOOK_DEPTH."""
    raw = read_bytes(Path(path), MAX_NOTEBOOK_BYTES, ExportError)
    name = shown(str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExportError(f"{name}: not a readable notebook (not UTF-8 text: byte {exc.start})") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise ExportError(f"{name}: not a notebook (JSON nested too deep to read)") from None
    except ValueError as exc:
        raise ExportError(f"{name}: not a readable notebook ({exc})") from None
    return check_notebook_shape(data, name)


def find_notebooks(paths) -> list[Path]:
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts))
        elif path.suffix == ".ipynb":
            found.append(path)
        else:
            raise ExportError(f"{path}: not a notebook or a folder of notebooks")
    return found


@dataclass
class ExportReport:
    out: Path
    modules: dict[str, ExportedModule]
    notebooks: dict[str, str]  # topic -> notebook path
    stubbed: list[str]  # topics with no notebook: written as stubs
    warnings: list[str]
    error: str = ""  # why nothing was exported (export_course_submissions: one student's, named)


def export_submission(notebooks, out: Path, *, solutions_dir: Path = SOLUTIONS_DIR) -> ExportReport:
    """Write ``out/exercises/<topic>.py`` for every topic.

    A topic with a notebook gets its exported module; a topic without one gets the plain stub
    (every function raises NotImplementedError), so the folder is always a whole submission and
    a topic imported by another (``from .attention import ...``) is always there; the grader
    substitutes correct callees for it during graded calls.
    """
    out = Path(out)
    topics = {t.topic: t for t in load_topics(solutions_dir)}
    chosen: dict[str, tuple[Path, dict]] = {}
    warnings: list[str] = []
    for path in find_notebooks(notebooks):
        notebook = read_notebook(path)
        topic = notebook_topic(notebook)
        if topic is None:
            warnings.append(f"{path}: no seqlab answer cells in it; skipped")
            continue
        if topic in chosen:
            warnings.append(f"{path}: a second notebook for {topic} (kept {chosen[topic][0]}); skipped")
            continue
        chosen[topic] = (path, notebook)
    exercises = out / "exercises"
    exercises.mkdir(parents=True, exist_ok=True)
    (exercises / "__init__.py").write_text("", encoding="utf-8")
    modules: dict[str, ExportedModule] = {}
    stubs = {stub.name: stub.text for stub in render_stubs(solutions_dir)}
    stubbed = []
    for topic in contract.MODULES:
        if topic in chosen:
            path, notebook = chosen[topic]
            module = export_topic(topics[topic], notebook, path.name)
            modules[topic] = module
            (exercises / f"{topic}.py").write_text(module.text, encoding="utf-8")
            if module.missing:
                warnings.append(f"{path}: no answer cell for {', '.join(module.missing)} (scores zero)")
        else:
            stubbed.append(topic)
            (exercises / f"{topic}.py").write_text(stubs[f"{topic}.py"], encoding="utf-8")
    return ExportReport(out, modules, {t: str(p) for t, (p, _) in chosen.items()}, stubbed, warnings)


def export_course_submissions(
    course_dir: Path, out: Path, *, students=None, solutions_dir: Path = SOLUTIONS_DIR
) -> dict[str, ExportReport]:
    """Every student's ``submitted/<student>/*/*.ipynb`` -> ``out/<student>/exercises/``."""
    submitted = Path(course_dir) / "submitted"
    if not submitted.is_dir():
        raise ExportError(f"{course_dir}: no submitted/ folder (run `nbgrader collect` first)")
    reports = {}
    for student_dir in sorted(submitted.iterdir()):
        student = student_dir.name
        if students and student not in students:
            continue
        if student.startswith(".") or not (student_dir.is_symlink() or is_plain_dir(student_dir)):
            continue
        # One student's folder costs only that student: a link, an id seqlab cannot carry or a
        # notebook that is no notebook is their report's error, and the others are exported.
        target = Path(out) / student
        try:
            problem = id_problem(student)
            if problem:
                raise ExportError(f"student id {shown(student)} cannot be exported: {problem}")
            links = links_under(student_dir)
            if links:
                raise ExportError(
                    f"symbolic link(s) {', '.join(map(shown, links))}: a link is never followed or exported"
                )
            reports[student] = export_submission([student_dir], target, solutions_dir=solutions_dir)
        except (ExportError, StudentFileError) as exc:
            reports[student] = ExportReport(target, {}, {}, [], [], error=str(exc))
    return reports
