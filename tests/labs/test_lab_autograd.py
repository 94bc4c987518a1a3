"""Contract properties the labs rely on are tested with the function: autograd through it.

Each lab declares the functions it backpropagates through (``Lab.through``); each has a public
test ``test_<function>_supports_autograd`` (public_tests/_autograd.py) that fails by name, and
a crash of autograd inside a lab names them. The in-place scan of tests/mutants/selective_scan.py
(right on every value, so it passes every value test) is the case that motivated it.
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import pytest
import torch

from seqlab.labs import LABS, slips
from seqlab.reference import load_reference
from tests.mutants.selective_scan import INPLACE_UNDER_AUTOGRAD

PUBLIC = Path(__file__).resolve().parents[2] / "public_tests"


@pytest.fixture(scope="module")
def autograd():
    import sys

    if str(PUBLIC) not in sys.path:  # its _gradcheck.py, as the student's conftest finds it
        sys.path.insert(0, str(PUBLIC))
    spec = importlib.util.spec_from_file_location("public_autograd", PUBLIC / "_autograd.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _mutant_scan():
    namespace = {"torch": torch, "math": math}
    exec(compile(INPLACE_UNDER_AUTOGRAD.source, "<in-place linear_scan>", "exec"), namespace)
    return namespace["linear_scan"]


def _scan_inputs(T=5):
    gen = torch.Generator().manual_seed(0)
    a = 0.9 * torch.rand(2, T, 3, generator=gen, dtype=torch.float64)
    return (
        a,
        torch.randn(2, T, 3, generator=gen, dtype=torch.float64),
        torch.randn(2, 3, generator=gen, dtype=torch.float64),
    )


def test_the_inplace_scan_is_right_on_values_but_fails_its_autograd_test(autograd):
    scan, a, b, h0 = _mutant_scan(), *_scan_inputs()
    reference = load_reference().selective_scan.linear_scan
    assert torch.allclose(scan(a, b, h0), reference(a, b, h0), rtol=1e-12, atol=1e-12)  # passes value tests
    with pytest.raises(pytest.fail.Exception) as failed:
        autograd.check_autograd("selective_scan.linear_scan", scan, (a, b, h0), {}, ("a", "b", "h0"), case="T=5")
    message = str(failed.value)
    assert message.startswith("selective_scan.linear_scan, case T=5: selective_scan.linear_scan must support autograd")
    assert "modified by an inplace operation" in message and "in-place write" in message, message


def test_the_reference_passes_its_autograd_tests(autograd):
    a, b, h0 = _scan_inputs()
    scan = load_reference().selective_scan.linear_scan
    autograd.check_autograd("selective_scan.linear_scan", scan, (a, b, h0), {}, ("a", "b", "h0"), case="T=5")


def test_a_cut_path_fails_against_finite_differences(autograd):
    def detached_a(a, b, h0=None):  # the gradient never reaches a: right values, zero gradient
        return load_reference().selective_scan.linear_scan(a.detach(), b, h0)

    a, b, h0 = _scan_inputs()
    with pytest.raises(pytest.fail.Exception, match="disagrees with finite differences"):
        autograd.check_autograd("selective_scan.linear_scan", detached_a, (a, b), {}, ("a", "b"), case="c")


@pytest.mark.parametrize("function", sorted({f for lab in LABS.values() for f in lab.through}))
def test_every_function_a_lab_trains_through_has_a_public_autograd_test(function):
    module, name = function.split(".")
    text = (PUBLIC / f"test_{module}.py").read_text(encoding="utf-8")
    assert re.search(
        rf'@checks\("{re.escape(function)}"\)\n(@pytest\.mark\.[^\n]+\n)*def test_{name}_supports_autograd\(', text
    ), f"public_tests/test_{module}.py has no test_{name}_supports_autograd marked @checks({function!r})"


def test_the_words_of_who_trains_through_what_are_the_labs_own():
    """The words "the recall lab trains through it" (seqlab/student/gradcheck.py, shipped to
    students, so it cannot read seqlab.labs) name exactly the labs that declare the function."""
    from seqlab.student.gradcheck import LABS as WORDS

    def short(lab):  # "lstm_gru.train_recall" -> "recall", "...train_selective_copy" -> "selective-copy"
        return lab.split(".train_")[1].replace("_", "-")

    declared = {f for lab in LABS.values() for f in lab.through}
    assert set(WORDS) == declared
    for function in declared:
        named = {short(lab) for lab, spec in LABS.items() if function in spec.through}
        said = {short(lab) for lab in LABS if re.search(rf"\b{short(lab)}\b", WORDS[function])}
        assert said == named, (function, WORDS[function])


def test_an_autograd_crash_in_a_lab_names_what_it_trains_through():
    crash = (
        "RuntimeError: one of the variables needed for gradient computation has been modified by an "
        "inplace operation: [torch.FloatTensor [32, 20, 16, 8]], which is output 0 of MulBackward0"
    )
    hint = slips.crash_hint(crash, LABS["selective_scan.train_selective_copy"].through)
    assert hint.startswith("an in-place write under autograd: ") and "selective_scan.linear_scan" in hint
    assert slips.crash_hint(crash) == ""  # a lab that declares nothing names nothing


@pytest.mark.bank
@pytest.mark.slow
def test_the_copy_lab_names_the_functions_it_trains_through_for_the_inplace_scan(tmp_path):
    """In the grader's process the in-place scan does not crash: the saved-tensor hooks of its
    watch skip autograd's version check, so the scan's gradients come out wrong and the lab's
    first update departs from the protocol. The hint then names the functions it trains through
    beside adam (the crash's own hint covers a process where autograd does raise)."""
    from seqlab.grading import grade_submission, grading_settings
    from tests.mutants import make_submission

    lab = "selective_scan.train_selective_copy"
    submission = make_submission(tmp_path / "submission", INPLACE_UNDER_AUTOGRAD)
    result = grade_submission(submission, grading_settings(seed=3, only=lab, labs=True))
    failed = [t for t in result.tests if t.function == lab and t.score < t.max_score]
    assert failed, "the in-place scan should cost the lab"
    for test in failed:
        crashed = "modified by an inplace operation" in test.output
        assert crashed or "first update is not the protocol's" in test.hint, (test.output, test.hint)
        assert "selective_scan.linear_scan" in test.hint, test.hint
