"""Commands that never compute with tensors do not import torch.

Importing torch costs a process 1.3-1.8 s of CPU; `make test` runs `seqlab build --check` and
`seqlab config --check` before pytest, and CI and instructors run the others often. One
module-level ``import torch`` on their path (it happened through ``seqlab.grading``'s package
init) puts that cost back silently, so a fresh process runs them and reports what it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# A grader that imports nothing heavy: the real graders need torch to be collected at all (their
# parametrize lists name dtypes), and this checks seqlab's own import path, not theirs.
TORCH_FREE_GRADER = """
import pytest


@pytest.mark.grades("optimizers.sgd", title="a title to collect")
def test_collected_never_run():
    raise AssertionError("collection must not run a test")
"""


def torch_free_graders() -> str:
    """The grader above, plus one test per pattern the course's config gives a function's tests
    (``test_weights``, ``test_visibility``): `config --check` refuses a pattern no title matches."""
    from seqlab.config import load_config

    tests = [TORCH_FREE_GRADER]
    for number, (function, rules) in enumerate(load_config().functions.items()):
        for index, (pattern, _) in enumerate((*rules.test_weights, *rules.test_visibility)):
            title = pattern.replace("[[]", "[").replace("*", "x").replace("?", "x")
            tests.append(
                f"\n\n@pytest.mark.grades({function!r}, title={title!r})\n"
                f"def test_pattern_{number}_{index}():\n    raise AssertionError('collection must not run a test')\n"
            )
    return "".join(tests)


PROBE = textwrap.dedent(
    """
    import json, sys
    from seqlab.cli import main

    codes = {}
    for argv in json.loads(sys.argv[1]):
        try:
            codes[" ".join(argv)] = main(argv)
        except SystemExit as exc:  # --help exits through argparse
            codes[" ".join(argv)] = exc.code
    print(json.dumps({"codes": codes, "torch": "torch" in sys.modules}))
    """
)


def test_commands_without_tensors_leave_torch_unimported(tmp_path):
    graders = tmp_path / "graders"
    graders.mkdir()
    (graders / "pytest.ini").write_text(
        "[pytest]\npython_files = test_*.py\nmarkers =\n    grades(function, title): the graded function\n"
    )
    (graders / "test_light.py").write_text(torch_free_graders())
    # grade-all's parent on an empty class: its workers are what imports torch, and starting one
    # here would cost this test the very import it checks for; the parent's own path (discovery,
    # gradebook, class report) still runs.
    (tmp_path / "empty-class").mkdir()
    commands = [
        ["--help"],
        ["build", "--check"],
        ["config", "--check", "--graders", str(graders)],
        ["grade-all", str(tmp_path / "empty-class"), "--out", str(tmp_path / "graded")],
        ["gradebook", str(tmp_path / "graded"), "--out", str(tmp_path / "gradebook")],
        ["release", str(tmp_path / "release")],
        ["gradescope", str(tmp_path / "gradescope")],
        ["ci-workflow", str(tmp_path / "workflow.yml")],
    ]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(commands)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["codes"] == {" ".join(argv): 0 for argv in commands}, proc.stderr
    assert report["torch"] is False, "a command that computes nothing with tensors imported torch"
