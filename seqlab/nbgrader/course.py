"""Write a complete nbgrader course from solutions/, the notebook templates and grading_config.yaml.

``COURSE_DIR/nbgrader_config.py``            course id, kernel start-up, timeouts, the nbgrader
                                             settings the traps need (see docs/nbgrader.md)
``COURSE_DIR/source/<topic>/<topic>.ipynb``  one assignment per topic, in contract order
``COURSE_DIR/source/<topic>/<shipped files>``  what the notebook imports in a student's kernel, which
                                             has no seqlab (``SHIPPED``): nbgrader's
                                             ``generate_assignment`` releases them with it

Each notebook (nbformat 4, nbgrader cell metadata schema 3):

1. the topic's introduction (markdown, read-only), rendered from ``templates/notebooks/``;
2. the setup cell (read-only): the solution module's imports;
3. per function: its prose (read-only markdown), an autograded answer cell holding the solution's
   ``def`` with its ``### BEGIN/END SOLUTION`` region (nbgrader's ``generate_assignment`` turns
   the region into the stub, exactly like ``seqlab build``), and a locked test cell worth the
   function's points: a visible quick check and a hidden part returning the hidden graders'
   points (``kernel.hidden_points``);
4. helper code without a region, as read-only cells (students get it as it is).

Cell ids and grade ids are derived from topic and function names, so rebuilding gives the same
notebooks (and the same ids nbgrader's gradebook already knows).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import contract
from ..config import GradingConfig, load_config
from ..defaults import SUBMISSION_TIMEOUT_S, TORCH_CPU_INDEX, TORCH_VERSION
from ..errors import SeqlabError
from ..paths import SOLUTIONS_DIR, TEMPLATES_DIR
from .docstring import function_doc, signature_of
from .export import answer_id, grade_cell_id
from .source import PROVIDED_MODULE, Chunk, TopicSource, load_topics

SCHEMA_VERSION = 3
NBFORMAT_MINOR = 5
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
DEFAULT_TIMEOUT_S = SUBMISSION_TIMEOUT_S  # a hidden-test cell grades a whole topic
SEED_FILE = ".seqlab-nbgrader.json"
_HERE = Path(__file__).resolve().parent
# Files shipped beside a notebook, by the name its cells import them under: the stand-ins of
# other topics' functions (setup cell) and the lab's helpers. Both import only the standard
# library, torch and matplotlib (tests/nbgrader/test_release_kernel.py holds them to it).
SHIPPED = {f"{PROVIDED_MODULE}.py": _HERE / "provided.py", "seqlab_lab.py": _HERE / "labkit.py"}
LAB_DATA_FILE = "seqlab_lab_data.pt"  # labkit.DATA_FILE
# The student's kernel: what the notebooks import, and ipykernel to run them in Jupyter.
REQUIREMENTS = f"""\
# What this course's notebooks need in your Jupyter kernel (seqlab itself is not needed).
# Install PyTorch's CPU build first (pip install torch=={TORCH_VERSION} --index-url
# {TORCH_CPU_INDEX}), or pip may pick a much larger CUDA build.
torch>=2.1
numpy>=1.24
matplotlib>=3.7
ipykernel>=6.20
"""


class CourseError(SeqlabError, ValueError):
    """The course could not be written (a missing template, a bad solution file, ...)."""


def environment():
    from .. import templating

    return templating.environment(TEMPLATES_DIR, autoescape=False)


def _meta(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
    nb = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": SCHEMA_VERSION,
        "solution": solution,
        "task": False,
    }
    if grade:
        nb["points"] = points
    meta: dict[str, Any] = {"nbgrader": nb}
    if locked:
        meta.update(deletable=False, editable=False)
    return meta


def _markdown(grade_id: str, text: str):
    import nbformat

    cell = nbformat.v4.new_markdown_cell(text.strip() + "\n", metadata=_meta(grade_id, locked=True))
    cell["id"] = grade_id
    return cell


def _code(grade_id: str, source: str, **meta):
    import nbformat

    cell = nbformat.v4.new_code_cell(source.rstrip() + "\n", metadata=_meta(grade_id, **meta))
    cell["id"] = grade_id
    return cell


@dataclass
class TopicTemplates:
    """The macros of ``templates/notebooks/<topic>.md.j2``: intro, idea_<f>, conventions_<f>, check_<f>."""

    topic: str
    module: object

    def macro(self, name: str, required: bool = True) -> str:
        fn = getattr(self.module, name, None)
        if fn is None:
            if required:
                raise CourseError(
                    f"templates/notebooks/{self.topic}.md.j2: no macro {name}() "
                    f"(every topic needs intro(), and idea_<f>() and check_<f>() per function)"
                )
            return ""
        return str(fn()).strip()


def topic_templates(env, topic: str) -> TopicTemplates:
    import jinja2

    try:
        template = env.get_template(f"notebooks/{topic}.md.j2")
    except jinja2.TemplateNotFound:
        raise CourseError(f"templates/notebooks/{topic}.md.j2 is missing") from None
    return TopicTemplates(topic, template.module)


def _indent(code: str, spaces: int = 4) -> str:
    return "\n".join((" " * spaces + line) if line.strip() else "" for line in code.strip("\n").splitlines())


def build_notebook(source: TopicSource, config: GradingConfig, *, env, number: int, total: int):
    import nbformat

    tmpl = topic_templates(env, source.topic)
    topic = source.topic
    functions = source.functions
    nb_name = f"{topic}.ipynb"
    qualnames = [c.qualname for c in functions if c.qualname]  # every one: functions are the named chunks
    points = {q: config.rules(q).points for q in qualnames}
    cells = []
    view = dict(
        topic=topic,
        number=number,
        total=total,
        title=tmpl.macro("title"),
        intro=tmpl.macro("intro"),
        functions=[{"name": c.name, "qualname": q, "points": points[q]} for c, q in zip(functions, qualnames)],
        total_points=sum(points.values()),
        provided=source.cross_topic_imports(),
        notebook=nb_name,
    )
    cells.append(_markdown(f"{topic}-intro", env.get_template("notebooks/_intro.md.j2").render(**view)))
    cells.append(
        _code(
            f"{topic}-setup",
            env.get_template("notebooks/_setup.py.j2").render(imports=source.notebook_setup(), **view),
            locked=True,
        )
    )
    index = 0
    for chunk in source.chunks:
        if chunk.qualname:
            index += 1
            cells.extend(_function_cells(chunk, source, tmpl, env, view, index, points[chunk.qualname]))
        elif chunk.answer:
            cells.append(_code(answer_id(topic, chunk.name), chunk.source, solution=True))
        else:
            cells.append(_code(f"{topic}-{chunk.name}-provided", chunk.source, locked=True))
    cells.extend(_lab_cells(tmpl, topic))
    cells.append(_markdown(f"{topic}-end", env.get_template("notebooks/_end.md.j2").render(**view)))
    notebook = nbformat.v4.new_notebook(
        cells=cells,
        metadata={
            "kernelspec": dict(KERNELSPEC),
            "language_info": {"name": "python"},
            "seqlab": {"topic": topic, "functions": [c.qualname for c in functions]},
        },
    )
    notebook["nbformat_minor"] = NBFORMAT_MINOR
    nbformat.validate(notebook)
    return notebook


def _function_cells(
    chunk: Chunk, source: TopicSource, tmpl: TopicTemplates, env, view: dict, index: int, points: float
) -> list:
    topic, name = source.topic, chunk.name
    doc = function_doc(chunk.source)
    prose = env.get_template("notebooks/_function.md.j2").render(
        **view,
        index=index,
        name=name,
        qualname=chunk.qualname,
        points=points,
        doc=doc,
        signature=signature_of(chunk.source),
        idea=tmpl.macro(f"idea_{name}"),
        conventions=tmpl.macro(f"conventions_{name}", required=False),
    )
    check = tmpl.macro(f"check_{name}")
    tests = env.get_template("notebooks/_tests.py.j2").render(
        **view, name=name, qualname=chunk.qualname, points=points, check=_indent(check)
    )
    return [
        _markdown(f"{topic}-{name}-text", prose),
        _code(answer_id(topic, name), chunk.source, solution=True),
        _code(grade_cell_id(topic, name), tests, grade=True, locked=True, points=points),
    ]


def _lab_cells(tmpl: TopicTemplates, topic: str) -> list:
    """The topic's lab section (macros ``lab_text`` and ``lab_code(values)``, both optional):
    a read-only cell that runs the student's own functions and plots what they do. ``values``
    are numbers the trusted side computes when the course is built (the reference's band)."""
    text, code = getattr(tmpl.module, "lab_text", None), getattr(tmpl.module, "lab_code", None)
    if text is None or code is None:
        return []
    from ..labs.notebook import notebook_values

    source = str(code(notebook_values(topic))).strip()
    return [_markdown(f"{topic}-lab-text", str(text()).strip()), _code(f"{topic}-lab", source, locked=True)]


def ship_files(notebook, folder: Path, topic: str) -> list[str]:
    """Write beside ``notebook`` what its cells import in a student's kernel (``SHIPPED``, the
    lab's data, ``requirements.txt``); returns the names written."""
    import torch

    from ..labs.notebook import lab_data

    code = "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")
    names = []
    for name, origin in SHIPPED.items():
        if f"import {Path(name).stem}" in code or f"from {Path(name).stem} import" in code:
            (folder / name).write_text(origin.read_text(encoding="utf-8"), encoding="utf-8")
            names.append(name)
    data = lab_data(topic) if "seqlab_lab" in code else None
    if data is not None:
        torch.save(data, folder / LAB_DATA_FILE)
        names.append(LAB_DATA_FILE)
    (folder / "requirements.txt").write_text(REQUIREMENTS, encoding="utf-8")
    return [*names, "requirements.txt"]


def nbgrader_config_text(env, *, course_id: str, seed: int, timeout: int) -> str:
    return env.get_template("notebooks/nbgrader_config.py.j2").render(course_id=course_id, seed=seed, timeout=timeout)


def read_seed(course_dir: Path) -> int | None:
    try:
        return int(json.loads((Path(course_dir) / SEED_FILE).read_text())["seed"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


@dataclass
class CourseReport:
    course_dir: Path
    seed: int
    notebooks: list[Path]
    config_path: Path


def build_course(
    course_dir: Path,
    *,
    seed: int | None = None,
    course_id: str | None = None,
    timeout: int = DEFAULT_TIMEOUT_S,
    solutions_dir: Path = SOLUTIONS_DIR,
    config: GradingConfig | None = None,
    topics=contract.MODULES,
    progress: Callable[[str], None] | None = None,
) -> CourseReport:
    """Write (or rewrite) the course. The seed is kept across rebuilds unless one is given.
    ``progress`` gets one line per notebook written (and per lab's data computed)."""
    import nbformat

    say = progress or (lambda line: None)

    course_dir = Path(course_dir).resolve()
    config = config or load_config()
    env = environment()
    sources = load_topics(solutions_dir, topics)
    seed = seed if seed is not None else read_seed(course_dir)
    seed = seed if seed is not None else secrets.randbelow(2**31)
    course_id = course_id or config.course_id
    course_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for number, source in enumerate(sources, start=1):
        started = time.perf_counter()
        notebook = build_notebook(source, config, env=env, number=number, total=len(sources))
        path = course_dir / "source" / source.topic / f"{source.topic}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, str(path))
        shipped = ship_files(notebook, path.parent, source.topic)
        written.append(path)
        extra = f" with {', '.join(shipped)}" if shipped else ""
        say(f"[{number}/{len(sources)}] {path}{extra} ({time.perf_counter() - started:.1f} s)")
    config_path = course_dir / "nbgrader_config.py"
    config_path.write_text(nbgrader_config_text(env, course_id=course_id, seed=seed, timeout=timeout), encoding="utf-8")
    (course_dir / SEED_FILE).write_text(json.dumps({"seed": seed, "course_id": course_id}) + "\n", encoding="utf-8")
    return CourseReport(course_dir, seed, written, config_path)
