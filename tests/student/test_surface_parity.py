"""The modules and names the closed surface refuses reach the student first: a snippet that
imports one fails the release's public tests with the grader's refusal, word for word (the rules
from before the surface was closed are tests/release/test_subset_parity.py's)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from seqlab import contract
from seqlab.cli import main
from seqlab.paths import SOLUTIONS_DIR
from seqlab.regions import strip_markers
from seqlab.subset import refusals

# One new refusal a module, so one run of the public tests shows all seven.
LINES = (
    "import unittest",
    "from functools import singledispatch",
    "from dataclasses import make_dataclass",
    "import re",
    "from collections import UserString",
    "from logging import Filter",
    "from typing import get_type_hints",
)


@pytest.mark.slow
@pytest.mark.bank  # a release and a pytest run of it: a few seconds
def test_the_closed_surface_fails_the_public_tests_with_the_graders_message(tmp_path):
    repo = tmp_path / "repo"
    assert main(["release", str(repo)]) == 0
    rules = dict(zip(contract.MODULES, LINES))
    for module, line in rules.items():
        reference = strip_markers((SOLUTIONS_DIR / f"{module}.py").read_text())
        (repo / "exercises" / f"{module}.py").write_text(reference + "\n\n" + line + "\n")
    graders = refusals(repo)
    assert set(graders) == set(rules), graders
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_code_rules.py"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout[-2000:]
    for module, message in graders.items():
        assert message in done.stdout, (module, message, done.stdout[-3000:])
