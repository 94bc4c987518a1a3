"""Parity (issue "One world"): for every refusal and void the grader can give, the student's own
public tests give the same verdict first, in the same words.

``VERDICTS`` enumerates the grader's verdicts that take points for *how* code is written rather
than for a wrong value, each with a submission that earns it. Each is graded by the grader and
run through the release's public tests, and the grader's message must appear in the public run.
A test below checks the table is complete against the rules the grader's code can give, so a new
kind of verdict cannot be added without its public twin. (The subset's refusals, one rule each,
are ``test_subset_parity.py``; the labs' CPU budget's twin is ``TWIN_ELSEWHERE``'s.)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab.grading import grade_submission, grading_settings
from seqlab.paths import SOLUTIONS_DIR
from seqlab.regions import strip_markers

ROOT = Path(__file__).resolve().parents[2]

# verdict -> (module, function, the text replaced, its replacement): a correct reference
# function changed only in how it computes.
VERDICTS = {
    "refused by the subset": (
        "attention",
        "causal_mask",
        "def causal_mask(",
        "import subprocess\n\n\ndef causal_mask(",
    ),
    "a forbidden name in the source (static void)": (
        "optimizers",
        "clip_grad_norm",
        "    return [g * scale for g in grads], total_norm",
        "    _ = torch.nn.utils.get_total_norm(grads)\n    return [g * scale for g in grads], total_norm",
    ),
    "a forbidden operation reached at run time (void)": (
        "transformer",
        "layer_norm",
        "    return centered / torch.sqrt(var + eps) * weight + bias",
        "    ops = {'norm': torch.nn.functional.layer_norm}  # out of the scan's sight: a dict's value\n"
        "    return _OPS[0](x, x.shape[-1:], weight, bias, eps)",
    ),
    "an argument modified in place (purity)": (
        "optimizers",
        "sgd",
        "    return w - lr * dw, {}",
        "    w_next = w - lr * dw\n    dw.zero_()\n    return w_next, {}",
    ),
    "an argument returned (aliasing)": (
        "optimizers",
        "clip_grad_norm",
        "    return [g * scale for g in grads], total_norm",
        "    return [g if float(scale) == 1.0 else g * scale for g in grads], total_norm",
    ),
    "a function the labs train through breaks autograd (autograd)": (
        "selective_scan",
        "linear_scan",
        "    if torch.is_grad_enabled() and any(",
        "    if False and torch.is_grad_enabled() and any(",  # the in-place sweep, under autograd too
    ),
}
# The grader's rules of this kind (``rule=`` in seqlab/grading and graders/) and the verdicts
# above that stand for each; "subset" is the loader's refusal, named by its own words.
RULE_OF = {
    "refused by the subset": "subset",
    "a forbidden name in the source (static void)": "forbidden",
    "a forbidden operation reached at run time (void)": "forbidden",
    "an argument modified in place (purity)": "purity",
    "an argument returned (aliasing)": "aliasing",
    "a function the labs train through breaks autograd (autograd)": "autograd",
}
# Verdicts whose first line names the grader's own case and a tensor's versions: compared from
# the rule's words to the end of autograd's own sentence, and by their explaining line.
AFTER_THE_CASE = {"a function the labs train through breaks autograd (autograd)"}
# The labs' CPU budget: its public twin trains the student's lab at the grading size and refuses
# in the grader's words, from the one budget module both ship (seqlab/labs/budget.py).
TWIN_ELSEWHERE = {
    "budget": "tests/labs/test_lab_budgets.py::test_the_public_budget_test_refuses_in_the_graders_words",
    # the labs' count of adam's steps: its public twin counts them the same way and refuses in
    # the grader's words, from the one module both ship (seqlab/student/updates.py)
    "updates": "tests/labs/test_lab_updates.py::test_the_public_adam_steps_test_refuses_in_the_graders_words",
}
# Rules of the grader that judge values, not how they were computed: the public tests check
# values in their own words (expected/got), so no word-for-word twin is asked of them.
VALUE_RULES = {"shape/dtype/device", "trajectory", "first-steps", "held-out", "complexity"}


def test_every_rule_of_the_grader_is_a_verdict_here_or_a_value_rule():
    rules = set()
    for path in [*(ROOT / "seqlab").rglob("*.py"), *(ROOT / "graders").glob("*.py")]:
        rules |= set(re.findall(r'rule="([a-z/_-]+)"', path.read_text(encoding="utf-8")))
    rules.add("shape/dtype/device")  # SHAPE_RULE, by its constant
    missing = rules - set(RULE_OF.values()) - set(TWIN_ELSEWHERE) - VALUE_RULES
    assert not missing, f"a verdict of the grader with no public twin in VERDICTS: {missing}"
    for where in TWIN_ELSEWHERE.values():
        path, _, test = where.partition("::")
        assert f"def {test}(" in (ROOT / path).read_text(encoding="utf-8"), where


def _submission(folder: Path, verdict: str) -> Path:
    module, _, old, new = VERDICTS[verdict]
    shutil.copytree(ROOT / "exercises", folder / "exercises")
    for path in SOLUTIONS_DIR.glob("*.py"):
        if path.name != "__init__.py":
            (folder / "exercises" / path.name).write_text(strip_markers(path.read_text()))
    target = folder / "exercises" / f"{module}.py"
    text = target.read_text()
    assert old in text, (verdict, old)
    text = text.replace(old, new, 1)
    if verdict == "a forbidden operation reached at run time (void)":  # the table, at module level
        text = text.replace(
            "    ops = {'norm': torch.nn.functional.layer_norm}  # out of the scan's sight: a dict's value\n", ""
        )
        text += "\n\n_OPS = [torch.nn.functional.layer_norm]\n"
    target.write_text(text)
    return folder


def _graders_message(folder: Path, module: str, function: str) -> str:
    result = grade_submission(folder, grading_settings(seed=3, isolated=False, only=f"{module}.{function}", labs=False))
    if result.errors:  # a module not loaded: the full refusal is the report's, once
        return result.errors[0].split(": ", 1)[1]
    for test in result.tests:
        if test.score < test.max_score:
            return test.output
    return ""


@pytest.mark.bank
@pytest.mark.slow
@pytest.mark.parametrize("verdict", list(VERDICTS))
def test_the_public_tests_give_the_graders_verdict_first(released, tmp_path, verdict):
    module, function, _, _ = VERDICTS[verdict]
    repo = tmp_path / "repo"
    shutil.copytree(released, repo)
    _submission(tmp_path / "sub", verdict)
    shutil.copytree(tmp_path / "sub" / "exercises", repo / "exercises", dirs_exist_ok=True)
    message = _graders_message(tmp_path / "sub", module, function)
    assert message, f"{verdict}: the grader gave no verdict"
    # The grader's sentence from the function's name on; the public tests put ", case ...:"
    # after the name where the grader's report puts its test's title.
    key = message.strip().splitlines()[0]
    name = f"{module}.{function}"
    core = key[key.index(name) + len(name) :].lstrip(" :") if name in key else key
    if verdict in AFTER_THE_CASE:  # "..., case <the grader's>: <rule>: ...inplace operation: [<tensor>] ..."
        core = key.split(": ", 1)[1].split("[", 1)[0]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"tests/test_{module}.py",
         "tests/test_code_rules.py"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:]
    assert core in done.stdout, f"{verdict}: the grader says\n{message}\nthe public tests said\n{done.stdout[-3000:]}"
    if verdict in AFTER_THE_CASE:
        assert message.strip().splitlines()[1] in done.stdout, (message, done.stdout[-3000:])
