"""Hidden graders for exercises/optimizers.py (notes W8 §1, L5 §6.1).

Every update rule is run as a student would use it: five steps in a row, each step fed the
state the student's own previous step returned, and compared step by step with the reference
chain on the same gradients. Known wrong variants are computed here, on the same inputs, so a
failure can say which classic mistake it looks like.
"""

from __future__ import annotations

import functools

import pytest
import torch

from seqlab.grading.checks import Case, GradeFailure, Mistake, from_table, matches

grades = pytest.mark.grades
DTYPES = pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
STEPS = 5
STEP = ("w_next", "state_next")  # what one call returns


def chain(step, w, grads, **hp):
    """[(w_1, state_1), ..., (w_k, state_k)] of an update rule fed its own state."""
    out, state = [], {}
    for dw in grads:
        w, state = step(w, dw, state, **hp)
        out.append((w, state))
    return out


def check_chain(grade, make, shape, mistakes, *, dtype=torch.float64, grad_scale=None, **hp):
    """The student's rule run for STEPS steps on gradients of ``shape``, each step fed the state
    its previous step returned, checked step by step against the reference's chain; the
    mistakes' chains run on the same gradients only when a step is wrong."""
    case = Case(make, shape=shape, steps=STEPS, dtype=dtype, grad_scale=grad_scale, **hp)
    w = case.randn("shape")
    grads = [case.randn("shape", scale=grad_scale or 1.0) for _ in range(STEPS)]
    got, w_next, state = [], w, {}
    for dw in grads:
        w_next, state = grade.unpack(grade.run(w_next, dw, state, **hp).value, STEP)
        got.append((w_next, state))
    want = chain(grade.reference(grade.function), w, grads, **hp)
    wrong_chains = functools.cache(
        lambda: [(name, [values(out) for out in chain(fn, w, grads, **hp)], why) for name, fn, why in mistakes]
    )
    # Every w_next right with a state that is not: the student's own state carries the right
    # values (it is bookkeeping, a key's scale or layout), so the test earns the half for w.
    mine = [values(step) for step in got]
    w_right = all(matches(g[0], t[0], grade.tolerance(t[0])) for g, t in zip(got, want))
    for step, (got_step, want_step) in enumerate(zip(got, want)):
        try:
            grade.check(
                value=values(got_step),
                expected=values(want_step),
                returns=STEP,
                case=f"{case}, after step {step + 1}",
                mistakes=lambda step=step: [Mistake(name, out[step], why) for name, out, why in wrong_chains()],
                rewrite=(lambda: [values(out) for out in chain(grade.reference(grade.function), w, grads, **hp)], mine),
                before=(want[step - 1][0] if step else w, None),
            )
        except GradeFailure as failure:
            if w_right:
                grade.award(0.5)
                failure.append(" (every step's w_next is right, only state_next is not: half the points)")
            raise


def values(step):
    """One step's (w_next, state_next) without the state's step counter: the chain checks the
    values, test_adam_step_counter the counter, so a counter off by one with every value right
    loses that test's points only (each fact is checked once)."""
    w_next, state = step
    return w_next, ({k: v for k, v in state.items() if k != "step"} if isinstance(state, dict) else state)


# --- known wrong variants ---------------------------------------------------------------------


def sgd_ascent(w, dw, state, lr=1e-2):
    return w + lr * dw, {}


def momentum_dampened(w, dw, state, lr=1e-2, momentum=0.9):
    v = momentum * state.get("velocity", torch.zeros_like(w)) + (1 - momentum) * dw
    return w - lr * v, {"velocity": v}


def momentum_dampened_first_raw(w, dw, state, lr=1e-2, momentum=0.9):
    # torch.optim.SGD(dampening=momentum): the first step stores the raw gradient, later ones
    # average it in with weight (1 - momentum)
    v = momentum * state["velocity"] + (1 - momentum) * dw if "velocity" in state else dw.clone()
    return w - lr * v, {"velocity": v}


def momentum_lr_inside(w, dw, state, lr=1e-2, momentum=0.9):
    v = momentum * state.get("velocity", torch.zeros_like(w)) - lr * dw
    return w + v, {"velocity": v}


def adagrad_eps_inside(w, dw, state, lr=1e-2, eps=1e-10):
    G = state.get("sum_sq", torch.zeros_like(w)) + dw * dw
    return w - lr * dw / torch.sqrt(G + eps), {"sum_sq": G}


def adagrad_old_accumulator(w, dw, state, lr=1e-2, eps=1e-10):
    G = state.get("sum_sq", torch.zeros_like(w))
    return w - lr * dw / (torch.sqrt(G) + eps), {"sum_sq": G + dw * dw}


def adagrad_no_accumulation(w, dw, state, lr=1e-2, eps=1e-10):
    G = dw * dw
    return w - lr * dw / (torch.sqrt(G) + eps), {"sum_sq": G}


def rmsprop_eps_inside(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    s = alpha * state.get("sq_avg", torch.zeros_like(w)) + (1 - alpha) * dw * dw
    return w - lr * dw / torch.sqrt(s + eps), {"sq_avg": s}


def rmsprop_alpha_swapped(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    s = (1 - alpha) * state.get("sq_avg", torch.zeros_like(w)) + alpha * dw * dw
    return w - lr * dw / (torch.sqrt(s) + eps), {"sq_avg": s}


def _adam(w, dw, state, lr, betas, eps, *, correct=True, eps_inside=False, t_offset=0, store_hat=False):
    b1, b2 = betas
    t = state.get("step", 0) + 1
    m = b1 * state.get("m", torch.zeros_like(w)) + (1 - b1) * dw
    v = b2 * state.get("v", torch.zeros_like(w)) + (1 - b2) * dw * dw
    tc = t + t_offset
    m_hat = m / (1 - b1**tc) if correct else m
    v_hat = v / (1 - b2**tc) if correct else v
    denom = torch.sqrt(v_hat + eps) if eps_inside else torch.sqrt(v_hat) + eps
    return w - lr * m_hat / denom, ({"step": t, "m": m_hat, "v": v_hat} if store_hat else {"step": t, "m": m, "v": v})


def adam_stores_corrected(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    return _adam(w, dw, state, lr, betas, eps, store_hat=True)


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

SGD_MISTAKES = [("gradient ascent", sgd_ascent, "the step must go against the gradient: w - lr * dw.")]


@grades("optimizers.sgd", title="matches torch.optim.SGD, 5 steps, lr=1e-2")
@DTYPES
def test_sgd_default(grade, make, dtype):
    check_chain(grade, make, (4, 3), SGD_MISTAKES, dtype=dtype)


@grades("optimizers.sgd", title="matches torch.optim.SGD, 5 steps, lr=0.3, B=1 vector")
def test_sgd_lr(grade, make):
    check_chain(grade, make, (1,), SGD_MISTAKES, lr=0.3)


MOMENTUM_MISTAKES = [
    (
        "dampened momentum",
        momentum_dampened,
        "v = momentum*v + (1-momentum)*dw is an exponential average; PyTorch's SGD adds the raw gradient.",
    ),
    (
        "dampened momentum",
        momentum_dampened_first_raw,
        "v = momentum*v + (1-momentum)*dw is an exponential average (SGD's dampening=momentum); PyTorch's "
        "default SGD adds the raw gradient.",
    ),
    (
        "lr inside the velocity",
        momentum_lr_inside,
        "v = momentum*v - lr*dw moves w the same way, but the contract's state holds v = momentum*v + dw.",
    ),
]

ADAGRAD_MISTAKES = [
    ("eps inside the square root", adagrad_eps_inside, "PyTorch adds eps after the square root: sqrt(G) + eps."),
    ("no accumulation", adagrad_no_accumulation, "AdaGrad sums every squared gradient so far: G = G + dw**2."),
    (
        "accumulator used before this step's dw**2 is added",
        adagrad_old_accumulator,
        "add this step's squared gradient first, then divide by its root: G = G + dw**2, then "
        "w - lr * dw / (sqrt(G) + eps) (the first step then divides by |dw|, not by eps).",
    ),
]

RMSPROP_MISTAKES = [
    ("eps inside the square root", rmsprop_eps_inside, "PyTorch adds eps after the square root: sqrt(s) + eps."),
    (
        "alpha and 1-alpha swapped",
        rmsprop_alpha_swapped,
        "the old average is kept with weight alpha: s = alpha*s + (1-alpha)*dw**2.",
    ),
]

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
    (
        "bias-corrected moments stored as the state",
        adam_stores_corrected,
        "m_hat and v_hat are used for this step only; the state keeps the raw averages m and v, which the "
        "next step averages into (storing m_hat scales the state by 1/(1 - beta**t)).",
    ),
]

# The update rules' tests, each five steps fed its own state:
# test name: (function, title, weight, shape of w, mistakes, hyperparameters);
# hyperparameters None: the defaults, once in float64 and once in float32.
UPDATE_RULE_TESTS = {
    "test_sgd_default": ("optimizers.sgd", "matches torch.optim.SGD, 5 steps, lr=1e-2", 1, (4, 3), SGD_MISTAKES, None),
    "test_sgd_lr": (
        "optimizers.sgd",
        "matches torch.optim.SGD, 5 steps, lr=0.3, B=1 vector",
        1,
        (1,),
        SGD_MISTAKES,
        {"lr": 0.3},
    ),
    "test_momentum_default": (
        "optimizers.sgd_momentum",
        "matches torch.optim.SGD(momentum=0.9), 5 steps",
        1,
        (3, 5),
        MOMENTUM_MISTAKES,
        None,
    ),
    "test_momentum_nondefault": (
        "optimizers.sgd_momentum",
        "matches torch.optim.SGD, 5 steps, lr=0.05, momentum=0.5",
        1,
        (7,),
        MOMENTUM_MISTAKES,
        {"lr": 0.05, "momentum": 0.5},
    ),
    "test_adagrad_default": (
        "optimizers.adagrad",
        "matches torch.optim.Adagrad, 5 steps",
        1,
        (2, 6),
        ADAGRAD_MISTAKES,
        None,
    ),
    "test_adagrad_eps": (
        "optimizers.adagrad",
        "matches torch.optim.Adagrad, 5 steps, lr=0.1, eps=1e-3, gradients of 1e-6",
        1,
        (5,),
        ADAGRAD_MISTAKES,
        {"grad_scale": 1e-6, "lr": 0.1, "eps": 1e-3},
    ),
    "test_rmsprop_default": (
        "optimizers.rmsprop",
        "matches torch.optim.RMSprop, 5 steps",
        1,
        (3, 4),
        RMSPROP_MISTAKES,
        None,
    ),
    "test_rmsprop_nondefault": (
        "optimizers.rmsprop",
        "matches torch.optim.RMSprop, 5 steps, lr=0.02, alpha=0.9, eps=1e-3",
        1,
        (6,),
        RMSPROP_MISTAKES,
        {"lr": 0.02, "alpha": 0.9, "eps": 1e-3},
    ),
    "test_adam_default": ("optimizers.adam", "matches torch.optim.Adam, 5 steps", 2, (4, 4), ADAM_MISTAKES, None),
    "test_adam_nondefault": (
        "optimizers.adam",
        "matches torch.optim.Adam, 5 steps, lr=0.01, betas=(0.8, 0.99), eps=1e-3",
        2,
        (5,),
        ADAM_MISTAKES,
        {"lr": 1e-2, "betas": (0.8, 0.99), "eps": 1e-3},
    ),
}


def update_rule_test(name, function, title, weight, shape, mistakes, hyperparameters):
    if hyperparameters is None:

        @DTYPES
        def test(grade, make, dtype):
            check_chain(grade, make, shape, mistakes, dtype=dtype)

    else:

        def test(grade, make):
            check_chain(grade, make, shape, mistakes, **hyperparameters)

    test.__name__ = test.__qualname__ = name
    return grades(function, title=title, weight=weight)(test)


globals().update({name: update_rule_test(name, *spec) for name, spec in UPDATE_RULE_TESTS.items()})


@grades("optimizers.adam", title="state['step'] is a Python int counting calls")
def test_adam_step_counter(grade, make):
    w, dw = make.randn(3), make.randn(3)
    state = {}
    for expected_step in (1, 2, 3):
        w, state = grade.unpack(grade.run(w, dw, state).value, STEP)
        step = state.get("step") if isinstance(state, dict) else None
        off = (
            f" (off by {step - expected_step:+d}: it counts the calls, 1 after the first)"
            if isinstance(step, int)
            else ""
        )
        assert isinstance(step, int) and not isinstance(step, bool) and step == expected_step, (
            f"optimizers.adam: after call {expected_step}, state['step'] should be the int {expected_step}, "
            f"got {step!r}{off}"
        )


# --- clipping ---------------------------------------------------------------------------------


def clip_each(grads, max_norm):
    out = [g * min(1.0, max_norm / (float(g.norm()) + 1e-6)) for g in grads]
    return out, torch.linalg.vector_norm(torch.stack([g.norm() for g in grads]))


def clip_always(grads, max_norm):
    total = torch.linalg.vector_norm(torch.stack([g.norm() for g in grads]))
    return [g * (max_norm / (total + 1e-6)) for g in grads], total


def clip_norm_after(grads, max_norm):
    total = torch.linalg.vector_norm(torch.stack([g.norm() for g in grads]))
    clipped = [g * min(1.0, max_norm / (float(total) + 1e-6)) for g in grads]
    return clipped, torch.linalg.vector_norm(torch.stack([g.norm() for g in clipped]))


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
    (
        "norm returned after clipping",
        clip_norm_after,
        "the returned norm is the total norm of the gradients as given, measured BEFORE clipping (as "
        "clip_grad_norm_ returns it), so a caller can log how large they were.",
    ),
]


@grades(
    "optimizers.clip_grad_norm", title="matches torch.nn.utils.clip_grad_norm_, norm above / below max_norm", weight=2
)
@pytest.mark.parametrize("regime", ["above", "below"])
@DTYPES
def test_clip(grade, make, dtype, regime):
    case = Case(make, regime=regime, dtype=dtype)
    grads = [case.randn(3, 4), case.randn(5), case.randn(2, 2, 2)]
    norm = float(torch.linalg.vector_norm(torch.cat([g.reshape(-1) for g in grads])))
    max_norm = norm * (0.3 if regime == "above" else 2.0)
    grade.check(grads, max_norm, case=case.note(f"max_norm={round(max_norm, 4)}"), mistakes=from_table(CLIP_MISTAKES))


@grades("optimizers.clip_grad_norm", title="one tensor of tiny gradients (1e-6) passes unchanged")
def test_clip_single_tiny(grade, make):
    grade.check(
        [make.randn(4, 3, scale=1e-6)],
        1.0,
        case="one tensor, gradients ~1e-6, max_norm=1",
        mistakes=from_table(CLIP_MISTAKES),
    )


# --- every argument tried: two parameters stepped in turn, each with its own state --------------
# A lab steps every parameter once per step, each with the state adam returned for it last. An
# adam that keeps anything outside the state it is given (a step count, the last moments, a
# cache by shape) passes every one-tensor chain above and mixes the parameters here.


@grades("optimizers.adam", title="two parameters stepped in turn, each with its own state, 3 steps", weight=0.5)
def test_adam_two_parameters_in_turn(grade, make):
    case = Case(make, first=(3, 4), second=(5,), steps=3, lr=1e-2, dtype=torch.float64)
    start = [case.randn("first"), case.randn("second")]
    grads = [[case.randn("first"), case.randn("second")] for _ in range(3)]
    reference = grade.reference(grade.function)
    got, want = [(w, {}) for w in start], [(w, {}) for w in start]
    for step, pair in enumerate(grads):
        for i, dw in enumerate(pair):  # parameter 0, then parameter 1, at every step
            got[i] = grade.unpack(grade.run(got[i][0], dw, got[i][1], lr=1e-2).value, STEP)
            want[i] = reference(want[i][0], dw, want[i][1], lr=1e-2)
            grade.check(
                value=values(got[i]),
                expected=values(want[i]),
                returns=STEP,
                case=f"{case}, parameter {i} ({'first' if i == 0 else 'second'}) after step {step + 1}",
            )
