"""A 31st exercise takes the four files docs/DESIGN.md's walkthrough names, and nothing else.

A copy of the course gets a toy exercise, ``transformer.rms_norm``, written into exactly its
solution, its grader, its notebook prose and the config. Then ``seqlab build`` writes the stub
(generated, not written by hand), and the course's own checks and a grading must accept it:
``build --check``, ``config --check``, the reference scoring full marks, and the wrong
submission its grader's mistake table describes (tests/mutants/derived.py) losing points with
the mistake named. The contract (its signature, its topic), the public tests and the mutant
bank are not touched: they follow from these files.

``toy_course`` builds the copy; ``add_toy_exercise`` is the exercise half. A new exam question
takes two files, written the same way: its declaration in a bank module (the generator, with its
text beside it) and its line in an exam file; the paper and the key then render with it. The
bank lives in the package, so the question's half copies the package too and runs it instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
"""

CONFIG_ENTRY = """  transformer.rms_norm:
    points: 2
    forbidden: ["torch.nn.functional.rms_norm", "torch.rms_norm", "torch.nn.RMSNorm*"]
"""


# A new question: the generator and its text, appended to the bank module of its topic.
QUESTION = r'''

from ..declare import text  # noqa: E402  (the toy's one extra name)


def _sample_rms(rng):
    return {"x": decs(rng, 4, -3, 3)}


@numeric("tf.rms_norm", _sample_rms, FOUR_DIGITS, hint="four numbers", minutes=3)
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


def add_toy_question(course: Path, package: Path) -> list[Path]:
    """``tf.rms_norm`` written into the two files of a question (in a copy of the package at
    ``package``: the bank is the package's); returns them."""
    shutil.copytree(ROOT / "seqlab", package / "seqlab", ignore=shutil.ignore_patterns("__pycache__"))
    bank = package / "seqlab" / "exam" / "bank" / "transformer" / "blocks.py"
    bank.write_text(bank.read_text(encoding="utf-8") + QUESTION, encoding="utf-8")
    exam = course / "exams" / "toy.yaml"
    exam.write_text(EXAM, encoding="utf-8")
    return [bank, exam]


def seqlab(course: Path, *args: str, package: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SEQLAB_COURSE": str(course)}
    if package is not None:  # this copy of seqlab, not the one installed
        env["PYTHONPATH"] = os.pathsep.join([str(package), *filter(None, [os.environ.get("PYTHONPATH")])])
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


@pytest.mark.bank
def test_a_new_exercise_takes_four_files(tmp_path):
    course = toy_course(tmp_path / "course")
    written = add_toy_exercise(course)
    assert len(written) <= 4

    built = seqlab(course, "build")
    assert built.returncode == 0, built.stderr
    assert "def rms_norm(x, weight, eps=1e-6):" in (course / "exercises" / "transformer.py").read_text()
    for check in (("build", "--check"), ("config", "--check")):
        run = seqlab(course, *check)
        assert run.returncode == 0, f"seqlab {' '.join(check)}: {run.stdout}{run.stderr}"

    right = graded(course, submission(course, tmp_path / "right"))
    tests = [t for t in right["tests"] if "rms_norm" in t["name"]]
    assert tests and right["score"] == right["max_score"] == 2, right
    # the known-wrong submission is the grader's own mistake row, written as a student's function
    (mutant,) = [m for m in derived_mutants(course) if m.function == "transformer.rms_norm"]
    wrong = graded(course, submission(course, tmp_path / "wrong", mutant.source))
    assert wrong["score"] < wrong["max_score"], wrong
    assert any(mutant.hint in t["output"] for t in wrong["tests"]), wrong["tests"]


@pytest.mark.bank
def test_a_new_question_takes_two_files(tmp_path):
    course, package = toy_course(tmp_path / "course"), tmp_path / "package"
    written = add_toy_question(course, package)
    assert len(written) <= 2
    exam = str(course / "exams" / "toy.yaml")
    for command, folder in (("render", "papers"), ("key", "keys")):
        run = seqlab(course, "exam", command, "--exam", exam, "--student", "s1", "--out", str(tmp_path / folder),
                     package=package)  # fmt: skip
        assert run.returncode == 0, f"seqlab exam {command}: {run.stdout}{run.stderr}"
    paper = "\n".join(p.read_text(encoding="utf-8") for p in (tmp_path / "papers").rglob("*.md"))
    assert "RMSNorm divides a token by the root of its mean square" in paper
    key = "\n".join(p.read_text(encoding="utf-8") for p in (tmp_path / "keys").rglob("*") if p.is_file())
    assert "tf.rms_norm" in key or "RMSNorm" in key, key[:500]
    table = tmp_path / "coverage.md"  # the generated table follows: nothing to write there
    coverage = seqlab(course, "exam", "coverage", "--out", str(table), package=package)
    assert coverage.returncode == 0, coverage.stderr
    assert "tf.rms_norm" in table.read_text(encoding="utf-8")
