"""The labs' budgets a student can check: one set of numbers in three places that cannot drift.

The grading sizes live in the task modules (``GRADING_SIZES``, ``GRADING_TEXT``) and the budgets
in seqlab/labs/budget.py. The student's public budget tests train at public_tests/_labs.py's
``GRADING`` with inputs built by its ``grading_inputs``, and each lab's docstring states the sizes
and the budget (``Lab.grading_note``): these tests hold both to the one place. The public test's
timing at full size is in the bank (it trains all four labs).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import signal
import sys
import time
from pathlib import Path

import pytest
import torch

from seqlab.labs import LABS, budget, clock
from seqlab.paths import SOLUTIONS_DIR
from seqlab.reference import load_reference

PUBLIC = Path(__file__).resolve().parents[2] / "public_tests"


@pytest.fixture(scope="module")
def public_labs():
    sys.path.insert(0, str(PUBLIC))  # _labs imports _budget and _check as the student's tests do
    try:
        spec = importlib.util.spec_from_file_location("public_labs_budgets", PUBLIC / "_labs.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(PUBLIC))


@pytest.fixture(autouse=True)
def _no_rules_file(monkeypatch, public_labs):
    """The release writes the grader's rules beside the tests (tests/_rules.json); in this
    checkout there is none, and no rule forbids anything a lab's training call does."""
    monkeypatch.syspath_prepend(str(PUBLIC))
    forbidden = importlib.import_module("_forbidden")
    monkeypatch.setattr(forbidden, "rules", lambda: {"functions": [], "labs": list(LABS), "forbidden": {}})


def _shape_tree(tree):
    if isinstance(tree, dict):
        return {k: _shape_tree(v) for k, v in tree.items()}
    if isinstance(tree, torch.Tensor):
        return (tuple(tree.shape), tree.dtype)
    if isinstance(tree, torch.Generator):
        return "generator"
    return tree


def _costliest_task(function: str) -> dict:
    """The task's child inputs at its costliest instance: the drawn sizes at their largest."""
    task = LABS[function].module()
    child_inputs, _ = task.draw_task(0)
    if function == "lstm_gru.train_recall":
        child_inputs["lag"] = max(task.LAGS)
    if function == "transformer.train_reverser":
        child_inputs["vocab"], child_inputs["seq_len"] = max(task.VOCABS), max(task.LENGTHS)
        child_inputs["params"] = task.initial_params(max(task.VOCABS), torch.Generator().manual_seed(0))
    return child_inputs


def test_the_public_sizes_are_the_task_modules(public_labs):
    assert {f: lab.module().GRADING_SIZES for f, lab in LABS.items()} == public_labs.GRADING
    copy_count = load_reference().selective_scan.COPY_COUNT
    assert LABS["selective_scan.train_selective_copy"].module().GRADING_SIZES["copy_count"] == copy_count


@pytest.mark.parametrize("function", sorted(LABS))
def test_the_public_inputs_are_the_graders_in_shape(public_labs, function):
    """Every key, every tensor's shape and dtype, every number: what the grader sends at its
    costliest instance is what the public budget test trains on (the values are drawn apart)."""
    assert _shape_tree(public_labs.grading_inputs(function)) == _shape_tree(_costliest_task(function))


@pytest.mark.parametrize("function", sorted(LABS))
def test_each_lab_docstring_states_its_sizes_and_budget(function):
    module, name = function.split(".")
    source = (SOLUTIONS_DIR / f"{module}.py").read_text(encoding="utf-8")
    doc = _docstring(source, name)
    note = " ".join(LABS[function].grading_note().split())
    assert note in doc, f"solutions/{module}.py, {name}: the docstring must say (then `seqlab build`):\n{note}"


def _docstring(source: str, name: str) -> str:
    import ast

    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return " ".join((ast.get_docstring(node) or "").split())


def test_one_budget_module_for_the_grader_and_the_student():
    assert (PUBLIC / "_budget.py").resolve() == Path(budget.__file__).resolve()
    assert all(lab.cpu_budget_s == budget.CPU_BUDGET_S for lab in LABS.values())
    assert set(budget.REFERENCE_CPU_S) == set(LABS)
    assert clock.workload is budget.workload and clock.STANDARD_CALIBRATION_S == budget.STANDARD_CALIBRATION_S


def test_the_refusal_names_the_budget_the_core_and_the_reference():
    assert budget.over_budget("lstm_gru.train_recall", 14.9, 15.0, 1.0) is None
    words = budget.over_budget("lstm_gru.train_recall", 20.0, 15.0, 1.2)
    assert words is not None and re.search(r"20\.0 s of CPU, over the lab's budget of 18\.0 s \(15 s", words)
    assert "1.2x slower" in words and "the reference trains in about 2.3 s" in words


def test_the_public_budget_test_refuses_in_the_graders_words(public_labs, monkeypatch):
    """A slow training function, timed by the public check: the refusal is over_budget's."""
    monkeypatch.setattr(public_labs, "_SLOWDOWN", [1.0])
    monkeypatch.syspath_prepend(str(PUBLIC))
    monkeypatch.setattr(importlib.import_module("_budget"), "CPU_BUDGET_S", 0.01)  # the student's copy

    def slow(**inputs):
        started = time.thread_time()
        while time.thread_time() - started < 0.05:
            pass
        return {k: v.clone() for k, v in inputs["params"].items()}, torch.zeros(inputs["steps"])

    public_labs.GRADING["lstm_gru.train_recall"] = {**public_labs.GRADING["lstm_gru.train_recall"], "steps": 2}
    try:
        with pytest.raises(pytest.fail.Exception) as failed:
            public_labs.check_budget("lstm_gru.train_recall", slow)
    finally:
        public_labs.GRADING["lstm_gru.train_recall"] = LABS["lstm_gru.train_recall"].module().GRADING_SIZES
    message = str(failed.value)
    assert message.startswith("lstm_gru.train_recall trained for "), message
    assert "over the lab's budget of 0.0 s (0.01 s on a standard core)" in message
    # where a profiling timer exists, the call is stopped a tenth past the budget (_stop_after)
    assert "and stopped there, before its end" in message or not hasattr(signal, "setitimer"), message


@pytest.mark.bank
@pytest.mark.slow
@pytest.mark.parametrize("function", sorted(LABS))
def test_the_reference_passes_its_public_budget_test(public_labs, function):
    """At full size, the way the student's pytest runs it (in this process, the reference's
    functions rather than the subset-loaded ones: the CPU differs by the subset's guards)."""
    module, name = function.split(".")
    counted = public_labs.check_budget(function, getattr(getattr(load_reference(), module), name))
    assert counted < budget.CPU_BUDGET_S * public_labs._core_slowdown() / 2, counted
