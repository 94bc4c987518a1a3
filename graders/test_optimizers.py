"""Hidden graders for exercises/optimizers.py (notes W8 §1, L5 §6.1).

Every update rule is run as a student would use it: five steps in a row, each step fed the
state the student's own previous step returned, and compared step by step with the reference
chain on the same gradients. Known wrong variants are computed here, on the same inputs, so a
failure can say which classic mistake it looks like.
"""

from __future__ import annotations

import pytest
import torch

from seqlab.grading.checks import Mistake, describe_case

grades = pytest.mark.grades
DTYPES = pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
STEPS = 5


def chain(step, w, grads, **hp):
    """[(w_1, state_1), ..., (w_k, state_k)] of an update rule fed its own state."""
    out, state = [], {}
    for dw in grads:
        w, state = step(w, dw, state, **hp)
        out.append((w, state))
    return out


def student_chain(grade, w, grads, **hp):
    out, state = [], {}
    for dw in grads:
        w_next, state = grade.unpack(grade.run(w, dw, state, **hp).value, ("w_next", "state_next"))
        out.append((w_next, state))
        w = w_next
    return out


def _readable(failure):
    """steps[2][1]['m'] -> state_next['m'] after step 3"""
    import re

    failure.message = re.sub(
        r"steps\[(\d+)\]\[(\d)\]((?:\['\w+'\])?)",
        lambda m: f"{('w_next', 'state_next')[int(m[2])]}{m[3]} after step {int(m[1]) + 1}",
        failure.message,
    )
    failure.args = (failure.message,)
    return failure


def check_chain(grade, make, dtype, shape, hp, variants, case_extra=""):
    w = make.randn(*shape, dtype=dtype)
    grads = [make.randn(*shape, dtype=dtype) for _ in range(STEPS)]
    case = describe_case(shape=tuple(shape), steps=STEPS, dtype=dtype, **hp) + case_extra
    got = student_chain(grade, w, grads, **hp)
    want = chain(grade.reference(grade.function), w, grads, **hp)
    # Mistakes only cost time when the answer is wrong.
    try:
        grade.expect(got, want, case=case, what="steps")
    except AssertionError as failure:
        if getattr(failure, "rule", ""):
            raise _readable(failure) from None
        try:
            grade.expect(
                got,
                want,
                case=case,
                what="steps",
                mistakes=[Mistake(name, chain(fn, w, grads, **hp), why) for name, fn, why in variants],
            )
        except AssertionError as named:
            raise _readable(named) from None


# --- known wrong variants ---------------------------------------------------------------------


def sgd_ascent(w, dw, state, lr=1e-2):
    return w + lr * dw, {}


def momentum_dampened(w, dw, state, lr=1e-2, momentum=0.9):
    v = momentum * state.get("velocity", torch.zeros_like(w)) + (1 - momentum) * dw
    return w - lr * v, {"velocity": v}


def momentum_lr_inside(w, dw, state, lr=1e-2, momentum=0.9):
    v = momentum * state.get("velocity", torch.zeros_like(w)) - lr * dw
    return w + v, {"velocity": v}


def adagrad_eps_inside(w, dw, state, lr=1e-2, eps=1e-10):
    G = state.get("sum_sq", torch.zeros_like(w)) + dw * dw
    return w - lr * dw / torch.sqrt(G + eps), {"sum_sq": G}


def adagrad_no_accumulation(w, dw, state, lr=1e-2, eps=1e-10):
    G = dw * dw
    return w - lr * dw / (torch.sqrt(G) + eps), {"sum_sq": G}


def rmsprop_eps_inside(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    s = alpha * state.get("sq_avg", torch.zeros_like(w)) + (1 - alpha) * dw * dw
    return w - lr * dw / torch.sqrt(s + eps), {"sq_avg": s}


def rmsprop_alpha_swapped(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    s = (1 - alpha) * state.get("sq_avg", torch.zeros_like(w)) + alpha * dw * dw
    return w - lr * dw / (torch.sqrt(s) + eps), {"sq_avg": s}


def _adam(w, dw, state, lr, betas, eps, *, correct=True, eps_inside=False, t_offset=0):
    b1, b2 = betas
    t = state.get("step", 0) + 1
    m = b1 * state.get("m", torch.zeros_like(w)) + (1 - b1) * dw
    v = b2 * state.get("v", torch.zeros_like(w)) + (1 - b2) * dw * dw
    tc = t + t_offset
    m_hat = m / (1 - b1**tc) if correct else m
    v_hat = v / (1 - b2**tc) if correct else v
    denom = torch.sqrt(v_hat + eps) if eps_inside else torch.sqrt(v_hat) + eps
    return w - lr * m_hat / denom, {"step": t, "m": m, "v": v}


def adam_no_bias_correction(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    return _adam(w, dw, state, lr, betas, eps, correct=False)


def adam_eps_inside(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    return _adam(w, dw, state, lr, betas, eps, eps_inside=True)


def adam_step_from_zero(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    # 1 - beta**0 = 0 would divide by zero; the usual slip is correcting with t+1 instead of t
    return _adam(w, dw, state, lr, betas, eps, t_offset=1)


def adam_betas_swapped(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    return _adam(w, dw, state, lr, (betas[1], betas[0]), eps)


# --- update rules -----------------------------------------------------------------------------


@grades("optimizers.sgd")
@DTYPES
def test_sgd_default(grade, make, dtype):
    """matches torch.optim.SGD, 5 steps, lr=1e-2"""
    check_chain(
        grade,
        make,
        dtype,
        (4, 3),
        {},
        [("gradient ascent", sgd_ascent, "the step must go against the gradient: w - lr * dw.")],
    )


@grades("optimizers.sgd")
def test_sgd_lr(grade, make):
    """matches torch.optim.SGD, 5 steps, lr=0.3, B=1 vector"""
    check_chain(
        grade,
        make,
        torch.float64,
        (1,),
        {"lr": 0.3},
        [("gradient ascent", sgd_ascent, "the step must go against the gradient: w - lr * dw.")],
    )


MOMENTUM_MISTAKES = [
    (
        "dampened momentum",
        momentum_dampened,
        "v = momentum*v + (1-momentum)*dw is an exponential average; PyTorch's SGD adds the raw gradient.",
    ),
    (
        "lr inside the velocity",
        momentum_lr_inside,
        "v = momentum*v - lr*dw moves w the same way, but the contract's state holds v = momentum*v + dw.",
    ),
]


@grades("optimizers.sgd_momentum")
@DTYPES
def test_momentum_default(grade, make, dtype):
    """matches torch.optim.SGD(momentum=0.9), 5 steps"""
    check_chain(grade, make, dtype, (3, 5), {}, MOMENTUM_MISTAKES)


@grades("optimizers.sgd_momentum")
def test_momentum_nondefault(grade, make):
    """matches torch.optim.SGD, 5 steps, lr=0.05, momentum=0.5"""
    check_chain(grade, make, torch.float64, (7,), {"lr": 0.05, "momentum": 0.5}, MOMENTUM_MISTAKES)


ADAGRAD_MISTAKES = [
    ("eps inside the square root", adagrad_eps_inside, "PyTorch adds eps after the square root: sqrt(G) + eps."),
    ("no accumulation", adagrad_no_accumulation, "AdaGrad sums every squared gradient so far: G = G + dw**2."),
]


@grades("optimizers.adagrad")
@DTYPES
def test_adagrad_default(grade, make, dtype):
    """matches torch.optim.Adagrad, 5 steps"""
    check_chain(grade, make, dtype, (2, 6), {}, ADAGRAD_MISTAKES)


@grades("optimizers.adagrad")
def test_adagrad_eps(grade, make):
    """matches torch.optim.Adagrad, 5 steps, lr=0.1, eps=1e-3, gradients of 1e-6"""
    w = make.randn(5, dtype=torch.float64)
    grads = [make.randn(5, dtype=torch.float64) * 1e-6 for _ in range(STEPS)]
    hp = {"lr": 0.1, "eps": 1e-3}
    got = student_chain(grade, w, grads, **hp)
    want = chain(grade.reference(grade.function), w, grads, **hp)
    try:
        grade.expect(
            got,
            want,
            case=describe_case(steps=STEPS, grad_scale=1e-6, **hp),
            what="steps",
            mistakes=[Mistake(n, chain(f, w, grads, **hp), e) for n, f, e in ADAGRAD_MISTAKES],
        )
    except AssertionError as failure:
        raise _readable(failure) from None


RMSPROP_MISTAKES = [
    ("eps inside the square root", rmsprop_eps_inside, "PyTorch adds eps after the square root: sqrt(s) + eps."),
    (
        "alpha and 1-alpha swapped",
        rmsprop_alpha_swapped,
        "the old average is kept with weight alpha: s = alpha*s + (1-alpha)*dw**2.",
    ),
]


@grades("optimizers.rmsprop")
@DTYPES
def test_rmsprop_default(grade, make, dtype):
    """matches torch.optim.RMSprop, 5 steps"""
    check_chain(grade, make, dtype, (3, 4), {}, RMSPROP_MISTAKES)


@grades("optimizers.rmsprop")
def test_rmsprop_nondefault(grade, make):
    """matches torch.optim.RMSprop, 5 steps, lr=0.02, alpha=0.9, eps=1e-3"""
    check_chain(grade, make, torch.float64, (6,), {"lr": 0.02, "alpha": 0.9, "eps": 1e-3}, RMSPROP_MISTAKES)


ADAM_MISTAKES = [
    (
        "Adam without bias correction",
        adam_no_bias_correction,
        "m and v start at zero, so early averages are too small; divide by (1 - beta**t).",
    ),
    ("eps inside the square root", adam_eps_inside, "PyTorch adds eps after the square root: sqrt(v_hat) + eps."),
    (
        "bias correction with t+1",
        adam_step_from_zero,
        "the step counter t is 1 on the first call: correct with 1 - beta**t, t = 1, 2, ...",
    ),
    ("betas swapped", adam_betas_swapped, "betas = (beta1 for m, beta2 for v); m uses 0.9, v uses 0.999."),
]


@grades("optimizers.adam", weight=2)
@DTYPES
def test_adam_default(grade, make, dtype):
    """matches torch.optim.Adam, 5 steps"""
    check_chain(grade, make, dtype, (4, 4), {}, ADAM_MISTAKES)


@grades("optimizers.adam", weight=2)
def test_adam_nondefault(grade, make):
    """matches torch.optim.Adam, 5 steps, lr=0.01, betas=(0.8, 0.99), eps=1e-3"""
    check_chain(grade, make, torch.float64, (5,), {"lr": 1e-2, "betas": (0.8, 0.99), "eps": 1e-3}, ADAM_MISTAKES)


@grades("optimizers.adam")
def test_adam_step_counter(grade, make):
    """state['step'] is a Python int counting calls"""
    w, dw = make.randn(3), make.randn(3)
    state = {}
    for expected_step in (1, 2, 3):
        w, state = grade.unpack(grade.run(w, dw, state).value, ("w_next", "state_next"))
        step = state.get("step") if isinstance(state, dict) else None
        assert isinstance(step, int) and not isinstance(step, bool) and step == expected_step, (
            f"optimizers.adam: after call {expected_step}, state['step'] should be the int {expected_step}, "
            f"got {step!r}"
        )


# --- clipping ---------------------------------------------------------------------------------


def clip_each(grads, max_norm):
    out = [g * min(1.0, max_norm / (float(g.norm()) + 1e-6)) for g in grads]
    return out, torch.linalg.vector_norm(torch.stack([g.norm() for g in grads]))


def clip_always(grads, max_norm):
    total = torch.linalg.vector_norm(torch.stack([g.norm() for g in grads]))
    return [g * (max_norm / (total + 1e-6)) for g in grads], total


CLIP_MISTAKES = [
    (
        "each gradient clipped by its own norm",
        clip_each,
        "the norm is global: one scale for all tensors, from the norm of everything together.",
    ),
    (
        "scaled even below the threshold",
        clip_always,
        "the scale is min(1, max_norm / (norm + 1e-6)): small gradients pass unchanged.",
    ),
]


@grades("optimizers.clip_grad_norm", weight=2)
@pytest.mark.parametrize("regime", ["above", "below"])
@DTYPES
def test_clip(grade, make, dtype, regime):
    """matches torch.nn.utils.clip_grad_norm_, norm above / below max_norm"""
    grads = [make.randn(3, 4, dtype=dtype), make.randn(5, dtype=dtype), make.randn(2, 2, 2, dtype=dtype)]
    norm = float(torch.linalg.vector_norm(torch.cat([g.reshape(-1) for g in grads])))
    max_norm = norm * (0.3 if regime == "above" else 2.0)
    grade.check(
        grads,
        max_norm,
        case=describe_case(regime=regime, dtype=dtype, max_norm=round(max_norm, 4)),
        mistakes=lambda g, m: [Mistake(n, f(g, m), e) for n, f, e in CLIP_MISTAKES],
    )


@grades("optimizers.clip_grad_norm")
def test_clip_single_tiny(grade, make):
    """one tensor of tiny gradients (1e-6) passes unchanged"""
    grads = [make.randn(4, 3) * 1e-6]
    grade.check(
        grads,
        1.0,
        case="one tensor, gradients ~1e-6, max_norm=1",
        mistakes=lambda g, m: [Mistake(n, f(g, m), e) for n, f, e in CLIP_MISTAKES],
    )
