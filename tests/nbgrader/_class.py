"""One optimizers class handed in and autograded by the real nbgrader, for both end-to-end tests.

The round trip (test_course.py) reads nbgrader's gradebook, feedback and export of it; the
comparison with `seqlab nbgrader autograde` (test_autograde.py) grades the same hand-ins again in
a copy taken before nbgrader ran. nbgrader autograde costs about 5 s of CPU per notebook (a kernel,
the grading server and the isolated child, each importing torch), so the class is autograded
once per worker, not once per test: both tests carry the ``NBGRADER_CLASS`` group, which keeps
them on one worker.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from seqlab import contract
from seqlab.config import load_config
from seqlab.nbgrader.course import build_course
from seqlab.nbgrader.export import answer_id, grade_cell_id
from seqlab.nbgrader.source import load_topics
from seqlab.paths import GRADERS_DIR, SOLUTIONS_DIR
from seqlab.regions import strip_markers

SEED = 20260501
VENV_BIN = Path(sys.executable).parent
NBGRADER = str(VENV_BIN / "nbgrader")
SEQLAB = str(VENV_BIN / "seqlab")
TOPICS = {t.topic: t for t in load_topics(SOLUTIONS_DIR)}
TOPIC = "optimizers"
NBGRADER_CLASS = pytest.mark.xdist_group("nbgrader-class")

BUGGY = {
    "adam": """
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    beta1, beta2 = betas
    t = state.get("step", 0) + 1
    m = beta1 * state.get("m", torch.zeros_like(w)) + (1 - beta1) * dw
    v = beta2 * state.get("v", torch.zeros_like(w)) + (1 - beta2) * dw * dw
    return w - lr * m / (torch.sqrt(v) + eps), {"step": t, "m": m, "v": v}   # no bias correction
""",
    "clip_grad_norm": """
def clip_grad_norm(grads, max_norm):
    norms = [torch.linalg.vector_norm(g) for g in grads]
    total = torch.linalg.vector_norm(torch.stack(norms))
    # each gradient clipped by its own norm instead of the global one
    return [g * torch.clamp(max_norm / (n + 1e-6), max=1.0) for g, n in zip(grads, norms)], total
""",
}
WARNING_SGD = """
import warnings

def sgd(w, dw, state, lr=1e-2):
    # correct, but torch.tensor(tensor) emits a UserWarning ("To copy construct from a tensor ..."),
    # and another warning like the one PyTorch prints on some CPUs. (Not os.write(2, ...): the
    # static code policy refuses `import os` in an answer, so that would cost the whole topic.)
    warnings.warn("[W NNPACK.cpp:64] Could not initialize NNPACK! Reason: Unsupported hardware.")
    return torch.tensor(w - lr * dw), {}
"""
FORGERY = """
# Not an answer: code in the notebook can replace the grading function the test cells call.
import seqlab.nbgrader.kernel as _kernel
_kernel.hidden_points = lambda qualname, notebook: %(points)r[qualname]
"""
SNOOP = """
import json, os, sqlite3, subprocess
attempts = {}
def attempt(name, fn):
    try:
        fn()
        attempts[name] = "READ"
    except Exception as exc:
        attempts[name] = type(exc).__name__
attempt("source", lambda: print(open("../../../source/optimizers/optimizers.ipynb").read()[:20000]))
attempt("gradebook", lambda: print(sqlite3.connect("../../../gradebook.db").execute("select * from grade").fetchall()))
attempt("config", lambda: print(open("../../../nbgrader_config.py").read()))
attempt("listing", lambda: print(os.listdir("../..")))
attempt("graders", lambda: print(open(%(graders)r).read()))
attempt("solutions", lambda: print(open(%(solutions)r).read()))
attempt("shell", lambda: print(subprocess.run(["cat", "../../../gradebook.db"], capture_output=True)))
print("SNOOP " + json.dumps(attempts))
"""
BUGS_HANDED_IN = "2026-11-20 10:15:00.000000 UTC"  # nbgrader's collect writes the hand-in time


# A generated student answers each function correctly, with a known bug, or not at all, with these
# odds: most of a real class gets most functions right.
ODDS = {"correct": 0.6, "bug": 0.25, "stub": 0.15}


def hand_in_class(course: Path, topics: list[str], students: int, seed: int) -> dict[str, dict[str, str]]:
    """Write submitted/<student>/<topic>/<topic>.ipynb from the release: student 0 answers every
    function from solutions/, student 1 hands in the stubs, every other one a seeded mix per
    function (``ODDS``: correct, a known-wrong variant of tests/mutants/, the stub). Returns what
    each student did per function."""
    from tests.mutants import all_variants

    sources = TOPICS
    bugs: dict[str, list] = {}
    for variant in all_variants("MUTANTS"):
        bugs.setdefault(variant.function, []).append(variant)
    plan: dict[str, dict[str, str]] = {}
    for i in range(students):
        student = f"student{i:02d}"
        rng = random.Random(seed * 1000 + i)
        plan[student] = {}
        for topic in topics:
            nb = nbformat.read(str(course / "release" / topic / f"{topic}.ipynb"), as_version=4)
            cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
            for chunk in sources[topic].answers:
                qualname = f"{topic}.{chunk.name}"
                if i == 0:
                    kind = "correct"
                elif i == 1:
                    kind = "stub"
                else:
                    kind = rng.choices(list(ODDS), weights=list(ODDS.values()))[0]
                if kind == "bug" and not bugs.get(qualname):
                    kind = "stub"
                cell = cells[answer_id(topic, chunk.name)]
                if kind == "correct":
                    cell.source = strip_markers(chunk.source)
                elif kind == "bug":
                    variant = rng.choice(bugs[qualname])
                    cell.source = variant.source.strip() + "\n"
                    kind = f"bug: {variant.description}"
                plan[student][qualname] = kind
            path = course / "submitted" / student / topic / f"{topic}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, str(path))
    return plan


def by_grade_id(nb) -> dict:
    return {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}


def outputs(cell) -> str:
    return "".join(o.get("text", "") or "".join(o.get("data", {}).get("text/plain", "")) for o in cell.outputs)


def student_notebook(release: Path, answers: dict[str, str], *, drop=(), extra=()) -> nbformat.NotebookNode:
    """The released notebook with these answer cells filled in, these cells deleted, and scratch
    code cells inserted after the first two cells."""
    nb = nbformat.read(str(release), as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in drop]
    for i, source in enumerate(extra):
        cell = nbformat.v4.new_code_cell(source)
        cell["id"] = f"scratch-{i}"
        nb.cells.insert(2 + i, cell)
    return nb


def run(args, cwd, timeout=600, expect=0) -> subprocess.CompletedProcess:
    """A command of this venv (nbgrader, seqlab) as an instructor types it: no NBGRADER_EXECUTION.
    ``expect``: its exit code (None: any)."""
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("NBGRADER_EXECUTION", None)
    out = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert expect is None or out.returncode == expect, (
        f"{args}: exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-5000:]}"
    )
    return out


def maximum_points() -> dict[str, float]:
    config = load_config()
    return {q: config.rules(q).points for q in contract.functions_of(TOPIC)}


@dataclass(frozen=True)
class HandedIn:
    course: Path  # every topic released, the class handed in and `nbgrader autograde optimizers` run
    before_autograde: Path  # a copy of the same course, taken before nbgrader autograded it
    autograde_s: float  # how long nbgrader autograde took


# Who hands in what: the honest students (solutions, stubs, two bugged functions), one who deletes
# a test cell, warns and snoops on the course, and one who forges its points in the kernel.
HONEST = ("full", "stub", "bugs")


def hand_in_optimizers(root: Path) -> HandedIn:
    course = build_course(root / "course", seed=SEED).course_dir
    run([NBGRADER, "generate_assignment", "*"], cwd=course)
    release = course / "release" / TOPIC / f"{TOPIC}.ipynb"
    solved = {answer_id(TOPIC, c.name): strip_markers(c.source) for c in TOPICS[TOPIC].answers}
    bugged = {answer_id(TOPIC, n): textwrap.dedent(s) for n, s in BUGGY.items()}
    snoop = SNOOP % {
        "graders": str(GRADERS_DIR / "test_optimizers.py"),
        "solutions": str(SOLUTIONS_DIR / "optimizers.py"),
    }
    students = {
        "full": student_notebook(release, solved),
        "stub": student_notebook(release, {}),
        "bugs": student_notebook(release, {**solved, **bugged}),
        "traps": student_notebook(
            release,
            {**solved, answer_id(TOPIC, "sgd"): WARNING_SGD},
            drop={grade_cell_id(TOPIC, "rmsprop")},
            extra=[snoop],
        ),
        "forger": student_notebook(release, {}, extra=[FORGERY % {"points": maximum_points()}]),
    }
    for student, nb in students.items():
        path = course / "submitted" / student / TOPIC / f"{TOPIC}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, str(path))
    (course / "submitted" / "bugs" / TOPIC / "timestamp.txt").write_text(BUGS_HANDED_IN)
    before = shutil.copytree(course, root / "before-autograde")
    started = time.perf_counter()
    run([NBGRADER, "autograde", TOPIC], cwd=course)
    return HandedIn(course, before, time.perf_counter() - started)
