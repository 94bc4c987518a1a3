"""Vanilla RNN questions, backward: BPTT by hand, vanishing/exploding gradients, truncated BPTT.

Validity (``model.fair_draw``): see the package docstring.
"""

from __future__ import annotations

import math

import sympy
import torch

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
    valid_when,
    work,
)
from seqlab.exam.bank.helpers import THREE_FIGURE_WORK, dec, decs, floats, near, ref, t
from seqlab.exam.model import EXACT, FOUR_DIGITS, Tolerance
from seqlab.exam.safeexpr import Sym

# The scalar BPTT questions' shared set-up (rnn.bptt_output_grad, rnn.bptt_hidden_grad and
# rnn.bptt_param_grads in generation.py): each question block opens with it, and the question's
# own first line follows on the next line of the same paragraph.
BPTT_SETUP = r"""
A scalar RNN (input, hidden size 1) with a {{ 'two' if p.V|length == 2 else 'three' }}-class softmax output reads $T = 2$ steps:
$h_t = \tanh(u\, x_t + w\, h_{t-1} + b)$, $o_t = W_{hy} h_t + b_y$ (a vector of {{ p.V|length }} logits),
$L = \sum_{t=1}^{2} -\log \mathrm{softmax}(o_t)_{y_t}$ (the targets $y_t$ are given).
The values are $u = {{ p.u|num }}$, $w = {{ p.w|num }}$, $b = {{ p.b|num }}$,
$W_{hy} = {{ p.V|colvec }}$, $b_y = {{ p.c|colvec }}$, $h_0 = {{ p.h0|num }}$,
inputs $x_1 = {{ p.x[0]|num }}$, $x_2 = {{ p.x[1]|num }}$ and targets $y_1 = {{ p.y[0] }}$, $y_2 = {{ p.y[1] }}$ ({{ 'classes 0 and 1' if p.V|length == 2 else 'classes 0, 1 and 2' }}).
""".strip()

# --------------------------------------------------------------------------- BPTT by hand


def _sample_bptt(rng, targets_of=("b_y", "W_hy"), classes=2):
    while True:
        V = [dec(rng, -1, 1, nonzero=True) for _ in range(classes)]
        # with V_0 = V_1 no gradient reaches h: a degenerate question
        if all(abs(a - b) >= 0.4 for i, a in enumerate(V) for b in V[i + 1 :]):
            break
    # With three classes and the entries of classes 0 and 1 asked, the targets are those two, one
    # per step (in either order): a target of class 2 leaves the asked entries without the -y term,
    # so a student who forgets it keeps the marks on that paper only (the third blind audit's
    # pair: 8/8 on one paper, 4/8 on the others).
    x = decs(rng, 2, -1, 1, nonzero=True)
    y = rng.sample([0, 1], 2) if classes == 3 else [rng.randint(0, classes - 1), rng.randint(0, classes - 1)]
    return {
        "x": x,
        "y": y,
        "h0": dec(rng, -0.5, 0.5, nonzero=True),
        "u": dec(rng, -1, 1, nonzero=True),
        "w": dec(rng, -1, 1, nonzero=True),
        "b": dec(rng, -0.5, 0.5),
        "V": V,
        "c": decs(rng, classes, -0.5, 0.5),
        "target": rng.choice(targets_of),
    }


def _bptt(p):
    params = {
        "W_xh": t([[p["u"]]]),
        "W_hh": t([[p["w"]]]),
        "b_h": t([p["b"]]),
        "W_hy": t([[v] for v in p["V"]]),
        "b_y": t(p["c"]),
    }
    x = t([[[p["x"][0]], [p["x"][1]]]])
    loss, grads = ref("rnn").rnn_bptt(x, torch.tensor([p["y"]]), t([[p["h0"]]]), params)
    return loss, grads


def bptt_pre(p: dict) -> list[float]:
    """The two pre-activations of the scalar BPTT questions' steps (their degenerate draws)."""
    h, out = p["h0"], []
    for x in p["x"]:
        a = p["u"] * x + p["w"] * h + p["b"]
        out.append(a)
        h = math.tanh(a)
    return out


# Forms: which gradient is asked (each is a different sum over the steps); one per exam. Three
# classes, and the entries of classes 0 and 1 asked: a softmax gradient's entries sum to 0 at
# every step, so with two classes (or all three asked) one entry is minus the rest, and a student
# computes half the answer (``lint_draws``' related entries).
@numeric(
    "rnn.bptt_output_grad",
    lambda rng, form: _sample_bptt(rng, (form,), classes=3),
    THREE_FIGURE_WORK,
    hint="two numbers, the entries of classes 0 and 1",
)
@text(
    "{% block question %}\n"
    + BPTT_SETUP
    + r"""
What are the entries for classes 0 and 1 of {{ "$\\partial L / \\partial b_y$" if p.target == "b_y" else "$\\partial L / \\partial W_{hy}$ ($W_{hy}$ is $3 \\times 1$)" }}? Intermediate results rounded to 3 significant figures are accepted.
{% endblock %}
{% block solution %}
With $p_t = \mathrm{softmax}(o_t)$: {{ "$\\partial L/\\partial b_y = \\sum_t (p_t - \\mathrm{onehot}(y_t))$" if p.target == "b_y" else "$\\partial L/\\partial W_{hy} = \\sum_t (p_t - \\mathrm{onehot}(y_t))\\, h_t$" }} $= {{ answer|vec }}$.
{% endblock %}
"""
)
@skips_work("a pre-activation is 0: h_t = tanh(0) = 0", lambda p, a: any(near(x, 0) for x in bptt_pre(p)))
# forward h1, h2 (5 each), o_t (4 each), 2-class softmax (5 each), p_t - e_t (1 each): 30; then
# sum_t (p_t - e_t) h_t for W_hy (2 entries, 3 each: 6) or sum_t (p_t - e_t) for b_y (2 sums)
@work(lambda v: (36 if v.form == "W_hy" else 32, 10))
@cites("L5 §3.3", "L5 §3.1", "L5 §3", "L7-8 (Lecture 7) §二.2")
@exercises("rnn.rnn_bptt")
@forms("b_y", "W_hy")
@own_entries()
def bptt_output_grad(p):
    """BPTT: output-layer gradient."""
    return floats(_bptt(p)[1][p["target"]])[:2]


@numeric("rnn.bptt_hidden_grad", lambda rng, form: _sample_bptt(rng, (form,)), FOUR_DIGITS, hint="one number")
@text(
    "{% block question %}\n"
    + BPTT_SETUP
    + r"""
{% set names = {"W_hh": "\\partial L / \\partial w", "h0": "\\partial L / \\partial h_0", "b_h": "\\partial L / \\partial b", "W_xh": "\\partial L / \\partial u"} %}
Using backpropagation through time, what is ${{ names[p.target] }}$?
{% endblock %}
{% block solution %}
Backward: $\delta o_t = p_t - \mathrm{onehot}(y_t)$; $\partial L/\partial h_2 = W_{hy}^\top \delta o_2$;
$\partial L/\partial a_2 = (1 - h_2^2)\,\partial L/\partial h_2$; $\partial L/\partial h_1 = W_{hy}^\top \delta o_1 + w\, \partial L/\partial a_2$;
$\partial L/\partial a_1 = (1 - h_1^2)\, \partial L/\partial h_1$. Then $\partial L/\partial w = \sum_t \partial L/\partial a_t\, h_{t-1}$,
$\partial L/\partial u = \sum_t \partial L/\partial a_t\, x_t$, $\partial L/\partial b = \sum_t \partial L/\partial a_t$,
$\partial L/\partial h_0 = w\, \partial L/\partial a_1$. Here: ${{ answer|num }}$.
{% endblock %}
"""
)
@skips_work("a pre-activation is 0: h_t = tanh(0) = 0", lambda p, a: any(near(x, 0) for x in bptt_pre(p)))
@cites("L5 §3.4", "L5 §3.5", "L5 §3", "L7-8 (Lecture 7) §二.2", "L5 §20")
@exercises("rnn.rnn_bptt")
@forms("W_hh", "h0", "b_h", "W_xh")
def bptt_hidden_grad(p):
    """One gradient by backpropagation through time."""
    return floats(_bptt(p)[1][p["target"]])[0]


# Validity: never the last step t = T, where only the output path remains (no recursion to know);
# ``last`` stays a parameter so the question's text keeps both readings documented.
def _sample_recursion(rng):
    return {"last": False}


def _recursion_symbols(p):
    base = (Sym("v", -2, 2), Sym("p_t", 0.05, 0.95), Sym("y_t", 0, 1, integer=True))
    return base if p["last"] else base + (Sym("w", -2, 2), Sym("h_next", -0.9, 0.9), Sym("g_next", -2, 2))


@formula("rnn.hidden_grad_recursion", _sample_recursion, _recursion_symbols)
@text(
    r"""
{% block question %}
A scalar RNN has $h_t = \tanh(w\, h_{t-1} + u\, x_t + b)$ and a binary output $p_t = \sigma(o_t)$,
$o_t = v\, h_t + c$, trained with $L = \sum_t L_t$, $L_t$ the binary cross-entropy of $p_t$ against the
target $y_t \in \{0, 1\}$, so that $\partial L_t / \partial o_t = p_t - y_t$.
{% if p.last %}
At the last time step $t = T$, give $\partial L / \partial h_T$ as a formula in `v`, `p_t` and `y_t`.
{% else %}
Let `g_next` $= \partial L / \partial h_{t+1}$ and `h_next` $= h_{t+1}$. Give $\partial L / \partial h_t$ (for $t < T$)
as a formula in `v`, `p_t`, `y_t`, `w`, `h_next` and `g_next`.
{% endif %}
{% endblock %}
{% block solution %}
{% if p.last %}Only the output path remains at $t = T$: ${{ answer|latex }}$.{% else %}Two paths: through
$o_t$ and through $h_{t+1} = \tanh(w h_t + \dots)$: ${{ answer|latex }}$.{% endif %}
{% endblock %}
"""
)
# two paths (through o_t and h_{t+1}), the chain rule on each, their sum: six steps
@work(lambda v: (6, 1))
@cites("L5 §3.4", "L5 §20")
@exercises("rnn.rnn_bptt")
@equivalents(
    lambda p: (
        ["v*p_t - v*y_t"]
        if p["last"]
        else ["v*p_t - v*y_t + w*g_next - w*g_next*h_next^2", "(p_t - y_t)*v + (1 - h_next)*(1 + h_next)*w*g_next"]
    )
)
@mistake(
    "no_tanh",
    "the path through h_{t+1} = tanh(a_{t+1}) carries tanh' = 1 - h_{t+1}^2",
    form="no_tanh",
    when=lambda p: not p["last"],
)
def hidden_grad_recursion(p, form="right"):
    """The hidden-state gradient recursion."""
    s = {x.name: x.sympy() for x in _recursion_symbols(p)}
    out = s["v"] * (s["p_t"] - s["y_t"])
    if not p["last"]:
        deriv = (1 - s["h_next"] ** 2) if form != "no_tanh" else 1
        out = out + s["w"] * deriv * s["g_next"]
    return out


# --------------------------------------------------------------------------- vanishing / exploding


def _sample_eigen(rng):
    direction = rng.choice(("plus", "minus"))
    while True:
        # two decimals and any k in 5-30: the keys spread over a class (test_sharing.py)
        a, b = dec(rng, -1, 1.2, places=2), dec(rng, -0.6, 0.6, places=2, nonzero=True)
        k = rng.randint(5, 30)
        lam = abs(a + b if direction == "plus" else a - b)  # the eigenvalue along the chosen direction
        # clearly exploding or vanishing, but a factor a calculator shows without underflow
        if 0.3 <= lam <= 1.6 and abs(lam - 1) > 0.05 and 1e-4 <= lam**k <= 1e5:
            break
    return {"a": a, "b": b, "k": k, "direction": direction}


@numeric("rnn.eigen_growth", _sample_eigen, Tolerance(rtol=1e-3, atol=0.0), hint="one number, the ratio of norms")
@text(
    r"""
{% block question %}
In a linear RNN $h_t = W h_{t-1}$ (no nonlinearity) the gradient flows back as
$\partial L/\partial h_{t-1} = W^\top \partial L/\partial h_t$. Take
$$W = {{ [[p.a, p.b], [p.b, p.a]]|mat }}$$
and suppose $\partial L/\partial h_t$ points along $({{ "1, 1" if p.direction == "plus" else "1, -1" }})$.
By what factor has its norm been multiplied after flowing back $k = {{ p.k }}$ steps, i.e.
$\lVert \partial L/\partial h_{t-k} \rVert / \lVert \partial L/\partial h_t \rVert$?
{% endblock %}
{% block solution %}
$({{ "1, 1" if p.direction == "plus" else "1, -1" }})$ is an eigenvector of $W$ with eigenvalue
$\lambda = {{ (p.a + p.b if p.direction == "plus" else p.a - p.b)|num }}$, so the factor is $|\lambda|^k = {{ answer|num }}$:
{{ "it explodes" if answer > 1 else "it vanishes" }} since $|\lambda| {{ ">" if answer > 1 else "<" }} 1$.
{% endblock %}
"""
)
@cites("L5 §5.1", "L5 §5", "L7-8 (Lecture 7) §四", "L5 §20")
@exercises("rnn.rnn_bptt")
@mistake("linear", "the factor compounds: lambda^k, not k*lambda", power=False)
def eigen_growth(p, power=True):
    """Gradient growth over k steps."""
    W = t([[p["a"], p["b"]], [p["b"], p["a"]]])
    u = t([1.0, 1.0 if p["direction"] == "plus" else -1.0])
    if not power:
        lam = float((W @ u).norm() / u.norm())
        return lam * p["k"]
    grad = torch.linalg.matrix_power(W.T, p["k"]) @ u  # k steps of dL/dh_{t-1} = W^T dL/dh_t
    return float(grad.norm() / u.norm())


def _sample_power(rng):
    return {"k": rng.randint(3, 12)}


@formula("rnn.linear_power", _sample_power, lambda p: (Sym("w", 0.3, 1.6),))
@text(
    r"""
{% block question %}
A scalar linear RNN has $h_t = w\, h_{t-1} + u\, x_t$. Give $\partial h_T / \partial h_{T-{{ p.k }}}$ as a formula in `w`.
{% endblock %}
{% block solution %}
Each step contributes a factor $w$: ${{ answer|latex }}$, which explodes for $|w| > 1$ and vanishes for $|w| < 1$.
{% endblock %}
"""
)
@cites("L5 §5.1")
@exercises("rnn.rnn_bptt")
@equivalents(lambda p: [f"w^{p['k'] - 1}*w", f"exp({p['k']}*log(w))"])
@mistake("linear", "the Jacobians multiply: w^k, not k*w", lambda p: p["k"] * Sym("w", 0.3, 1.6).sympy())
def linear_power(p):
    """Gradient through a linear recurrence."""
    return Sym("w", 0.3, 1.6).sympy() ** p["k"]


# Forms: the number of steps (2 or 3; one step has no chain), the same for every student of an exam.
def _tanh_symbols(p):
    return (Sym("w", -2, 2),) + tuple(Sym(f"h{i}", -0.9, 0.9) for i in range(1, p["k"] + 1))


@formula("rnn.tanh_jacobian", lambda rng, form: {"k": int(form)}, _tanh_symbols)
@text(
    r"""
{% block question %}
A scalar RNN has $h_t = \tanh(w\, h_{t-1} + u\, x_t + b)$. Write
{% for i in range(1, p.k + 1) %}`h{{ i }}` for $h_{t+{{ i }}}${{ ", " if not loop.last }}{% endfor %}.
Give $\partial h_{t+{{ p.k }}} / \partial h_t$ as a formula in `w`{% for i in range(1, p.k + 1) %}, `h{{ i }}`{% endfor %}.
{% endblock %}
{% block solution %}
Each step multiplies by $w \tanh'(a) = w (1 - h^2)$: ${{ answer|latex }}$. Saturated units ($|h| \to 1$) make it vanish.
{% endblock %}
"""
)
@cites("L5 §5.2", "L5 §3.4", "L5 §6.2")
@exercises("rnn.rnn_bptt")
@forms("2", "3")
@equivalents(
    lambda p: [
        "*".join(["w"] * p["k"] + [f"(1 - h{i})*(1 + h{i})" for i in range(1, p["k"] + 1)]),
        sympy.sstr(sympy.expand(tanh_jacobian(p))),  # type: ignore[has-type]  # its own name in its decorator
    ]
)
@mistake("no_deriv", "each step also multiplies by tanh' = 1 - h^2", with_deriv=False)
def tanh_jacobian(p, with_deriv=True):
    """Gradient through tanh steps."""
    s = [x.sympy() for x in _tanh_symbols(p)]
    out = s[0] ** p["k"]
    if with_deriv:
        for h in s[1:]:
            out = out * (1 - h**2)
    return out


# --------------------------------------------------------------------------- truncated BPTT


# Validity: T is not a multiple of the chunk, so the last chunk is shorter (entry 3 is computed,
# not the chunk length copied from the question) and the count needs the ceiling.
def _sample_tbptt(rng):
    return {"T": rng.choice((100, 250, 1000, 1234, 500)), "chunk": rng.choice((16, 32, 35, 50, 64))}


def _tbptt_valid(p):
    return p["T"] % p["chunk"] != 0


@numeric("rnn.truncated_chunks", _sample_tbptt, EXACT, hint="three integers")
@text(
    r"""
{% block question %}
A sequence of $T = {{ p.T }}$ steps is trained with truncated BPTT in chunks of {{ p.chunk }} steps
(the last chunk may be shorter).
Give (1) the number of backward passes, (2) the largest number of steps any backward pass goes through,
(3) the length of the last chunk.
{% endblock %}
{% block solution %}
$\lceil {{ p.T }} / {{ p.chunk }} \rceil$ chunks; each backward pass stays inside its chunk. Answer: {{ answer|map("int")|join(", ") }}.
{% endblock %}
"""
)
@cites("L7-8 (Lecture 7) §二.3", "L7-8 (Lecture 7) §二")
@exercises("rnn.truncated_bptt")
@valid_when(_tbptt_valid)
def truncated_chunks(p):
    """Truncated BPTT bookkeeping."""
    starts = list(range(0, p["T"], p["chunk"]))  # the cuts truncated_bptt makes
    lengths = [min(p["chunk"], p["T"] - s) for s in starts]
    return [float(len(starts)), float(max(lengths)), float(lengths[-1])]
