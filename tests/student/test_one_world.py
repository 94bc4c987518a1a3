"""What passes the student's own pytest is what the grader grades (issue "One world"): the two
honest submissions that once crashed the grader or lost a module, graded the way a class is
graded (the isolated child, the sandbox when there is one), and the same modules loaded the way
the student's own tests load them, in a fresh process where no test code made a tensor first.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from seqlab.grading import grade_submission, grading_settings
from seqlab.regions import strip_markers

ROOT = Path(__file__).resolve().parents[2]

# A module-level tensor constant: the first tensor of the process, made by the submission's own
# module under the subset's loader. torch's C code imports torch.storage through the calling
# frame's import hook then; the hook once refused it and every optimizer scored 0.
TENSOR_CONSTANTS = """
_TINY = torch.tensor(1e-300, dtype=torch.float64)
_ONES = torch.as_tensor([1.0, 1.0])
_LIKE = torch.zeros(2).new_tensor([0.5, 0.5])
"""

# A tuple unpacked inside a match case: the grader once died compiling it (no results at all).
MATCH_HELPER = '''

def _last_states(kind, x, h0, params):
    """The hidden states of either cell, whichever is asked for."""
    match kind:
        case "lstm":
            hs, _ = lstm_forward(x, h0, h0, params)
        case "gru":
            hs, _ = gru_forward(x, h0, params)
        case _:
            raise ValueError(kind)
    return hs
'''


def _reference(module: str) -> str:
    return strip_markers((ROOT / "solutions" / f"{module}.py").read_text())


def _after_imports(source: str, code: str) -> str:
    lines = source.splitlines(keepends=True)
    last_import = max(i for i, line in enumerate(lines) if line.startswith(("import ", "from ")))
    return "".join(lines[: last_import + 1] + [code] + lines[last_import + 1 :])


def _submission(folder: Path) -> Path:
    exercises = folder / "exercises"
    exercises.mkdir(parents=True)
    (exercises / "__init__.py").write_text((ROOT / "exercises" / "__init__.py").read_text())
    for path in sorted((ROOT / "solutions").glob("*.py")):
        if path.name != "__init__.py":
            (exercises / path.name).write_text(_reference(path.stem))
    (exercises / "optimizers.py").write_text(_after_imports(_reference("optimizers"), TENSOR_CONSTANTS))
    (exercises / "lstm_gru.py").write_text(_reference("lstm_gru") + MATCH_HELPER)
    return folder


@pytest.mark.slow
def test_the_two_honest_crash_cases_grade_full_marks_in_the_isolated_child(tmp_path):
    result = grade_submission(
        _submission(tmp_path / "s"), grading_settings(seed=5, only="optimizers.*,lstm_gru.*", labs=False)
    )
    lost = {f: s for f, s in result.by_function().items() if s[0] != s[1]}
    assert not lost and not result.errors, (lost, result.errors[:3])
    assert {f.split(".")[0] for f in result.by_function()} == {"optimizers", "lstm_gru"}


def test_a_module_level_tensor_imports_in_a_fresh_process_as_the_students_tests_load_it(tmp_path):
    """The student's side: a fresh interpreter, torch imported but no tensor made, then the
    module served by the subset's loader (the one public_tests/conftest.py installs)."""
    folder = _submission(tmp_path / "s")
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT / "public_tests")!r})
        import torch
        from _subset.modules import install, read_modules
        modules = read_modules(__import__("pathlib").Path({str(folder / "exercises")!r}))
        assert not modules.refused, modules.refused
        install(modules, {str(folder / "exercises")!r})
        import exercises.optimizers as o, exercises.lstm_gru as g
        print(float(o._TINY), o._ONES.tolist(), o._LIKE.tolist(), g._last_states.__name__)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["1e-300", "[1.0,", "1.0]", "[0.5,", "0.5]", "_last_states"]


def test_the_graders_and_the_public_saved_tensor_hooks_keep_autograds_inplace_check():
    """Hooks that take over how autograd saves a tensor also take over its check that the tensor
    was not written in place before backward: both sides keep it, in the same words, so an
    in-place scan fails in the grader as it does in plain PyTorch and in the student's tests."""
    import torch

    sys.path.insert(0, str(ROOT / "public_tests"))
    try:
        from _forbidden import unpack_checked, version_checked
    finally:
        sys.path.remove(str(ROOT / "public_tests"))
    from seqlab.student.guards import AutogradDetector

    messages = []
    for hooks in (
        AutogradDetector().context(),
        torch.autograd.graph.saved_tensors_hooks(version_checked, unpack_checked),
    ):
        x = torch.arange(3.0, requires_grad=True)
        with hooks:
            y = x.exp()  # exp saves its output for backward
            y.add_(1.0)  # then the output is written in place
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as raised:
            y.sum().backward()
        messages.append(str(raised.value))
    assert messages[0] == messages[1]
    with AutogradDetector().context():  # and an honest graph still backpropagates
        x = torch.arange(3.0, requires_grad=True)
        x.exp().sum().backward()
    assert torch.allclose(x.grad, x.detach().exp())
