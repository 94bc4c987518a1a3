"""The project's own plumbing: dependencies declared, one version, one copy of each default.

Each check here stands for a policy that drifts when it is written in several places.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab import __version__, defaults
from seqlab.cli import main

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
# Code that runs in the instructor's venv (the students' released repo declares its own three).
INSTRUCTOR_CODE = ("seqlab", "graders", "tests", "public_tests", "benchmarks", "solutions", "examples")
# Import name -> distribution, where they differ.
DISTRIBUTION_OF = {"PIL": "Pillow", "yaml": "PyYAML", "xdist": "pytest-xdist", "pytest_timeout": "pytest-timeout"}
DISTRIBUTION_OF |= {"distributed": "dask", "IPython": "ipython"}  # dask[distributed]: the extra brings it
FIRST_PARTY = {
    "seqlab",
    "solutions",
    "exercises",
    "tests",
    "graders",
    "_check",
    "_labs",
    "_subset",
    "_budget",
    "_forbidden",
    "_static_names",
    "_apiwatch",
    "_updates",
    "_autograd",
    "_gradcheck",
    "loop_style",
}
# Student code kept as test data: its imports are the student's own (``from rnn import ...``).
STUDENT_CODE = ("tests/student/honest_submissions",)


def _imported_top_levels(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _declared() -> set[str]:
    """Distributions seqlab's installed metadata requires, its extras included (what pip reads)."""
    return {_normalized(re.split(r"[<>=!~\[ ;(]", r, maxsplit=1)[0]) for r in importlib.metadata.requires("seqlab")}


def _normalized(name: str) -> str:
    """PEP 503: `axe_playwright_python` and `axe-playwright-python` name one distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_imported_package_is_declared():
    imported = set()
    for folder in INSTRUCTOR_CODE:
        for path in (ROOT / folder).rglob("*.py"):
            if path.relative_to(ROOT).as_posix().startswith(STUDENT_CODE):
                continue
            imported |= {(name, path.relative_to(ROOT).as_posix()) for name in _imported_top_levels(path)}
    third_party = {(n, p) for n, p in imported if n not in sys.stdlib_module_names and n not in FIRST_PARTY}
    declared = _declared()
    missing = sorted(
        {
            (DISTRIBUTION_OF.get(n, n), p)
            for n, p in third_party
            if _normalized(DISTRIBUTION_OF.get(n, n)) not in declared
        }
    )
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_the_version_is_written_once():
    project_table = PYPROJECT.split("\n[project]\n", 1)[1].split("\n[", 1)[0]
    assert not re.search(r"(?m)^version\s*=", project_table), "a literal version beside seqlab.__version__"
    assert 'dynamic = ["version"]' in PYPROJECT and 'version = { attr = "seqlab.__version__" }' in PYPROJECT
    assert importlib.metadata.version("seqlab") == __version__
    assert f"## {__version__}" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["TORCH_VERSION", "TORCH_CPU_INDEX", "PYTHON_VERSION", "LOCK", "GRADING_LOCK"])
def test_the_scripts_read_the_defaults(name):
    # scripts/*.sh and the Makefile read these out of defaults.py with sed: run that very function.
    shown = subprocess.run(
        ["bash", "-c", f". scripts/defaults.sh && defaults {name}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert shown == getattr(defaults, name)


def test_the_venv_has_the_torch_of_the_defaults():
    assert importlib.metadata.version("torch").split("+")[0] == defaults.TORCH_VERSION


def test_commands_take_their_error_class_from_errors_not_from_the_cli():
    for path in sorted((ROOT / "seqlab" / "commands").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert "from ..cli import" not in source, f"{path.name}: imports back from cli.py (a cycle)"


def test_a_seqlab_error_is_one_line_on_stderr_and_exit_2(tmp_path, capsys):
    not_a_folder = tmp_path / "file.txt"
    not_a_folder.write_text("x")
    assert main(["release", "--scan", str(not_a_folder)]) == 2
    stderr = capsys.readouterr().err
    assert "Traceback" not in stderr
    assert stderr.strip() == f"seqlab release: error: {not_a_folder}: not a folder"
