"""Public tests of exercises/optimizers.py: shapes and dtypes, and small worked examples.

Every worked example below is small enough to redo on paper; the comment above it shows how.
"""

from __future__ import annotations

import math

import pytest
import torch
from _check import call, check_close, check_tensor, randn, unpack

from exercises import optimizers

checks = pytest.mark.checks
FLOATS = pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
T = torch.float64

RULES = {  # rule -> (extra hyperparameters, state keys after one step)
    "sgd": ({"lr": 0.1}, set()),
    "sgd_momentum": ({"lr": 0.1, "momentum": 0.9}, {"velocity"}),
    "adagrad": ({"lr": 0.1}, {"sum_sq"}),
    "rmsprop": ({"lr": 0.1, "alpha": 0.9}, {"sq_avg"}),
    "adam": ({"lr": 0.1}, {"step", "m", "v"}),
}


def two_steps(name, w, grads, case, **hp):
    """Run an update rule once per gradient, feeding it its own state; returns [(w_1, state_1), ...]."""
    fn, qualname = getattr(optimizers, name), f"optimizers.{name}"
    out, state = [], {}
    for dw in grads:
        w, state = unpack(
            qualname, call(qualname, fn, w, dw, state, case=case, **hp), ("w_next", "state_next"), case=case
        )
        if not isinstance(state, dict):
            pytest.fail(
                f"{qualname}, case {case}: state_next should be a dict, got {type(state).__name__}", pytrace=False
            )
        out.append((w, state))
    return out


@pytest.mark.parametrize("name", [pytest.param(n, marks=checks(f"optimizers.{n}")) for n in RULES])
@FLOATS
def test_update_rules_keep_shape_dtype_and_state_keys(name, dtype):
    qualname = f"optimizers.{name}"
    hp, keys = RULES[name]
    gen = torch.Generator().manual_seed(0)
    w = randn(gen, 3, 4, dtype=dtype)
    case = f"w of shape (3, 4), {str(dtype)[6:]}, two steps"
    for step, (w_next, state) in enumerate(two_steps(name, w, [randn(gen, 3, 4, dtype=dtype)] * 2, case, **hp), 1):
        check_tensor(qualname, w_next, case=case, shape=(3, 4), dtype=dtype, what=f"w after step {step}")
        if set(state) != keys:
            pytest.fail(
                f"{qualname}, case {case}: state keys after step {step} are {sorted(state)}, expected {sorted(keys)}",
                pytrace=False,
            )
        for key in keys - {"step"}:
            check_tensor(qualname, state[key], case=case, shape=(3, 4), dtype=dtype, what=f"state[{key!r}]")
        if "step" in keys and (type(state["step"]) is not int or state["step"] != step):
            pytest.fail(
                f"{qualname}, case {case}: state['step'] after step {step} should be the Python int "
                f"{step}, got {state['step']!r}",
                pytrace=False,
            )


@checks("optimizers.sgd")
def test_sgd_worked_example():
    # w - lr * dw = [1 - 0.1 * 0.5, -2 - 0.1 * 4] = [0.95, -2.4]
    case = "w=[1, -2], dw=[0.5, 4], lr=0.1"
    w_next, state = unpack(
        "optimizers.sgd",
        call(
            "optimizers.sgd",
            optimizers.sgd,
            torch.tensor([1.0, -2.0], dtype=T),
            torch.tensor([0.5, 4.0], dtype=T),
            {},
            lr=0.1,
            case=case,
        ),
        ("w_next", "state_next"),
        case=case,
    )
    check_close("optimizers.sgd", w_next, [0.95, -2.4], case=case)
    assert state == {}, f"optimizers.sgd, case {case}: SGD keeps no state, expected {{}}, got {state!r}"


@checks("optimizers.sgd_momentum")
def test_sgd_momentum_worked_example():
    # step 1: v = dw = [1, -2] (PyTorch starts the velocity at the first gradient); w = 0 - 0.1 v = [-0.1, 0.2]
    # step 2: v = 0.9 [1, -2] + [1, 1] = [1.9, -0.8]; w = [-0.1, 0.2] - 0.1 v = [-0.29, 0.28]
    case = "w=[0, 0], dw=[1, -2] then [1, 1], lr=0.1, momentum=0.9"
    (w1, s1), (w2, s2) = two_steps(
        "sgd_momentum",
        torch.zeros(2, dtype=T),
        [torch.tensor([1.0, -2.0], dtype=T), torch.tensor([1.0, 1.0], dtype=T)],
        case,
        lr=0.1,
        momentum=0.9,
    )
    check_close("optimizers.sgd_momentum", w1, [-0.1, 0.2], case=case, what="w after step 1")
    check_close("optimizers.sgd_momentum", s2["velocity"], [1.9, -0.8], case=case, what="velocity after step 2")
    check_close("optimizers.sgd_momentum", w2, [-0.29, 0.28], case=case, what="w after step 2")


@checks("optimizers.adagrad")
def test_adagrad_worked_example():
    # step 1: G = 2^2 = 4, w = 1 - 0.1 * 2 / sqrt(4) = 0.9
    # step 2: G = 4 + 1.5^2 = 6.25, w = 0.9 - 0.1 * 1.5 / 2.5 = 0.84   (eps=1e-10 changes nothing visible)
    case = "w=[1], dw=[2] then [1.5], lr=0.1"
    (w1, _), (w2, s2) = two_steps(
        "adagrad",
        torch.tensor([1.0], dtype=T),
        [torch.tensor([2.0], dtype=T), torch.tensor([1.5], dtype=T)],
        case,
        lr=0.1,
    )
    check_close("optimizers.adagrad", w1, [0.9], case=case, what="w after step 1")
    check_close("optimizers.adagrad", s2["sum_sq"], [6.25], case=case, what="sum_sq after step 2")
    check_close("optimizers.adagrad", w2, [0.84], case=case, what="w after step 2")


@checks("optimizers.rmsprop")
def test_rmsprop_worked_example():
    # step 1: s = 0.5 * 0 + 0.5 * 2^2 = 2, w = 1 - 0.1 * 2 / sqrt(2) = 1 - 0.1 * sqrt(2)
    # step 2: s = 0.5 * 2 + 0.5 * 2^2 = 3, w = w1 - 0.1 * 2 / sqrt(3)
    case = "w=[1], dw=[2] twice, lr=0.1, alpha=0.5"
    (w1, s1), (w2, s2) = two_steps(
        "rmsprop", torch.tensor([1.0], dtype=T), [torch.tensor([2.0], dtype=T)] * 2, case, lr=0.1, alpha=0.5
    )
    w1_want = 1 - 0.1 * math.sqrt(2)
    check_close("optimizers.rmsprop", s1["sq_avg"], [2.0], case=case, what="sq_avg after step 1")
    check_close("optimizers.rmsprop", w1, [w1_want], case=case, what="w after step 1")
    check_close("optimizers.rmsprop", s2["sq_avg"], [3.0], case=case, what="sq_avg after step 2")
    check_close("optimizers.rmsprop", w2, [w1_want - 0.1 * 2 / math.sqrt(3)], case=case, what="w after step 2")
    # alpha weighs the old average: with alpha = 0.9, s = 0.9 * 0 + 0.1 * 2^2 = 0.4, then
    # 0.9 * 0.4 + 0.1 * 4 = 0.76 (the weights swapped would give 3.6 and 3.96)
    case = "w=[1], dw=[2] twice, lr=0.1, alpha=0.9"
    (w1, s1), (_, s2) = two_steps(
        "rmsprop", torch.tensor([1.0], dtype=T), [torch.tensor([2.0], dtype=T)] * 2, case, lr=0.1, alpha=0.9
    )
    check_close("optimizers.rmsprop", s1["sq_avg"], [0.4], case=case, what="sq_avg after step 1")
    check_close("optimizers.rmsprop", w1, [1 - 0.1 * 2 / math.sqrt(0.4)], case=case, what="w after step 1")
    check_close("optimizers.rmsprop", s2["sq_avg"], [0.76], case=case, what="sq_avg after step 2")
    # each coordinate has its own average: dw = [2, 0] gives s = 0.5 * [4, 0] = [2, 0] and
    # w = [1 - 0.1 * 2 / sqrt(2), 1] (one average over the coordinates would give s = 1, w[0] = 0.8)
    case = "w=[1, 1], dw=[2, 0], lr=0.1, alpha=0.5"
    ((w1, s1),) = two_steps(
        "rmsprop", torch.tensor([1.0, 1.0], dtype=T), [torch.tensor([2.0, 0.0], dtype=T)], case, lr=0.1, alpha=0.5
    )
    check_close("optimizers.rmsprop", s1["sq_avg"], [2.0, 0.0], case=case, what="sq_avg after step 1")
    check_close("optimizers.rmsprop", w1, [1 - 0.1 * math.sqrt(2), 1.0], case=case, what="w after step 1")
    case = "w=[1], dw=[2], lr=0.1, alpha=0.5, eps=1"
    ((w1, _),) = two_steps(
        "rmsprop", torch.tensor([1.0], dtype=T), [torch.tensor([2.0], dtype=T)], case, lr=0.1, alpha=0.5, eps=1.0
    )
    check_close("optimizers.rmsprop", w1, [1 - 0.1 * 2 / (math.sqrt(2) + 1)], case=case, what="w after step 1")


@checks("optimizers.adam")
def test_adam_worked_example():
    # With the same gradient g at every step, bias correction makes m_hat = g and v_hat = g^2 exactly,
    # so every step moves each coordinate by lr * sign(g) (up to eps):
    #   step 1: m = 0.1 g = [0.05, -0.3], v = 0.001 g^2 = [0.00025, 0.009], w = [1, -1] - 0.1 sign(g) = [0.9, -0.9]
    #   step 2: w = [0.8, -0.8], state["step"] == 2
    # Without bias correction step 1 would move by 0.1 * 0.05 / sqrt(0.00025) = 0.316 instead.
    case = "w=[1, -1], dw=[0.5, -3] twice, lr=0.1, default betas"
    g = torch.tensor([0.5, -3.0], dtype=T)
    (w1, s1), (w2, s2) = two_steps("adam", torch.tensor([1.0, -1.0], dtype=T), [g, g], case, lr=0.1)
    check_close("optimizers.adam", s1["m"], [0.05, -0.3], case=case, what="m after step 1")
    check_close("optimizers.adam", s1["v"], [0.00025, 0.009], case=case, what="v after step 1")
    check_close("optimizers.adam", w1, [0.9, -0.9], case=case, what="w after step 1")
    check_close("optimizers.adam", w2, [0.8, -0.8], case=case, what="w after step 2")
    assert s2["step"] == 2, f"optimizers.adam, case {case}: state['step'] after two steps should be 2"


@checks("optimizers.clip_grad_norm")
def test_clip_grad_norm_worked_example():
    # The global norm of [3, 0] and [[4]] is sqrt(9 + 0 + 16) = 5. With max_norm=1 every gradient is
    # multiplied by 1 / (5 + 1e-6): [0.6, 0] and [[0.8]] (to 1e-6); with max_norm=10 nothing changes.
    qualname = "optimizers.clip_grad_norm"
    grads = [torch.tensor([3.0, 0.0], dtype=T), torch.tensor([[4.0]], dtype=T)]
    for max_norm, want in ((1.0, ([0.6, 0.0], [[0.8]])), (10.0, ([3.0, 0.0], [[4.0]]))):
        case = f"grads [3, 0] and [[4]], max_norm={max_norm:g}"
        clipped, total = unpack(
            qualname,
            call(qualname, optimizers.clip_grad_norm, grads, max_norm, case=case),
            ("clipped", "total_norm"),
            case=case,
        )
        if not isinstance(clipped, (list, tuple)) or len(clipped) != 2:
            pytest.fail(
                f"{qualname}, case {case}: clipped should be a list of 2 tensors, got {clipped!r}", pytrace=False
            )
        check_tensor(qualname, total, case=case, shape=(), dtype=T, what="total_norm")
        check_close(qualname, total, 5.0, case=case, what="total_norm")
        check_close(qualname, clipped[0], want[0], case=case, what="clipped[0]")
        check_close(qualname, clipped[1], want[1], case=case, what="clipped[1]")


@checks("optimizers.clip_grad_norm")
@FLOATS
def test_clip_grad_norm_shapes_and_dtype(dtype):
    qualname = "optimizers.clip_grad_norm"
    gen = torch.Generator().manual_seed(1)
    grads = [randn(gen, 3, 4, dtype=dtype), randn(gen, 5, dtype=dtype)]
    case = f"grads of shapes (3, 4) and (5,), {str(dtype)[6:]}, max_norm=0.5"
    clipped, total = unpack(
        qualname, call(qualname, optimizers.clip_grad_norm, grads, 0.5, case=case), ("clipped", "total_norm"), case=case
    )
    check_tensor(qualname, clipped[0], case=case, shape=(3, 4), dtype=dtype, what="clipped[0]")
    check_tensor(qualname, clipped[1], case=case, shape=(5,), dtype=dtype, what="clipped[1]")
    check_tensor(qualname, total, case=case, shape=(), dtype=dtype, what="total_norm")


@checks("optimizers.adam")
def test_adam_two_parameters_in_turn_keep_their_own_states():
    """A lab steps every parameter once per step, each with the state adam returned for it last
    (the grader checks the same, against torch.optim.Adam): stepping two parameters in turn must
    give each the steps it gets alone, so adam keeps nothing outside the state it is given."""
    qualname, case = "optimizers.adam", "w (3, 4) and u (5,) stepped in turn, 3 steps each, lr=0.01"
    gen = torch.Generator().manual_seed(11)
    start = [randn(gen, 3, 4), randn(gen, 5)]
    grads = [[randn(gen, 3, 4), randn(gen, 5)] for _ in range(3)]
    alone = [two_steps("adam", start[i], [pair[i] for pair in grads], case, lr=1e-2) for i in (0, 1)]
    turns = [(start[0], {}), (start[1], {})]
    for step, pair in enumerate(grads):
        for i, dw in enumerate(pair):
            w, state = turns[i]
            turns[i] = unpack(
                qualname,
                call(qualname, optimizers.adam, w, dw, state, case=case, lr=1e-2),
                ("w_next", "state_next"),
                case=case,
            )
            check_close(
                qualname,
                turns[i][0],
                alone[i][step][0],
                case=f"{case}, parameter {i} after step {step + 1}",
                what="w_next",
            )
