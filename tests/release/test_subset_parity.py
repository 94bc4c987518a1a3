"""The student's own tests say what the grader says: for each rule of the language subset, a
snippet that breaks it fails the release's public tests with the grader's refusal, word for word."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from seqlab import contract
from seqlab.paths import SOLUTIONS_DIR
from seqlab.regions import strip_markers
from seqlab.subset import refusals

# One rule a module, so that one run of the public tests shows seven refusals at once.
RULES = [
    dict(zip(contract.MODULES, lines))
    for lines in (
        (
            "import subprocess",
            "y = torch._C",
            "y = (lambda: 0).__globals__",
            "y = eval('1')",
            "y = getattr(torch, 'o' + 's')",
            "torch.allclose = None",
            "from torch import load",
        ),
        (
            "y = open('/etc/passwd')",
            "y = __builtins__",
            "import operator\ny = operator.attrgetter",
            "def g():\n    yield 1\ny = g().gi_frame",
            "class A(metaclass=type):\n    pass",
            "import sys\ny = sys.modules",
            "import torch.jit",
        ),
    )
]


@pytest.mark.parametrize("rules", RULES, ids=["first-seven", "next-seven"])
def test_a_broken_rule_fails_the_public_tests_with_the_graders_message(released, tmp_path, rules):
    repo = tmp_path / "repo"
    shutil.copytree(released, repo)
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
        assert message in done.stdout, (
            f"{module}: the grader says\n{message}\nthe public tests said\n{done.stdout[-3000:]}"
        )
