"""Optimizer questions: one update by hand for each rule of the W8 recap, clipping, and the
bias-correction and clipping factors as formulas.

Validity (``model.fair_draw``): every draw keeps each named mistake outside the tolerance of
the key and every key entry clearly away from 0; the rules each question adds are stated
above its generator. Gradients are numbered from 1 (``g_1`` is taken at ``w_0``), as Adam's
``t = 1, 2, ...`` in the notes, so no state is ever divided by before it holds a gradient.
"""

from __future__ import annotations

import sympy

from ..model import FOUR_DIGITS, NUMERIC, SYMBOLIC, Mistake, question
from ..safeexpr import Sym
from ._util import decs, floats, ref, t

LRS = (0.1, 0.05, 0.2, 0.5)


def _steps(rule, w, grads, **hyper):
    """Run ``rule`` (a reference update) over the given gradients; the final weights."""
    opt = ref("optimizers")
    fn = getattr(opt, rule)
    w, state = t(w), {}
    for g in grads:
        w, state = fn(w, t(g), state, **hyper)
    return floats(w)


# --------------------------------------------------------------------------- SGD


def _sample_sgd(rng):
    return {"w": decs(rng, 3, -2, 2), "dw": decs(rng, 3, -3, 3, nonzero=True), "lr": rng.choice(LRS)}


def _sgd_mistakes(p):
    return {
        "ascent": Mistake(
            [w + p["lr"] * g for w, g in zip(p["w"], p["dw"])],
            "this moves along the gradient (ascent); SGD subtracts lr times the gradient",
        )
    }


@question(
    "opt.sgd_step",
    kind=NUMERIC,
    title="One SGD step",
    sections=("W8 §1.1",),
    sample=_sample_sgd,
    tolerance=FOUR_DIGITS,
    mistakes=_sgd_mistakes,
    exercises=("optimizers.sgd",),
    answer_hint="three numbers, w1, w2, w3",
)
def sgd_step(p):
    return _steps("sgd", p["w"], [p["dw"]], lr=p["lr"])


# --------------------------------------------------------------------------- Momentum


def _sample_momentum(rng):
    return {
        "w": decs(rng, 2, -1, 1),
        "g1": decs(rng, 2, -2, 2, nonzero=True),
        "g2": decs(rng, 2, -2, 2, nonzero=True),
        "lr": rng.choice(LRS),
        "mu": rng.choice((0.9, 0.5, 0.8)),
    }


def _momentum_mistakes(p):
    plain = _steps("sgd", p["w"], [p["g1"], p["g2"]], lr=p["lr"])
    return {"no_momentum": Mistake(plain, "this is plain SGD twice: the second step must use v2 = mu*v1 + g2")}


@question(
    "opt.momentum_steps",
    kind=NUMERIC,
    title="Two steps of SGD with momentum",
    sections=("W8 §1.2",),
    sample=_sample_momentum,
    tolerance=FOUR_DIGITS,
    mistakes=_momentum_mistakes,
    exercises=("optimizers.sgd_momentum",),
    answer_hint="two numbers, the entries of w_2",
)
def momentum_steps(p):
    return _steps("sgd_momentum", p["w"], [p["g1"], p["g2"]], lr=p["lr"], momentum=p["mu"])


# --------------------------------------------------------------------------- AdaGrad


def _sample_adagrad(rng):
    return {
        "w": decs(rng, 2, -1, 1),
        "g1": decs(rng, 2, -2, 2, nonzero=True),
        "g2": decs(rng, 2, -2, 2, nonzero=True),
        "lr": rng.choice(LRS),
    }


def _adagrad_mistakes(p):
    # forgetting the accumulation: each step divides by |g| alone, a step of exactly lr
    w = list(p["w"])
    for g in (p["g1"], p["g2"]):
        w = [wi - p["lr"] * gi / abs(gi) for wi, gi in zip(w, g)]
    return {
        "no_accumulation": Mistake(
            w, "the denominator must use the running sum G = g1^2 + g2^2, not only the current gradient"
        )
    }


@question(
    "opt.adagrad_steps",
    kind=NUMERIC,
    title="Two AdaGrad steps",
    sections=("W8 §1.3",),
    sample=_sample_adagrad,
    tolerance=FOUR_DIGITS,
    mistakes=_adagrad_mistakes,
    exercises=("optimizers.adagrad",),
    answer_hint="two numbers, the entries of w_2",
)
def adagrad_steps(p):
    return _steps("adagrad", p["w"], [p["g1"], p["g2"]], lr=p["lr"], eps=1e-10)


# --------------------------------------------------------------------------- RMSProp


def _sample_rmsprop(rng):
    return {
        "w": decs(rng, 2, -1, 1),
        "g1": decs(rng, 2, -2, 2, nonzero=True),
        "g2": decs(rng, 2, -2, 2, nonzero=True),
        "lr": rng.choice((0.01, 0.05, 0.1)),
        "alpha": rng.choice((0.9, 0.5, 0.8)),
    }


def _rmsprop_mistakes(p):
    ada = _steps("adagrad", p["w"], [p["g1"], p["g2"]], lr=p["lr"], eps=1e-10)
    return {
        "adagrad_sum": Mistake(
            ada, "this accumulates g^2 like AdaGrad; RMSProp keeps the moving average s = alpha*s + (1-alpha)*g^2"
        )
    }


@question(
    "opt.rmsprop_steps",
    kind=NUMERIC,
    title="Two RMSProp steps",
    sections=("W8 §1.4",),
    sample=_sample_rmsprop,
    tolerance=FOUR_DIGITS,
    mistakes=_rmsprop_mistakes,
    exercises=("optimizers.rmsprop",),
    answer_hint="two numbers, the entries of w_2",
)
def rmsprop_steps(p):
    return _steps("rmsprop", p["w"], [p["g1"], p["g2"]], lr=p["lr"], alpha=p["alpha"], eps=1e-8)


# --------------------------------------------------------------------------- Adam


# Validity: always two steps. With one step the bias correction makes every entry move by
# exactly lr*sign(g_1) (up to eps), the answer of the ``sign_steps`` mistake: no Adam needed.
def _sample_adam(rng):
    steps = 2
    return {
        "w": decs(rng, 2, -1, 1),
        "grads": [decs(rng, 2, -2, 2, nonzero=True) for _ in range(steps)],
        "lr": rng.choice((0.1, 0.01, 0.05)),
        "beta1": 0.9,
        "beta2": 0.999,
        "steps": steps,
    }


def _adam_no_correction(p):
    w = list(p["w"])
    m = [0.0, 0.0]
    v = [0.0, 0.0]
    for g in p["grads"]:
        m = [p["beta1"] * mi + (1 - p["beta1"]) * gi for mi, gi in zip(m, g)]
        v = [p["beta2"] * vi + (1 - p["beta2"]) * gi * gi for vi, gi in zip(v, g)]
        w = [wi - p["lr"] * mi / (vi**0.5 + 1e-8) for wi, mi, vi in zip(w, m, v)]
    return w


def _adam_sign_steps(p):
    w = list(p["w"])
    for g in p["grads"]:
        w = [wi - p["lr"] * (1.0 if gi > 0 else -1.0) for wi, gi in zip(w, g)]
    return w


def _adam_mistakes(p):
    return {
        "no_bias_correction": Mistake(
            _adam_no_correction(p), "this skips the bias correction m_hat = m/(1-beta1^t), v_hat = v/(1-beta2^t)"
        ),
        "sign_steps": Mistake(
            _adam_sign_steps(p), "only the first step moves by lr*sign(g): at t = 2 the moments mix g_1 and g_2"
        ),
    }


@question(
    "opt.adam_steps",
    kind=NUMERIC,
    title="Adam with bias correction",
    sections=("W8 §1.5",),
    sample=_sample_adam,
    tolerance=FOUR_DIGITS,
    mistakes=_adam_mistakes,
    exercises=("optimizers.adam",),
    answer_hint="two numbers, the entries of w after the last step",
)
def adam_steps(p):
    return _steps("adam", p["w"], p["grads"], lr=p["lr"], betas=(p["beta1"], p["beta2"]), eps=1e-8)


# --------------------------------------------------------------------------- clipping


def _sample_clip(rng):
    g = decs(rng, 3, -4, 4, nonzero=True)
    return {"g": g, "max_norm": rng.choice((0.5, 1.0, 2.0, 5.0, 10.0))}


# Validity: ||g|| > tau (else the ``unclipped`` mistake is the key: nothing to clip), and some
# entry exceeds tau (else value clipping, the ``elementwise`` mistake, changes nothing).
def _clip_mistakes(p):
    m = p["max_norm"]
    return {
        "unclipped": Mistake(list(p["g"]), "the norm is above the threshold, so the gradient is rescaled"),
        "elementwise": Mistake(
            [max(-m, min(m, x)) for x in p["g"]],
            "this clips each entry to [-max_norm, max_norm] (value clipping), which "
            "changes the direction; norm clipping rescales the whole vector",
        ),
    }


@question(
    "opt.clip_vector",
    kind=NUMERIC,
    title="Gradient norm clipping",
    sections=("L5 §6.1", "L7-8 (Lecture 7) §四"),
    sample=_sample_clip,
    tolerance=FOUR_DIGITS,
    mistakes=_clip_mistakes,
    exercises=("optimizers.clip_grad_norm",),
    answer_hint="three numbers, the clipped gradient",
)
def clip_vector(p):
    clipped, _ = ref("optimizers").clip_grad_norm([t(p["g"])], p["max_norm"])
    return floats(clipped[0])


# --------------------------------------------------------------------------- symbolic


def _sample_bias(rng):
    return {"moment": rng.choice(("first", "second"))}


def _bias_symbols(p):
    beta = "beta1" if p["moment"] == "first" else "beta2"
    return (Sym(beta, 0.5, 0.99), Sym("t", 1, 12, integer=True))


def _bias_expr(p, form="right"):
    beta, tt = (s.sympy() for s in _bias_symbols(p))
    return {"right": 1 / (1 - beta**tt), "denominator": 1 - beta**tt, "no_power": 1 / (1 - beta)}[form]


@question(
    "opt.bias_correction",
    kind=SYMBOLIC,
    title="Adam's bias-correction factor",
    sections=("W8 §1.5",),
    sample=_sample_bias,
    symbols=_bias_symbols,
    exercises=("optimizers.adam",),
    mistakes=lambda p: {
        "denominator": Mistake(_bias_expr(p, "denominator"), "that is the denominator; the estimate is divided by it"),
        "no_power": Mistake(_bias_expr(p, "no_power"), "the correction depends on the step: beta^t, not beta"),
    },
    equivalents=lambda p: [f"(1 - {_bias_symbols(p)[0].name}^t)^(-1)", f"-1/({_bias_symbols(p)[0].name}**t - 1)"],
)
def bias_correction(p):
    return _bias_expr(p)


def _sample_clip_sym(rng, form):
    return {"form": form}


def _clip_symbols(p):
    out = (Sym("tau", 0.5, 1.0), Sym("n", 1.5, 4.0))
    return out + ((Sym("g", -2.0, 2.0),) if p["form"] == "component" else ())


def _clip_expr(p, form="right"):
    syms = [s.sympy() for s in _clip_symbols(p)]
    tau, n = syms[0], syms[1]
    factor = {"right": tau / n, "inverted": n / tau}[form]
    return factor * syms[2] if p["form"] == "component" else factor


@question(
    "opt.clip_scale",
    kind=SYMBOLIC,
    title="The clipping scale factor",
    sections=("L5 §6.1",),
    sample=_sample_clip_sym,
    symbols=_clip_symbols,
    exercises=("optimizers.clip_grad_norm",),
    forms=("factor", "component"),
    mistakes=lambda p: {
        "inverted": Mistake(_clip_expr(p, "inverted"), "inverted: the gradient must shrink to norm tau")
    },
    equivalents=lambda p: ["tau*n^(-1)", "1/(n/tau)"] if p["form"] == "factor" else ["g*tau*n^(-1)", "g/(n/tau)"],
)
def clip_scale(p):
    return _clip_expr(p)


def _adagrad_decay_symbols(p):
    return (Sym("lr", 0.001, 1.0), Sym("t", 1, 50, integer=True))


@question(
    "opt.adagrad_decay",
    kind=SYMBOLIC,
    title="AdaGrad's shrinking step",
    sections=("W8 §1.3", "W8 §1.4"),
    sample=lambda rng: {"g": rng.choice((0.5, 1, 2, 3))},
    symbols=_adagrad_decay_symbols,
    exercises=("optimizers.adagrad",),
    mistakes=lambda p: {
        "one_over_t": Mistake(
            _adagrad_decay_symbols(p)[0].sympy() / _adagrad_decay_symbols(p)[1].sympy(),
            "G grows like t*g^2, so its square root grows like sqrt(t)",
        )
    },
    equivalents=lambda p: ["lr*t^(-1/2)", "lr*sqrt(t)/t"],
)
def adagrad_decay(p):
    lr, tt = (s.sympy() for s in _adagrad_decay_symbols(p))
    return lr / sympy.sqrt(tt)
