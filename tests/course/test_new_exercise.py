"""A new exercise takes the four files docs/DESIGN.md's walkthrough names, and nothing else.

A real copy of this checkout (tests, docs, recordings and package included: tests/course/_checkout.py)
gets a toy exercise, ``transformer.rms_norm``, written into exactly its solution, its grader, its
notebook prose and the config. Then ``seqlab regenerate`` writes everything derived (the stub,
the docs' tables, the coverage), and nothing else differs from the checkout. The course's own
checks must accept it: ``build --check``, ``config --check``, ``regenerate --check``, ``seqlab
check-exercise`` (the reference scoring full marks, the wrong submission its grader's mistake
table describes losing points with the mistake named), the topic's notebook, the recorded grades
of the topic's mutants (moved by the new points, rewritten by ``seqlab regenerate --recorded``)
and the student release. The contract (its signature, its topic), the public tests and the
mutant bank are not touched: they follow from these files.

``add_toy_exercise`` is the exercise half. A new exam question takes two files, written the same
way: its declaration in the course's bank, ``exams/questions/`` (the generator, its text, key and
rules in one place), and its line in an exam file; the paper and the key then render with it, from
a copy of the course's folders (``toy_course``) and the installed package, untouched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab.config import course_figures
from tests.course._checkout import checkout, seqlab_in
from tests.mutants.derived import derived_mutants

ROOT = Path(__file__).resolve().parents[2]
# What a course is on disk (seqlab.paths); the package itself is not copied, only pointed at it.
COURSE_PARTS = ("solutions", "exercises", "graders", "templates", "exams", "examples", "grading_config.yaml")

SOLUTION = '''

def rms_norm(x, weight, eps=1e-6):
    r"""Root-mean-square normalization over the last axis.

    .. math::
        y = \\frac{x}{\\sqrt{\\frac{1}{E}\\sum_e x_e^2 + \\epsilon}} \\odot \\gamma

    Args:
        x (Tensor): (..., E) float32/float64.
        weight (Tensor): (E,), the gain :math:`\\gamma`.
        eps (float): added to the mean square for stability (default 1e-6).

    Returns:
        y (Tensor): same shape as ``x``, a new tensor.

    Notes: W8 §15.3.

    Agrees with ``torch.nn.functional.rms_norm(x, (E,), weight, eps)``, which must not be called here.
    """
    ### BEGIN SOLUTION
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * weight
    ### END SOLUTION
'''

GRADER = """

def rms_norm_variant(x, weight, eps=1e-6, *, root=True):
    mean_square = (x * x).mean(dim=-1, keepdim=True) + eps
    return x / (torch.sqrt(mean_square) if root else mean_square) * weight


RMS_NORM_MISTAKES = [
    ("square root forgotten", {"root": False}, "divide by the root of the mean square, not the mean square."),
]


@grades("transformer.rms_norm", title="matches F.rms_norm, (B, T, E) input, odd E=5")
@DTYPES
def test_rms_norm(grade, make, dtype):
    case = Case(make, B=2, T=3, E=5, dtype=dtype)
    x, w = case.randn("B", "T", "E", scale=2.0), 1.0 + case.randn("E", scale=0.3)
    grade.check(x, w, case=case, mistakes=from_table(RMS_NORM_MISTAKES, rms_norm_variant))
"""

PROSE = """
{% macro idea_rms_norm() %}
Scale every token by the root of the mean of its squared features, then by a learned `weight`.
{% endmacro %}
{% macro conventions_rms_norm() %}
Over the last axis only, with `eps` inside the square root; no mean is subtracted.
{% endmacro %}
{% macro check_rms_norm() %}
x = torch.tensor([[3.0, 4.0]])
y = rms_norm(x, torch.ones(2), eps=0.0)
assert y.shape == x.shape, "same shape as x"
assert torch.allclose(y, x / 12.5 ** 0.5), "divide by the root of the mean square (here sqrt(12.5))"
{% endmacro %}
"""

CONFIG_ENTRY = """  transformer.rms_norm:
    points: 2
    forbidden: ["torch.nn.functional.rms_norm", "torch.rms_norm", "torch.nn.RMSNorm*"]
"""


# A new question: the generator and its text, appended to the bank module of its topic.
QUESTION = r'''

def _sample_rms(rng):
    return {"x": decs(rng, 4, -3, 3)}


@numeric("tf.rms_norm", _sample_rms, FOUR_DIGITS, hint="four numbers")
@text(
    """
{% block question %}
RMSNorm divides a token by the root of its mean square: $y = x / \\sqrt{\\frac14 \\sum_i x_i^2}$.
For $x = {{ p.x|vec }}$, what is $y$?
{% endblock %}
{% block solution %}
$y = {{ answer|vec }}$.
{% endblock %}
"""
)
@cites("W8 §15.3")
@exercises("transformer.layer_norm")
def rms_norm(p):
    """RMSNorm of one token."""
    x = t(p["x"])
    return floats(x / torch.sqrt((x * x).mean()))
'''

EXAM = """title: "A toy exam"
seed: 7
duration: 10
parts:
  - title: "Part A"
    questions:
      - {id: tf.rms_norm, points: 3, partial: {per_element: true}}
"""


def toy_course(target: Path) -> Path:
    """A copy of this course at ``target``, which ``SEQLAB_COURSE`` can point at."""
    for part in COURSE_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, target / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target / part)
    return target


def add_toy_exercise(course: Path) -> list[Path]:
    """``transformer.rms_norm`` written into the four files of the walkthrough; returns them."""
    written = {
        course / "solutions" / "transformer.py": SOLUTION,
        course / "graders" / "test_transformer.py": GRADER,
        course / "templates" / "notebooks" / "transformer.md.j2": PROSE,
    }
    for path, text in written.items():
        path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    config = course / "grading_config.yaml"
    text = config.read_text(encoding="utf-8")
    anchor = "  selective_scan.discretize:"
    assert anchor in text, "the config's functions table moved: put the entry beside transformer's"
    config.write_text(text.replace(anchor, CONFIG_ENTRY + anchor, 1), encoding="utf-8")
    return [*written, config]


def add_toy_question(course: Path) -> list[Path]:
    """``tf.rms_norm`` written into the two files of a question, both the course's; returns them."""
    bank = course / "exams" / "questions" / "transformer" / "blocks.py"
    bank.write_text(bank.read_text(encoding="utf-8") + QUESTION, encoding="utf-8")
    exam = course / "exams" / "toy.yaml"
    exam.write_text(EXAM, encoding="utf-8")
    return [bank, exam]


def seqlab(course: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SEQLAB_COURSE": str(course)}
    return subprocess.run(
        [sys.executable, "-m", "seqlab", *args], cwd=course, env=env, capture_output=True, text=True, timeout=300
    )


def submission(course: Path, target: Path, wrong: str | None = None) -> Path:
    """The course's references as a hand-in, with ``rms_norm`` replaced by ``wrong``."""
    from seqlab.build import replace_function

    exercises = target / "exercises"
    shutil.copytree(course / "solutions", exercises, ignore=shutil.ignore_patterns("__pycache__"))
    if wrong is not None:
        path = exercises / "transformer.py"
        path.write_text(replace_function(path.read_text(encoding="utf-8"), "rms_norm", wrong), encoding="utf-8")
    return target


def graded(course: Path, hand_in: Path) -> dict:
    out = hand_in / "out"
    run = seqlab(course, "grade", str(hand_in), "--only", "transformer.rms_norm", "--in-process", "--seed", "1",
                 "--out", str(out), "--quiet")  # fmt: skip
    assert run.returncode == 0, run.stderr
    return json.loads((out / "results.json").read_text())


def _fingerprints(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _ok(run: subprocess.CompletedProcess, what: str) -> str:
    assert run.returncode == 0, f"{what}: {run.stdout[-3000:]}{run.stderr[-3000:]}"
    return run.stdout


@pytest.mark.bank
def test_a_new_exercise_takes_four_files(tmp_path):
    course = checkout(tmp_path / "course")
    before = _fingerprints(course)
    written = add_toy_exercise(course)
    assert len(written) <= 4

    _ok(seqlab_in(course, "regenerate", "--only", "stubs", "docs", "coverage"), "seqlab regenerate")
    after = _fingerprints(course)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    by_hand = {p.relative_to(course).as_posix() for p in written}
    derived = changed - by_hand
    assert all(p.startswith(("exercises/", "docs/")) for p in derived), sorted(derived)  # regenerate's
    assert "def rms_norm(x, weight, eps=1e-6):" in (course / "exercises" / "transformer.py").read_text()
    total = course_figures().total_points + 2  # the toy's config entry gives it 2 points
    design = (course / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    assert "`rms_norm`" in design and f"| {total:g} |" in design, "the topics table follows the config"

    for check in (("build", "--check"), ("config", "--check"), ("regenerate", "--check", "--only", "stubs", "docs")):
        _ok(seqlab_in(course, *check), f"seqlab {' '.join(check)}")

    # every recorded grade of the topic moves (its max_score gains the new points): the mutants
    # compare stale, check-exercise says so with the command that records them, and after it
    # both pass (docs/DESIGN.md, "Adding an exercise")
    select = "layer_norm and after and square"
    mutants = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/grading/test_mutants.py", "-k", select]
    env = {**os.environ, "SEQLAB_COURSE": str(course)}
    stale = subprocess.run([sys.executable, *mutants], cwd=course, env=env, capture_output=True, text=True, timeout=600)
    assert stale.returncode == 1 and "recorded" in stale.stdout, stale.stdout[-2000:]
    first = seqlab_in(course, "check-exercise", "transformer.rms_norm")
    assert first.returncode == 1 and "regenerate --recorded --only recorded -k transformer`" in first.stdout, (
        first.stdout
    )
    _ok(
        seqlab_in(course, "regenerate", "--recorded", "--only", "recorded", "-k", "transformer", "--jobs", "1"),
        "record",
    )
    report = _ok(seqlab_in(course, "check-exercise", "transformer.rms_norm"), "seqlab check-exercise")
    assert "all checks passed" in report, report
    again = subprocess.run([sys.executable, *mutants], cwd=course, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout[-2000:]

    # the notebook of its topic, with the new function's cells (the idea_ and check_ macros)
    notebook = tmp_path / "nbgrader"
    build = f"from seqlab.nbgrader.course import build_course; build_course({str(notebook)!r}, seed=1, topics=('transformer',))"
    _ok(subprocess.run([sys.executable, "-c", build], cwd=course, env={**os.environ, "SEQLAB_COURSE": str(course)},
                       capture_output=True, text=True, timeout=600), "build_course")  # fmt: skip
    cells = "\n".join(p.read_text(encoding="utf-8") for p in notebook.rglob("*.ipynb"))
    assert "rms_norm" in cells and "sqrt(12.5)" in cells, "the notebook has the new function's check cell"

    # the release lists it, and ships nothing of its solution
    release = tmp_path / "release"
    _ok(seqlab_in(course, "release", str(release)), "seqlab release")
    _ok(seqlab_in(course, "release", "--scan", str(release)), "seqlab release --scan")
    assert "rms_norm" in (release / "README.md").read_text(encoding="utf-8")

    # the toy course's grading: right full marks, the grader's own mistake row named
    right = graded(course, submission(course, tmp_path / "right"))
    assert right["score"] == right["max_score"] == 2, right
    (mutant,) = [m for m in derived_mutants(course) if m.function == "transformer.rms_norm"]
    wrong = graded(course, submission(course, tmp_path / "wrong", mutant.source))
    assert wrong["score"] < wrong["max_score"], wrong
    assert any(mutant.hint in t["output"] for t in wrong["tests"]), wrong["tests"]


@pytest.mark.bank
def test_a_new_question_takes_two_files(tmp_path):
    course = toy_course(tmp_path / "course")
    written = add_toy_question(course)
    assert len(written) <= 2
    exam = str(course / "exams" / "toy.yaml")
    for command, folder in (("render", "papers"), ("key", "keys")):
        run = seqlab(course, "exam", command, "--exam", exam, "--student", "s1", "--out", str(tmp_path / folder))
        assert run.returncode == 0, f"seqlab exam {command}: {run.stdout}{run.stderr}"
    paper = "\n".join(p.read_text(encoding="utf-8") for p in (tmp_path / "papers").rglob("*.md"))
    assert "RMSNorm divides a token by the root of its mean square" in paper
    key = "\n".join(p.read_text(encoding="utf-8") for p in (tmp_path / "keys").rglob("*") if p.is_file())
    assert "tf.rms_norm" in key or "RMSNorm" in key, key[:500]
    table = tmp_path / "coverage.md"  # the generated table follows: nothing to write there
    coverage = seqlab(course, "exam", "coverage", "--out", str(table))
    assert coverage.returncode == 0, coverage.stderr
    assert "tf.rms_norm" in table.read_text(encoding="utf-8")
