"""Optimizer questions: one update by hand for each rule of the W8 recap, clipping, and the
bias-correction and clipping factors as formulas.

Validity (``model.fair_draw``): every draw keeps each named mistake outside the tolerance of
the key and every key entry clearly away from 0; the rules each question adds are stated
above its generator. Gradients are numbered from 1 (``g_1`` is taken at ``w_0``), as Adam's
``t = 1, 2, ...`` in the notes, so no state is ever divided by before it holds a gradient.
"""

from __future__ import annotations

from typing import Any

import sympy

from seqlab.exam.bank.declare import (
    cites,
    equivalents,
    exercises,
    forms,
    formula,
    mistake,
    numeric,
    own_entries,
    skips_work,
    text,
    work,
)
from seqlab.exam.bank.helpers import THREE_FIGURES_RELATIVE, decs, floats, ref, t
from seqlab.exam.model import FOUR_DIGITS
from seqlab.exam.safeexpr import Sym

LRS = (0.1, 0.05, 0.2, 0.5)


def _steps(rule, w, grads, **hyper):
    """Run ``rule`` (a reference update) over the given gradients; the final weights."""
    opt = ref("optimizers")
    fn = getattr(opt, rule)
    w, state = t(w), {}
    for g in grads:
        w, state = fn(w, t(g), state, **hyper)
    return floats(w)


def _two_steps(lrs, **hyper):
    """The sampler of a two-step question: w_0 and the gradients g_1, g_2 (two entries each), a
    learning rate from ``lrs``, then each hyperparameter from its choices."""

    def sample(rng):
        p = {
            "w": decs(rng, 2, -1, 1),
            "g1": decs(rng, 2, -2, 2, nonzero=True),
            "g2": decs(rng, 2, -2, 2, nonzero=True),
            "lr": rng.choice(lrs),
        }
        return p | {name: rng.choice(choices) for name, choices in hyper.items()}

    return sample


def _two(rule, p, **hyper):
    """w_2: two steps of ``rule`` from the two-step question's w_0, g_1, g_2 and lr."""
    return _steps(rule, p["w"], [p["g1"], p["g2"]], lr=p["lr"], **hyper)


# --------------------------------------------------------------------------- SGD


def _sample_sgd(rng):
    return {"w": decs(rng, 3, -2, 2), "dw": decs(rng, 3, -3, 3, nonzero=True), "lr": rng.choice(LRS)}


def _ascent(p):
    return [w + p["lr"] * g for w, g in zip(p["w"], p["dw"])]


@numeric("opt.sgd_step", _sample_sgd, FOUR_DIGITS, hint="three numbers, w1, w2, w3")
@text(
    r"""
{% block question %}
Plain SGD updates the parameters with $w_{t+1} = w_t - \eta\, \nabla_w L(w_t)$.
With learning rate $\eta = {{ p.lr|num }}$, current parameters $w_t = {{ p.w|vec }}$ and gradient
$\nabla_w L(w_t) = {{ p.dw|vec }}$, what is $w_{t+1}$?
{% endblock %}
{% block solution %}
$w_{t+1} = w_t - {{ p.lr|num }} \cdot {{ p.dw|vec }} = {{ answer|vec }}$.
{% endblock %}
"""
)
@cites("W8 §1.1")
@exercises("optimizers.sgd")
@mistake("ascent", "this moves along the gradient (ascent); SGD subtracts lr times the gradient", _ascent)
def sgd_step(p):
    """One SGD step."""
    return _steps("sgd", p["w"], [p["dw"]], lr=p["lr"])


# --------------------------------------------------------------------------- two steps: momentum, AdaGrad, RMSProp


# The fifth audit: a small learning rate moved w by 0.05-0.07, so the relative tolerance on w_2
# was 7-12% of the move on one paper and 0.2-0.8% on the others, and a wrong update scored half
# there only. A two-step optimizer draw is kept when its tolerance is at most MOVE_SHARE of how
# far each entry of w moved.
MOVE_SHARE = 0.05


def _loose_on_the_move(p: dict, a: Any) -> bool:
    """The tolerance is loose on the move, or (the sixth audit) a gradient's two entries are equal."""
    equal = any(len(set(p[g])) < len(p[g]) for g in ("g1", "g2"))
    return equal or any(0.01 * abs(w2) > MOVE_SHARE * abs(w2 - w0) for w0, w2 in zip(p["w"], a))


# the two-step questions' degenerate draws (momentum and RMSProp): why, and the rule
LOOSE_ON_THE_MOVE = (
    f"the tolerance on w_2 is over {MOVE_SHARE:.0%} of how far w moved (a wrong update scores), or a"
    " gradient's entries are equal",
    _loose_on_the_move,
)


@numeric(
    "opt.momentum_steps",
    _two_steps(LRS, mu=(0.9, 0.5, 0.8)),
    THREE_FIGURES_RELATIVE,
    hint="two numbers, the entries of w_2",
)
@text(
    r"""
{% block question %}
SGD with momentum in PyTorch's form keeps a velocity $v$ with $v_0 = 0$ and, for $t = 1, 2, \dots$
($g_t$ is the gradient at $w_{t-1}$), computes
$$v_t = \mu\, v_{t-1} + g_t, \qquad w_t = w_{t-1} - \eta\, v_t.$$
With $\eta = {{ p.lr|num }}$, $\mu = {{ p.mu|num }}$, $w_0 = {{ p.w|vec }}$ and the gradients
$g_1 = {{ p.g1|vec }}$ and $g_2 = {{ p.g2|vec }}$, what is $w_2$? Intermediate results rounded to 3 significant figures are accepted.
{% endblock %}
{% block solution %}
$v_1 = g_1$, $w_1 = w_0 - \eta v_1$; $v_2 = \mu v_1 + g_2$, $w_2 = w_1 - \eta v_2 = {{ answer|vec }}$.
{% endblock %}
"""
)
@skips_work(*LOOSE_ON_THE_MOVE)
# w1 = w0 - lr g1 (2 per entry), v2 = mu v1 + g2 (2), w2 = w1 - lr v2 (2); 2 entries: 12; w1, v2 written
@work(lambda v: (12, 4))
@cites("W8 §1.2")
@exercises("optimizers.sgd_momentum")
@mistake("no_momentum", "this is plain SGD twice: the second step must use v2 = mu*v1 + g2", lambda p: _two("sgd", p))
@own_entries()
def momentum_steps(p):
    """Two steps of SGD with momentum."""
    return _two("sgd_momentum", p, momentum=p["mu"])


def _unit_steps(p):
    """AdaGrad without the accumulation: each step divides by |g| alone, a step of exactly lr."""
    w = list(p["w"])
    for g in (p["g1"], p["g2"]):
        w = [wi - p["lr"] * gi / abs(gi) for wi, gi in zip(w, g)]
    return w


@numeric("opt.adagrad_steps", _two_steps(LRS), FOUR_DIGITS, hint="two numbers, the entries of w_2")
@text(
    r"""
{% block question %}
AdaGrad accumulates squared gradients, $G_t = G_{t-1} + g_t \odot g_t$ with $G_0 = 0$, and updates
$w_t = w_{t-1} - \eta\, g_t / (\sqrt{G_t} + \epsilon)$ element-wise ($\epsilon = 10^{-10}$, negligible here),
for $t = 1, 2, \dots$, where $g_t$ is the gradient at $w_{t-1}$.
With $\eta = {{ p.lr|num }}$, $w_0 = {{ p.w|vec }}$, $g_1 = {{ p.g1|vec }}$ and $g_2 = {{ p.g2|vec }}$,
what is $w_2$?
{% endblock %}
{% block solution %}
$G_1 = g_1^2$, $w_1 = w_0 - \eta\, g_1/|g_1|$; $G_2 = g_1^2 + g_2^2$,
$w_2 = w_1 - \eta\, g_2/\sqrt{G_2} = {{ answer|vec }}$.
{% endblock %}
"""
)
@cites("W8 §1.3")
@exercises("optimizers.adagrad")
@mistake(
    "no_accumulation",
    "the denominator must use the running sum G = g1^2 + g2^2, not only the current gradient",
    _unit_steps,
)
@own_entries()
def adagrad_steps(p):
    """Two AdaGrad steps."""
    return _two("adagrad", p, eps=1e-10)


@numeric(
    "opt.rmsprop_steps",
    # no 0.01: two steps of it move w by about 0.06, which 1% of w_2 cannot tell from a wrong
    # rule (MOVE_SHARE, above)
    # no alpha of 0.5: alpha and 1 - alpha are then equal, and swapping them (a common slip)
    # gives the key on that paper only (the seventh audit)
    _two_steps((0.05, 0.1, 0.2), alpha=(0.9, 0.7, 0.8)),
    THREE_FIGURES_RELATIVE,
    hint="two numbers, the entries of w_2",
)
@text(
    r"""
{% block question %}
RMSProp keeps a moving average of squared gradients and updates element-wise, for $t = 1, 2, \dots$
($g_t$ is the gradient at $w_{t-1}$):
$$s_t = \alpha\, s_{t-1} + (1-\alpha)\, g_t \odot g_t, \qquad w_t = w_{t-1} - \eta\, g_t / (\sqrt{s_t} + \epsilon),$$
with $s_0 = 0$ and $\epsilon = 10^{-8}$. The new average $s_t$ is computed before it divides $g_t$.
With $\eta = {{ p.lr|num }}$, $\alpha = {{ p.alpha|num }}$, $w_0 = {{ p.w|vec }}$, $g_1 = {{ p.g1|vec }}$
and $g_2 = {{ p.g2|vec }}$, what is $w_2$? Intermediate results rounded to 3 significant figures are accepted.
{% endblock %}
{% block solution %}
$s_1 = (1-\alpha) g_1^2$, $w_1 = w_0 - \eta g_1/\sqrt{s_1}$; $s_2 = \alpha s_1 + (1-\alpha) g_2^2$,
$w_2 = w_1 - \eta g_2 / \sqrt{s_2} = {{ answer|vec }}$.
{% endblock %}
"""
)
@skips_work(*LOOSE_ON_THE_MOVE)
# s1 = (1-a) g1^2 (1 + 2 per entry), w1 = w0 - lr g1/sqrt(s1) (4), s2 (4), w2 (4): 29; s1, w1, s2 written
@work(lambda v: (29, 6))
@cites("W8 §1.4")
@exercises("optimizers.rmsprop")
@mistake(
    "adagrad_sum",
    "this accumulates g^2 like AdaGrad; RMSProp keeps the moving average s = alpha*s + (1-alpha)*g^2",
    adagrad_steps,
)
@own_entries()
def rmsprop_steps(p):
    """Two RMSProp steps."""
    return _two("rmsprop", p, alpha=p["alpha"], eps=1e-8)


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


@numeric("opt.adam_steps", _sample_adam, FOUR_DIGITS, hint="two numbers, the entries of w after the last step")
@text(
    r"""
{% block question %}
Adam with $\beta_1 = {{ p.beta1|num }}$, $\beta_2 = {{ p.beta2|num }}$, $\epsilon = 10^{-8}$ and
$\eta = {{ p.lr|num }}$ starts from $m_0 = v_0 = 0$ and, at step $t = 1, 2, \dots$, computes
$m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t$, $v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2$, their
bias-corrected estimates $\hat m_t$ and $\hat v_t$ (as in the notes), and
$w_t = w_{t-1} - \eta\, \hat m_t / (\sqrt{\hat v_t} + \epsilon)$.
Starting from $w_0 = {{ p.w|vec }}$ with the gradients ($g_t$ is the gradient at $w_{t-1}$)
{% for g in p.grads %}$g_{{ loop.index }} = {{ g|vec }}${{ " and " if not loop.last }}{% endfor %},
what is $w_{{ p.steps }}$?
{% endblock %}
{% block solution %}
{% if p.steps == 1 %}At $t = 1$ the bias correction gives $\hat m_1 = g_1$ and $\hat v_1 = g_1^2$, so each
entry moves by $\eta\,\mathrm{sign}(g_1)$ (up to $\epsilon$).{% else %}Apply the update twice; the bias
correction divides $m_2$ by $1-\beta_1^2$ and $v_2$ by $1-\beta_2^2$.{% endif %} $w_{{ p.steps }} = {{ answer|vec }}$.
{% endblock %}
"""
)
@cites("W8 §1.5")
@exercises("optimizers.adam")
@mistake(
    "no_bias_correction",
    "this skips the bias correction m_hat = m/(1-beta1^t), v_hat = v/(1-beta2^t)",
    _adam_no_correction,
)
@mistake(
    "sign_steps", "only the first step moves by lr*sign(g): at t = 2 the moments mix g_1 and g_2", _adam_sign_steps
)
@own_entries()
def adam_steps(p):
    """Adam with bias correction."""
    return _steps("adam", p["w"], p["grads"], lr=p["lr"], betas=(p["beta1"], p["beta2"]), eps=1e-8)


# --------------------------------------------------------------------------- clipping


def _sample_clip(rng):
    g = decs(rng, 3, -4, 4, nonzero=True)
    return {"g": g, "max_norm": rng.choice((0.5, 1.0, 2.0, 5.0, 10.0))}


def _value_clipped(p):
    m = p["max_norm"]
    return [max(-m, min(m, x)) for x in p["g"]]


# Validity: ||g|| > tau (else the ``unclipped`` mistake is the key: nothing to clip), and some
# entry exceeds tau (else value clipping, the ``elementwise`` mistake, changes nothing).
@numeric("opt.clip_vector", _sample_clip, FOUR_DIGITS, hint="three numbers, the clipped gradient")
@text(
    r"""
{% block question %}
Gradient norm clipping (as in the notes) with threshold $\tau = {{ p.max_norm|num }}$ on the
Euclidean norm $\lVert g \rVert_2$. What is the clipped gradient for $g = {{ p.g|vec }}$?
{% endblock %}
{% block solution %}
$\lVert g \rVert_2 = \sqrt{\textstyle\sum_i g_i^2}$; the factor is $\min(1, \tau/\lVert g\rVert_2)$;
the clipped gradient is ${{ answer|vec }}$ (same direction, norm at most $\tau$).
{% endblock %}
"""
)
# n squares, n-1 sums, a root, tau/norm, the comparison, n products
@work(lambda v: (3 * len(v.answer) + 2, 2))
@cites("L5 §6.1", "L7-8 (Lecture 7) §四")
@exercises("optimizers.clip_grad_norm")
@mistake("unclipped", "the norm is above the threshold, so the gradient is rescaled", lambda p: list(p["g"]))
@mistake(
    "elementwise",
    "this clips each entry to [-max_norm, max_norm] (value clipping), which "
    "changes the direction; norm clipping rescales the whole vector",
    _value_clipped,
)
@own_entries()
def clip_vector(p):
    """Gradient norm clipping."""
    clipped, _ = ref("optimizers").clip_grad_norm([t(p["g"])], p["max_norm"])
    return floats(clipped[0])


# --------------------------------------------------------------------------- symbolic


def _sample_bias(rng):
    return {"moment": rng.choice(("first", "second"))}


def _bias_symbols(p):
    beta = "beta1" if p["moment"] == "first" else "beta2"
    return (Sym(beta, 0.5, 0.99), Sym("t", 1, 12, integer=True))


@formula("opt.bias_correction", _sample_bias, _bias_symbols)
@text(
    r"""
{% block question %}
{% set b = "beta1" if p.moment == "first" else "beta2" %}
In Adam, the {{ p.moment }}-moment estimate {{ "$m_t$" if p.moment == "first" else "$v_t$" }} starts at 0
and follows {{ "$m_t = \\beta_1 m_{t-1} + (1-\\beta_1) g_t$" if p.moment == "first" else "$v_t = \\beta_2 v_{t-1} + (1-\\beta_2) g_t^2$" }}.
The bias-corrected estimate is {{ "$\\hat m_t = c \\cdot m_t$" if p.moment == "first" else "$\\hat v_t = c \\cdot v_t$" }}.
Give $c$ as a formula in `{{ b }}` and the step number `t` ($t = 1, 2, \dots$).
{% endblock %}
{% block solution %}
With a constant gradient the estimate after $t$ steps is $(1-\beta^t)$ times the true moment
(a geometric sum), so $c = {{ answer|latex }}$.
{% endblock %}
"""
)
# the geometric sum (1-b) sum b^(t-k) = 1 - b^t, then its inverse: five algebra steps
@work(lambda v: (5, 1))
@cites("W8 §1.5")
@exercises("optimizers.adam")
@equivalents(lambda p: [f"(1 - {_bias_symbols(p)[0].name}^t)^(-1)", f"-1/({_bias_symbols(p)[0].name}**t - 1)"])
@mistake("denominator", "that is the denominator; the estimate is divided by it", form="denominator")
@mistake("no_power", "the correction depends on the step: beta^t, not beta", form="no_power")
def bias_correction(p, form="right"):
    """Adam's bias-correction factor."""
    beta, tt = (s.sympy() for s in _bias_symbols(p))
    return {"right": 1 / (1 - beta**tt), "denominator": 1 - beta**tt, "no_power": 1 / (1 - beta)}[form]


def _sample_clip_sym(rng, form):
    return {"form": form}


def _clip_symbols(p):
    out = (Sym("tau", 0.5, 1.0), Sym("n", 1.5, 4.0))
    return out + ((Sym("g", -2.0, 2.0),) if p["form"] == "component" else ())


@formula("opt.clip_scale", _sample_clip_sym, _clip_symbols)
@text(
    r"""
{% block question %}
A gradient $g$ has norm `n` $= \lVert g \rVert_2$, larger than the clipping threshold `tau`.
{% if p.form == "factor" %}Norm clipping multiplies $g$ by a factor. Give that factor as a formula in `tau` and `n`.
{% else %}Give the $i$-th entry of the clipped gradient as a formula in `g` (the $i$-th entry before clipping), `tau` and `n`.
{% endif %}
{% endblock %}
{% block solution %}
Since $n > \tau$, $\min(1, \tau/n) = \tau/n$: the answer is ${{ answer|latex }}$.
{% endblock %}
"""
)
@cites("L5 §6.1")
@exercises("optimizers.clip_grad_norm")
@forms("factor", "component")
@equivalents(lambda p: ["tau*n^(-1)", "1/(n/tau)"] if p["form"] == "factor" else ["g*tau*n^(-1)", "g/(n/tau)"])
@mistake("inverted", "inverted: the gradient must shrink to norm tau", form="inverted")
def clip_scale(p, form="right"):
    """The clipping scale factor."""
    syms = [s.sympy() for s in _clip_symbols(p)]
    tau, n = syms[0], syms[1]
    factor = {"right": tau / n, "inverted": n / tau}[form]
    return factor * syms[2] if p["form"] == "component" else factor


def _adagrad_decay_symbols(p):
    return (Sym("lr", 0.001, 1.0), Sym("t", 1, 50, integer=True))


@formula("opt.adagrad_decay", lambda rng: {"g": rng.choice((0.5, 1, 2, 3))}, _adagrad_decay_symbols)
@text(
    r"""
{% block question %}
AdaGrad ($w \leftarrow w - \mathrm{lr}\; g/\sqrt{G}$ with $G$ the running sum of squared gradients,
$\epsilon$ neglected) sees the same scalar gradient $g = {{ p.g|num }}$ at every step.
Give the size of the step $|w_t - w_{t-1}|$ taken at step $t$ as a formula in `lr` and `t`.
{% endblock %}
{% block solution %}
$G_t = t g^2$, so the step is $\mathrm{lr}\cdot g/\sqrt{t g^2} = {{ answer|latex }}$: it decays to zero,
the problem RMSProp fixes.
{% endblock %}
"""
)
# G_t = t g^2, step = lr g / sqrt(t g^2), simplified: four algebra steps
@work(lambda v: (4, 1))
@cites("W8 §1.3", "W8 §1.4")
@exercises("optimizers.adagrad")
@equivalents(lambda p: ["lr*t^(-1/2)", "lr*sqrt(t)/t"])
@mistake(
    "one_over_t",
    "G grows like t*g^2, so its square root grows like sqrt(t)",
    lambda p: _adagrad_decay_symbols(p)[0].sympy() / _adagrad_decay_symbols(p)[1].sympy(),
)
def adagrad_decay(p):
    """AdaGrad's shrinking step."""
    lr, tt = (s.sympy() for s in _adagrad_decay_symbols(p))
    return lr / sympy.sqrt(tt)
