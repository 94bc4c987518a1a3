"""Every argument of a lab function tried: a few steps of the student's function on the lab's
own inputs with some arguments changed (another ``kind``, float64 parameters, another ``lr`` or
``clip``, a text whose streams are a multiple of ``seq_len`` long), held against the reference's
replay of the same steps, with the differential replay's name for a departure.

A lab's own run keeps the arguments the task draws, and a loop that ignores one of them (a
learning rate written in, a ``kind`` that never reaches the readout, losses rebuilt in float32)
trains that run as well as a right one. These checks are short (``VARIANT_STEPS``) and run in
float64, where a right loop and the replay agree to reassociation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..grading.checks import SHAPE_RULE, GradeFailure
from .differential import HORIZON, diagnosis
from .replay import FIRST_STEPS_TOL
from .session import RETURNS, LabSession, returned_problem
from .slips import crash_hint

# Enough steps to see a departure at the first window wrap of a short text (step 2 or 3) and
# the differential replay's HORIZON past it: a slip is named on the same evidence as in the lab.
VARIANT_STEPS = HORIZON + 4


def _float64(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: _float64(v) for k, v in tree.items()}
    return tree.detach().to(torch.float64).clone() if tree.is_floating_point() else tree.clone()


def _copy(inputs: dict) -> dict:
    """``inputs`` with a fresh generator in the same state (a call must not move the one kept)."""
    gen = inputs.get("generator")
    if not isinstance(gen, torch.Generator):
        return dict(inputs)
    copy = torch.Generator()
    copy.set_state(gen.get_state())
    return {**inputs, "generator": copy}


def replayed(function: str, inputs: dict) -> torch.Tensor:
    """The reference's losses on ``inputs`` (float64 parameters, the generator's state copied)."""
    from ..reference import load_reference

    _, losses = load_reference()(function)(**_copy({**inputs, "params": _float64(inputs["params"])}))
    return losses.detach().to(torch.float64).reshape(-1)


def dtype_hint(params: Any, losses: Any, inputs: dict) -> str:
    """ "losses not in the dtype of params", where params_out came back right and the losses are
    a tensor of the right length in another floating dtype; else ""."""
    sent = next(iter(v for v in _leaves(inputs["params"]) if v.is_floating_point()), None)
    if sent is None or not isinstance(losses, torch.Tensor) or not losses.is_floating_point():
        return ""
    if losses.dtype == sent.dtype or losses.numel() != inputs["steps"]:
        return ""
    if returned_problem(params, torch.zeros(inputs["steps"], dtype=sent.dtype), inputs) is not None:
        return ""
    return (
        f"losses not in the dtype of params: losses came back {losses.dtype} from {sent.dtype} parameters. "
        "Keep each loss as the tensor it is (loss.detach()) and stack them, torch.stack(losses); "
        "torch.tensor of Python floats makes float32 whatever the parameters."
    )


def _leaves(tree: Any):
    if isinstance(tree, dict):
        for value in tree.values():
            yield from _leaves(value)
    elif isinstance(tree, torch.Tensor):
        yield tree


def check_variant(lab: LabSession, what: str, change: Callable[[dict], dict], steps: int = VARIANT_STEPS) -> None:
    """Run the student's lab function for ``steps`` steps on the lab's inputs as ``change`` gives
    them (``what`` says how, in the message), and fail unless its losses are the reference's."""
    grade, function = lab.grade, lab.lab.function
    inputs = {**change(dict(lab.run().child_inputs)), "steps": steps}
    grade.timeout = lab.lab.wall_limit_s
    try:
        params, losses = grade.unpack(grade.run(**_copy(inputs)).value, RETURNS)
    except GradeFailure as failure:  # a crash names what the lab trains through, as the lab's tests do
        culprits = lab._culprits()  # a used function that failed its own tests: named, no slip (charged once)
        failure.append(culprits)
        failure.hint = "" if culprits else failure.hint or crash_hint(failure.message, lab.lab.through)
        raise
    finally:
        grade.timeout = None
    problem = returned_problem(params, losses, inputs)
    if problem:
        culprits = lab._culprits()
        hint = "" if culprits else dtype_hint(params, losses, inputs)
        raise GradeFailure(f"{function}({what}): {problem}{culprits}", hint=hint, rule=SHAPE_RULE)
    got, want = losses.detach().to(torch.float64).reshape(-1), replayed(function, inputs)
    off = ~((got - want).abs() <= FIRST_STEPS_TOL.atol + FIRST_STEPS_TOL.rtol * want.abs())
    if not bool(off.any()):
        return
    step = int(off.nonzero()[0, 0])
    raise GradeFailure(
        f"{function}({what}): losses[{step}] is {float(got[step]):.6g}; the protocol, replayed from the same "
        f"initial parameters{' and generator state' if 'generator' in inputs else ''}, gives "
        f"{float(want[step]):.6g} ({int(off.sum())} of {steps} steps differ)" + lab._culprits(),
        hint="" if lab._culprits() else diagnosis(function, inputs, losses),
        rule="first-steps",
        details={"first_step": step, "seed": lab.run().seed},
    )


def _recall_kind(kind: str) -> Callable[[dict], dict]:
    def change(inputs: dict) -> dict:
        from .recall import initial_params
        from .tasktools import generator

        gen = generator(int(inputs["lag"]), "recall", f"variant {kind}")
        return {**inputs, "kind": kind, "params": initial_params(kind, gen, torch.float64), "lr": 5e-3}

    return change


def _float64_lr(lr: float) -> Callable[[dict], dict]:
    def change(inputs: dict) -> dict:
        return {**inputs, "params": _float64(inputs["params"]), "lr": lr}

    return change


def _short_text(inputs: dict) -> dict:
    """Streams of three windows' length exactly (a multiple of seq_len: the last window needs the
    token after it), another lr, and a clip above the gradients' norms (about 9 at the start):
    Adam does not see a clip that acts at every step (it scales every gradient), so a clip written
    in (the default 5.0, below those norms) shows only where the given one does not act."""
    B, S = int(inputs["batch_size"]), int(inputs["seq_len"])
    return {**inputs, "tokens": inputs["tokens"][: B * 3 * S], "lr": 3e-3, "clip": 20.0}


# Each lab's variants: (test name, what the message says was changed, the change). The learning
# rates differ from every default (adam's 1e-3, the functions' own) and from the labs' own, so a
# rate written in shows; float64 makes a right loop agree with the replay to ~1e-12.
VARIANTS: dict[str, list[tuple[str, str, Callable[[dict], dict]]]] = {
    "lstm_gru.train_recall": [
        ("lstm", 'kind="lstm", float64, lr=5e-3', _recall_kind("lstm")),
        ("rnn", 'kind="rnn", float64, lr=5e-3', _recall_kind("rnn")),
    ],
    "transformer.train_reverser": [("float64", "float64 parameters, lr=2e-3", _float64_lr(2e-3))],
    "selective_scan.train_selective_copy": [("float64", "float64 parameters, lr=2e-3", _float64_lr(2e-3))],
    "rnn.train_char_rnn": [("short_text", "streams 3 * seq_len long, lr=3e-3, clip=20", _short_text)],
}
VARIANT_WEIGHT = 0.2  # as the other protocol checks beside a lab's held-out test (grading_config.yaml)


def variant_tests(function: str) -> dict[str, Any]:
    """The graded tests of a lab's variants, ``test_<lab>_<name>``, for a grader's globals."""
    import pytest

    lab_name = function.split(".", 1)[1]
    found: dict[str, Any] = {}
    for name, what, change in VARIANTS[function]:

        def test(lab: LabSession, what: str = what, change: Callable[[dict], dict] = change) -> None:
            check_variant(lab, what, change)

        test.__name__ = test.__qualname__ = f"test_{lab_name}_{name}"
        title = f"{what}: its first {VARIANT_STEPS} steps are the protocol's"
        found[test.__name__] = pytest.mark.grades(function, title=title, weight=VARIANT_WEIGHT)(test)
    return found
