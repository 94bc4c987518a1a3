"""The forbidden Python-level APIs are recorded at run time however the student's code reached
them (seqlab/student/apiwatch.py): whatever spelling hides ``torch.optim.SGD`` from the static
scan, the graded call's report names it, and the grader voids the function in its usual words."""

from __future__ import annotations

import textwrap

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqlab.student import apiwatch
from seqlab.student.guards import CallWatch
from seqlab.student.invoke import invoke
from seqlab.student.loader import contract_objects, load_submission, unload

HEADER = "import torch\nimport torch.optim\nfrom functools import partial\n\n"
SGD_BODY = """
def sgd(w, dw, state, lr=1e-2):
    Opt = {expr}
    p = w.detach().clone()
    p.grad = dw.detach().clone()
    Opt([p], lr=lr, foreach=False).step()
    return p.detach(), {{}}
"""


def graded_call(tmp_path, source: str, name: str, args: tuple) -> dict:
    """``exercises/optimizers.py`` with ``source``, loaded through the subset as the grader loads
    it, and ``optimizers.<name>(*args)`` called as a graded call: the call's report."""
    exercises = tmp_path / "exercises"
    exercises.mkdir(exist_ok=True)
    (exercises / "optimizers.py").write_text(source)
    try:
        modules, errors = load_submission(exercises, ("optimizers",))
        assert "optimizers" not in errors, errors
        functions = contract_objects(modules, errors)
        return invoke(
            functions[f"optimizers.{name}"],
            args,
            {},
            graded=f"optimizers.{name}",
            modules=modules,
            functions=functions,
            recording=[],
            tolerances={},
            kernels=False,
            output_limit=4096,
        )
    finally:
        unload()


def run_sgd(tmp_path, prelude: str, expr: str) -> dict:
    """``optimizers.sgd`` written with ``Opt = expr`` after ``prelude``, called once: its report."""
    w, dw = torch.tensor([1.0, -2.0], dtype=torch.float64), torch.tensor([0.5, 0.25], dtype=torch.float64)
    source = HEADER + prelude + "\n" + SGD_BODY.format(expr=expr)
    report = graded_call(tmp_path, source, "sgd", (w, dw, {}, 0.1))
    assert torch.allclose(report["value"][0], w - 0.1 * dw)  # the spelling really ran torch's SGD
    return report


# --- spellings, built inside out: each step hides the expression one more way ------------------

_BASES = (
    ("", "torch.optim.SGD"),
    ("from torch import optim as _optim\n", "_optim.SGD"),
    ("from torch.optim import SGD as _S\n", "_S"),
    ("import torch.optim as _o\n", "_o.SGD"),
)


def _hide(step: str, n: int, prelude: str, expr: str) -> tuple[str, str]:
    """One more layer around ``expr`` (its module-level prelude grows): returns (prelude, expr)."""
    name = f"_h{n}"
    layers = {
        "alias": (f"{name} = {expr}\n", name),
        "tuple": (f"({name},) = ({expr},)\n", name),
        "pair": (f"{name}, _x{n} = {expr}, 0\n", name),
        "annotated": (f"{name}: object = {expr}\n", name),
        "class-attribute": (f"class {name.upper()}:\n    kind = {expr}\n", f"{name.upper()}.kind"),
        "lambda": (f"{name} = lambda: {expr}\n", f"{name}()"),
        "partial": (f"{name} = partial({expr})\n", name),
        "dict": (f'{name} = {{"k": {expr}}}\n', f'{name}["k"]'),
        "helper": (f"def {name}():\n    return {expr}\n", f"{name}()"),
        "default": (f"def {name}(o={expr}):\n    return o\n", f"{name}()"),
        "staticmethod": (
            f"class {name.upper()}:\n    @staticmethod\n    def get():\n        return {expr}\n",
            f"{name.upper()}.get()",
        ),
        "list": (f"{name} = [{expr}]\n", f"{name}[0]"),
        "match": (
            f"def {name}():\n    match torch:\n        case object(optim=object(SGD=found)):\n"
            f"            return found\n",
            f"{name}()",
        ),
    }
    # a class pattern reads torch.optim.SGD itself: it starts a spelling afresh, ``expr`` unused
    add, new = layers[step]
    return prelude + add, new


STEPS = (
    "alias", "tuple", "pair", "annotated", "class-attribute", "lambda", "partial", "dict", "helper",
    "default", "staticmethod", "list", "match",
)  # fmt: skip


@st.composite
def spellings(draw) -> tuple[str, str]:
    prelude, expr = draw(st.sampled_from(_BASES))
    steps = draw(st.lists(st.sampled_from(STEPS), min_size=1, max_size=4))
    for n, step in enumerate(steps):
        prelude, expr = _hide(step, n, prelude, expr)
    return prelude, expr


# --- the checks ------------------------------------------------------------------------------


# torch.optim's first use imports torch._dynamo (~4 s), so every SGD check is a bank test.
@pytest.mark.bank
def test_a_partial_over_a_class_attribute_is_recorded_by_its_public_name(tmp_path):
    prelude, expr = _hide("partial", 1, *_hide("class-attribute", 0, "", "torch.optim.SGD"))
    ops = run_sgd(tmp_path, prelude, expr)["ops"]
    assert ops.get("torch.optim.SGD", 0) >= 1, ops
    assert "torch.optim.Optimizer" not in ops  # the base class's __init__ is named by the instance's


@pytest.mark.bank  # ~40 generated submissions loaded through the subset: a few seconds
@settings(deadline=None, database=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spellings())
def test_every_spelling_of_torch_optim_sgd_is_recorded(tmp_path, spelling):
    prelude, expr = spelling
    ops = run_sgd(tmp_path, prelude, expr)["ops"]
    assert ops.get("torch.optim.SGD", 0) >= 1, (prelude, expr, sorted(ops))


def test_clipping_by_a_staticmethod_over_a_tuple_alias_is_recorded(tmp_path):
    """The spellings of the blind bank that no static scan follows, in one module: a tuple-unpacked
    alias inside a staticmethod, and the contract function bound to it (no def to scan)."""
    source = HEADER + textwrap.dedent(
        """
        (_CLIP,) = (torch.nn.utils.clip_grad_norm_,)


        class _Tools:
            @staticmethod
            def clip(grads, max_norm):
                ps = [g.detach().clone() for g in grads]
                for p, g in zip(ps, grads):
                    p.grad = g.detach().clone()
                total = _CLIP(ps, max_norm, foreach=False)
                return [p.grad for p in ps], total


        clip_grad_norm = _Tools.clip
        """
    )
    grads = [torch.full((3,), 2.0, dtype=torch.float64)]
    report = graded_call(tmp_path, source, "clip_grad_norm", (grads, 1.0))
    assert report["ops"]["torch.nn.utils.clip_grad_norm_"] == 1, report["ops"]
    assert torch.allclose(report["value"][0][0].norm(), torch.tensor(1.0, dtype=torch.float64))


def test_clipping_from_any_alias_is_recorded_and_a_bare_call_is_not():
    """An alias bound before the call (as a student module binds it at import) holds the wrapper;
    outside a graded call the wrapper only passes through."""
    clip = torch.nn.utils.clip_grad_norm_
    p = torch.ones(3)
    p.grad = torch.full((3,), 4.0)
    clip([p], 1.0, foreach=False)  # no graded call: nothing is recorded, the real clipping runs
    assert torch.allclose(p.grad.norm(), torch.tensor(1.0))
    watch = CallWatch(kernels=False)
    with watch.active():
        clip([p], 1.0, foreach=False)
        (lambda: torch.nn.utils.clip_grad_value_([p], 0.1))()
    ops = watch.report()["ops"]
    assert ops["torch.nn.utils.clip_grad_norm_"] == 1 and ops["torch.nn.utils.clip_grad_value_"] == 1
    assert watch.report()["op_count"] == sum(watch.ops.counts.values())  # the APIs are not in op_count


def test_paused_trusted_work_records_no_api():
    watch = CallWatch(kernels=False)
    with watch.active(), watch.paused():
        torch.nn.LSTM(2, 3)(torch.randn(1, 1, 2))
    assert not any(name.startswith("torch.nn.") for name in watch.report()["ops"])


def test_a_complex_tensor_made_is_named_with_its_dtype():
    """Complex-step differentiation needs a complex tensor; a complex result is named whatever
    made it (a literal 1j, a cast, a factory), and a real computation names none."""
    watch = CallWatch(kernels=False)
    x = torch.randn(3, dtype=torch.float64)
    with watch.active():
        (x * 2).sum()
        assert not any(apiwatch.COMPLEX in name for name in watch.report()["ops"])
        z = x + 1e-30j
        imag = (z * z).imag
    assert imag.dtype == torch.float64
    ops = watch.report()["ops"]
    assert ops[f"torch.complex128 ({apiwatch.COMPLEX})"] >= 2, ops


def test_install_is_once_and_leaves_no_way_back_to_the_original():
    apiwatch.install()
    apiwatch.install()
    step = torch.optim.SGD.step
    assert not hasattr(torch.nn.utils.clip_grad_norm_, "__wrapped__")
    assert getattr(torch.nn.utils.clip_grad_norm_, "__watched_api__", "") == "torch.nn.utils.clip_grad_norm_"
    assert torch.optim.SGD.step is step


def test_the_recorded_name_voids_the_function_in_the_graders_words():
    """The grader turns the recorded name into its usual void, matched by the config's pattern."""
    from seqlab.config import load_config
    from seqlab.grading.checks import Grade, Voided

    rules = load_config().rules("optimizers.sgd")
    grade = Grade("optimizers.sgd", None, lambda name: None, {}, rules.forbidden_match)
    with pytest.raises(Voided, match=r"optimizers.sgd called torch.optim.SGD, .*rule 'torch.optim.\*'"):
        grade._void_if_forbidden({"torch.optim.SGD": 1})
    bptt = Grade("rnn.rnn_bptt", None, lambda name: None, {}, load_config().rules("rnn.rnn_bptt").forbidden_match)
    with pytest.raises(Voided, match=r"rnn.rnn_bptt called torch.complex128 \(a complex tensor was made\)"):
        bptt._void_if_forbidden({f"torch.complex128 ({apiwatch.COMPLEX})": 3})


def test_the_released_tests_carry_the_same_recorder():
    from pathlib import Path

    public = Path(__file__).resolve().parents[2] / "public_tests" / "_apiwatch.py"
    assert public.resolve() == Path(apiwatch.__file__).resolve()
    assert "seqlab" not in public.read_text().lower()  # it ships: the leak check refuses the name


def test_honest_code_in_a_watched_call_is_recorded_as_nothing_forbidden():
    watch = CallWatch(kernels=False)
    w = torch.randn(4, dtype=torch.float64)
    with watch.active():
        (w - 0.1 * w.sign()).clone()
    assert not any(name.startswith(("torch.optim", "torch.nn.", "torch.autograd.")) for name in watch.report()["ops"])


@pytest.mark.bank  # a release and a pytest run of two of its test modules: ~30 s
@pytest.mark.slow
def test_the_students_own_tests_void_in_the_graders_words(tmp_path):
    """The released public tests record the same APIs and complex tensors: an alias the static
    scan cannot follow (the blind bank's tuple unpacking) and a complex step made by a literal
    (no complex name in the source) fail the student's own tests with the grader's message."""
    import subprocess
    import sys

    from seqlab.cli import main
    from tests.attacks.blind_integrity_bank import BANK, patched_module

    repo = tmp_path / "repo"
    assert main(["release", str(repo)]) == 0
    attacks = {a.name: a for a in BANK}
    (repo / "exercises" / "optimizers.py").write_text(patched_module(attacks["tuple-unpacking-hides-an-alias"]))
    complex_step = patched_module(attacks["complex-step-gradients-without-autograd"])
    complex_step = complex_step.replace("v.to(torch.complex128)", "v + 0j").replace(".to(h.dtype)", ".type_as(h)")
    assert "complex" not in complex_step.split("def rnn_bptt", 1)[1].split("\ndef ", 1)[0]
    (repo / "exercises" / "rnn.py").write_text(complex_step)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_optimizers.py", "tests/test_rnn.py",
         "-k", "adam or bptt"],
        cwd=repo, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:]
    for message in (
        "optimizers.adam called torch.optim.Adam, which this exercise forbids (rule 'torch.optim.*'); the function scores 0",
        f"rnn.rnn_bptt called torch.complex128 ({apiwatch.COMPLEX}), which this exercise forbids (rule 'torch.complex*')",
    ):
        assert message in done.stdout, (message, done.stdout[-3000:])
