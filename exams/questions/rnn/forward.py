"""Vanilla RNN questions, forward: parameter counts, shapes, one step, the loss and its gradient.

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
    unit,
    work,
)
from seqlab.exam.bank.helpers import THREE_FIGURE_WORK, decs, floats, mat, ref, shape_numel, t
from seqlab.exam.model import EXACT, FOUR_DIGITS
from seqlab.exam.safeexpr import Sym


def _rnn_shapes(D, H, C, output=True):
    shapes = {"W_xh": (H, D), "W_hh": (H, H), "b_h": (H,)}
    if output:
        shapes.update({"W_hy": (C, H), "b_y": (C,)})
    return shapes


# --------------------------------------------------------------------------- parameter count


# Sizes drawn from wide ranges (not a few round values): over a class of 300 no count is shared by
# more than 2% of the students (tests/exam/test_sharing.py), so no key can be passed on.
def _sample_count(rng):
    return {
        "D": rng.randint(8, 128),
        "H": 8 * rng.randint(2, 40),
        "C": rng.randint(10, 100),
        "T": rng.choice((20, 50, 100, 1000)),
    }


@numeric("rnn.param_count", _sample_count, EXACT, hint="an integer")
@text(
    r"""
{% block question %}
An Elman RNN language model reads inputs of size $D = {{ p.D }}$, keeps a hidden state of size
$H = {{ p.H }}$ and outputs logits over $C = {{ p.C }}$ classes:
$h_t = \tanh(W_{xh} x_t + W_{hh} h_{t-1} + b_h)$, $o_t = W_{hy} h_t + b_y$.
How many trainable parameters does it have when it is run on sequences of length $T = {{ p.T }}$?
{% endblock %}
{% block solution %}
$HD + H^2 + H + CH + C = {{ answer|num }}$. The same weights are used at every time step, so $T$ does not enter.
{% endblock %}
"""
)
# HD, H^2, CH (3 products) and 4 sums
@work(lambda v: (7, 0))
@cites("L5 §2.1", "W8 §2.2", "L7-8 (Lecture 7) §一.2", "L7-8 (Lecture 7) §四")
@exercises("rnn.rnn_forward", "rnn.rnn_bptt")
@mistake(
    "times_T",
    "the weights are shared by all time steps, so the parameter count does not depend on the sequence length T",
    shared=False,
)
@mistake("no_bias", "the two bias vectors b_h and b_y count too", bias=False)
def param_count(p, bias=True, shared=True):
    """Parameters of an Elman RNN."""
    shapes = {k: v for k, v in _rnn_shapes(p["D"], p["H"], p["C"]).items() if bias or not k.startswith("b")}
    copies = 1 if shared else p["T"]  # weights not shared: a copy per time step
    return float(shape_numel(shapes) * copies)


def _count_sym_symbols(p):
    return tuple(Sym(n, 1, 64, integer=True) for n in (("D", "H", "C") if p["output"] else ("D", "H")))


# Forms: with or without the output layer (one more term to count); one per exam.
@formula("rnn.param_count_formula", lambda rng, form: {"output": form == "with_output"}, _count_sym_symbols)
@text(
    r"""
{% block question %}
{% if p.output %}
An Elman RNN with input size `D`, hidden size `H` and an output layer over `C` classes computes
$h_t = \tanh(W_{xh} x_t + W_{hh} h_{t-1} + b_h)$ and $o_t = W_{hy} h_t + b_y$.
Give its number of parameters as a formula in `D`, `H` and `C`.
{% else %}
A vanilla RNN layer with input size `D` and hidden size `H` computes
$h_t = \tanh(W_{xh} x_t + W_{hh} h_{t-1} + b_h)$ (no output layer).
Give its number of parameters as a formula in `D` and `H`.
{% endif %}
{% endblock %}
{% block solution %}
Count the entries of every weight and bias: ${{ answer|latex }}$.
{% endblock %}
"""
)
@cites("L5 §2.1", "L5 §0")
@exercises("rnn.rnn_forward")
@forms("with_output", "hidden_only")
@equivalents(
    lambda p: ["H*(D + H + 1) + C*(H + 1)", "(D+H+1)*H + C*H + C"] if p["output"] else ["H*(D+H+1)", "H^2 + H*D + H"]
)
@mistake("no_bias", "the bias vectors count too", bias=False)
def param_count_formula(p, bias=True):
    """RNN parameter count as a formula."""
    syms = [s.sympy() for s in _count_sym_symbols(p)] + [None]
    shapes = _rnn_shapes(syms[0], syms[1], syms[2], output=p["output"])
    return sympy.expand(sum(math.prod(s) for k, s in shapes.items() if bias or not k.startswith("b")))


# --------------------------------------------------------------------------- one forward step


def _sample_cell(rng):
    return {
        "x": decs(rng, 2, -1, 1),
        "h_prev": decs(rng, 2, -1, 1),
        "W_xh": mat(rng, 2, 2),
        "W_hh": mat(rng, 2, 2),
        "b_h": decs(rng, 2, -0.5, 0.5),
    }


def _cell_pre(p):
    return floats(t(p["x"]) @ t(p["W_xh"]).T + t(p["h_prev"]) @ t(p["W_hh"]).T + t(p["b_h"]))


@numeric("rnn.cell_step", _sample_cell, FOUR_DIGITS, hint="two numbers, the entries of h_t")
@text(
    r"""
{% block question %}
A vanilla RNN cell computes $h_t = \tanh(W_{xh} x_t + W_{hh} h_{t-1} + b_h)$ with
$$W_{xh} = {{ p.W_xh|mat }}, \quad W_{hh} = {{ p.W_hh|mat }}, \quad b_h = {{ p.b_h|colvec }}.$$
For $x_t = {{ p.x|colvec }}$ and $h_{t-1} = {{ p.h_prev|colvec }}$, what is $h_t$?
{% endblock %}
{% block solution %}
The pre-activation is $a_t = W_{xh} x_t + W_{hh} h_{t-1} + b_h$; $h_t = \tanh(a_t) = {{ answer|vec }}$.
{% endblock %}
"""
)
# W_xh x and W_hh h (4 products, 2 sums each), two vector sums (4), 2 tanh: 18; a_t written
@work(lambda v: (18, 2))
@cites("W8 §2.2", "L5 §2.1", "L7-8 (Lecture 7) §一.2", "W8 §3")
@exercises("rnn.rnn_cell")
@mistake("no_tanh", "that is the pre-activation; apply tanh", _cell_pre)
@own_entries()
def cell_step(p):
    """One step of a vanilla RNN."""
    h = ref("rnn").rnn_cell(t([p["x"]]), t([p["h_prev"]]), t(p["W_xh"]), t(p["W_hh"]), t(p["b_h"]))
    return floats(h)


# --------------------------------------------------------------------------- shapes

# Forms: the four task types ask for different amounts of thought (only the bidirectional one
# computes an entry), so the exam fixes one for every student.
SHAPE_CASES = ("many_to_many", "many_to_one", "bidirectional", "logits")


def _sample_shapes(rng, form):
    return {
        "case": form,
        # wide enough that no answer is shared by more than 2% of a class (tests/exam/test_sharing.py)
        # once the draws with a repeated size are redrawn
        "B": rng.randint(2, 9),
        "T": rng.randint(3, 14),
        "D": rng.choice((4, 6, 8)),
        "H": rng.choice((5, 10, 12, 15)),
        "C": rng.choice((3, 7, 11)),
    }


@numeric("rnn.shapes", _sample_shapes, EXACT, hint="the shape as integers, e.g. 2; 3; 4")
@text(
    r"""
{% block question %}
A batch of $B = {{ p.B }}$ sequences of length $T = {{ p.T }}$ with $D = {{ p.D }}$ features each is
stored batch-first as a tensor of shape $(B, T, D)$.
{% if p.case != "bidirectional" %}An RNN with hidden size $H = {{ p.H }}$ reads it.{% endif %}
{% if p.case == "many_to_many" %}
In a synced many-to-many task (one output per step, e.g. frame-level classification), what is the shape of the tensor holding every hidden state $h_1, \dots, h_T$?
{% elif p.case == "many_to_one" %}
In a many-to-one task (e.g. sentiment classification) only the final hidden state is used. What is its shape?
{% elif p.case == "bidirectional" %}
A bidirectional RNN (two directions, hidden size $H = {{ p.H }}$ each, outputs concatenated on the last axis) reads it. What is the shape of its output?
{% else %}
An output layer maps every hidden state to logits over $C = {{ p.C }}$ classes, as in a character-level language model. What is the shape of the logits?
{% endif %}
Give its sizes in the order of its axes, the batch axis first (batch-first, as the input).
{% endblock %}
{% block solution %}
The shape is $({{ answer|map("int")|join(", ") }})$.
{% endblock %}
"""
)
# the third audit's Q9: B = D on two papers; a size that repeats another lets an axis be
# read off the wrong one and still score
@skips_work(
    "two of the sizes B, T, D, H (and C) are equal: an axis read off the wrong size still scores",
    lambda p, a: len({p["B"], p["T"], p["D"], p["H"], p["C"]}) < 5,
)
# one size read off and doubled (or copied)
@work(lambda v: (1, 0))
@cites("W8 §3.1", "W8 §3.2", "L5 §1.1", "L5 §10", "L7-8 (Lecture 7) §一.1", "W8 §3")
@exercises("rnn.rnn_forward", "rnn.birnn_forward")
@forms(*SHAPE_CASES)
def shapes(p):
    """The shape of a tensor in one RNN task."""
    R = ref("rnn")
    B, T, D, H, C = p["B"], p["T"], p["D"], p["H"], p["C"]
    x, h0 = torch.zeros(B, T, D, dtype=torch.float64), torch.zeros(B, H, dtype=torch.float64)
    cell = {
        "W_xh": torch.zeros(H, D, dtype=torch.float64),
        "W_hh": torch.zeros(H, H, dtype=torch.float64),
        "b_h": torch.zeros(H, dtype=torch.float64),
    }
    if p["case"] == "bidirectional":
        out = R.birnn_forward(x, h0, h0, cell, cell)
    else:
        out = R.rnn_forward(x, h0, cell["W_xh"], cell["W_hh"], cell["b_h"])
        if p["case"] == "many_to_one":
            out = out[:, -1]
        elif p["case"] == "logits":
            out = out @ torch.zeros(C, H, dtype=torch.float64).T
    return [float(s) for s in out.shape]


# --------------------------------------------------------------------------- loss and its gradient


def _sample_ce(rng):
    return {"logits": decs(rng, 3, -2, 2), "target": rng.randint(0, 2)}


def _ce(p):
    return ref("rnn").softmax_cross_entropy(t([p["logits"]]), torch.tensor([p["target"]]))


@numeric("rnn.ce_loss", _sample_ce, THREE_FIGURE_WORK, hint="one number")
@unit("nats")  # the hint names no unit; "1.4208 nats" is the key as a teacher reads it
@text(
    r"""
{% block question %}
At one time step an RNN language model outputs the logits $o = {{ p.logits|vec }}$ over three
classes (indices 0, 1, 2), and the correct next token is class {{ p.target }}.
What is the cross-entropy loss $-\log \mathrm{softmax}(o)_{ {{- p.target -}} }$ (natural log)? Intermediate results rounded to 3 significant figures are accepted.
{% endblock %}
{% block solution %}
$-\log \frac{e^{o_{ {{- p.target -}} }}}{\sum_k e^{o_k}} = {{ answer|num }}$.
{% endblock %}
"""
)
# the fourth audit: two equal logits on two papers of three (one exponential fewer)
@skips_work("two logits are equal: one exponential serves twice", lambda p, a: len(set(p["logits"])) < 3)
# C exps, C-1 sums, a quotient, a log
@work(lambda v: (2 * len(v.params["logits"]) + 1, 1))
@cites("L5 §2.2", "W8 §4", "L7-8 (Lecture 7) §二.1")
@exercises("rnn.softmax_cross_entropy")
@mistake("log2", "the loss uses the natural log, not log2", lambda p: float(_ce(p)) / math.log(2))
def ce_loss(p):
    """Cross-entropy of one prediction."""
    return float(_ce(p))


@numeric("rnn.ce_grad", _sample_ce, FOUR_DIGITS, hint="three numbers, dL/do_0, dL/do_1, dL/do_2")
@text(
    r"""
{% block question %}
For the logits $o = {{ p.logits|vec }}$ (classes 0, 1, 2) and the correct class {{ p.target }},
what is the gradient $\partial L / \partial o$ of the loss $L = -\log \mathrm{softmax}(o)_{ {{- p.target -}} }$?
{% endblock %}
{% block solution %}
$\partial L/\partial o = \mathrm{softmax}(o) - \mathrm{onehot}({{ p.target }}) = {{ answer|vec }}$.
{% endblock %}
"""
)
@cites("L5 §3.2")
@exercises("rnn.softmax_cross_entropy", "rnn.rnn_bptt")
@mistake("sign", "the sign is flipped: the gradient is p - y", lambda p: [-x for x in ce_grad(p)])  # type: ignore[has-type]  # its own name in its decorator
def ce_grad(p):
    """Gradient of softmax cross-entropy."""
    logits = t([p["logits"]]).requires_grad_(True)
    loss = ref("rnn").softmax_cross_entropy(logits, torch.tensor([p["target"]]))
    (g,) = torch.autograd.grad(loss, logits)  # autograd through the reference: the exact gradient
    return floats(g)


def _ce_sym_symbols(p):
    return tuple(Sym(f"o{i}", -2.0, 2.0) for i in range(p["C"]))


# Classes are numbered from 0, as the paper's conventions and rnn.ce_loss number them. The class
# asked about is the target for about half the students (its gradient is p_y - 1) and another class
# for the others (p_j): the same work either way (a softmax entry and the choice of the indicator),
# and the "- 1" of p - y is examined on every class of papers, which one form per exam could not do.
def _sample_ce_sym(rng):
    C = rng.choice((2, 3, 4))
    y = rng.randrange(C)
    j = y if rng.random() < 0.5 else rng.choice([i for i in range(C) if i != y])
    return {"C": C, "y": y, "j": j}


@formula("rnn.ce_grad_formula", _sample_ce_sym, _ce_sym_symbols)
@text(
    r"""
{% block question %}
A softmax output layer gets the logits
{% for i in range(p.C) %}`o{{ i }}`{{ ", " if not loop.last }}{% endfor %} over {{ p.C }} classes (indices 0 to {{ p.C - 1 }}), and the loss is $L = -\log p_{ {{- p.y -}} }$ with $p = \mathrm{softmax}(o)$: class {{ p.y }} is the correct one.
Give $\partial L / \partial o_{ {{- p.j -}} }$ as a formula in the logits (use `exp`).
{% endblock %}
{% block solution %}
$\partial L/\partial o_j = p_j - \mathbb{1}[j = y]$ with $y = {{ p.y }}$, here ${{ answer|latex }}$.
{% endblock %}
"""
)
# dL/do_j = p_j - [j = y], written out over the C exps: three steps
@work(lambda v: (3, 0))
@cites("L5 §3.2", "L5 §20")
@exercises("rnn.softmax_cross_entropy", "rnn.rnn_bptt")
@equivalents(
    lambda p: [
        "1/(1 + "
        + " + ".join(f"exp(o{i} - o{p['j']})" for i in range(p["C"]) if i != p["j"])
        + ")"
        + (" - 1" if p["j"] == p["y"] else ""),
        "exp(o{j})*(".format(j=p["j"])
        + " + ".join(f"exp(o{i})" for i in range(p["C"]))
        + ")^(-1)"
        + (" - 1" if p["j"] == p["y"] else ""),
    ]
)
@mistake("sign", "the sign is flipped: the gradient is p - y", sign=-1)
@mistake(
    "indicator",
    "the gradient is p_j - 1 for the target class and p_j for the others",
    lambda p: ce_grad_formula(p, indicator=p["j"] != p["y"]),  # type: ignore[has-type]  # its own name in its decorator
)
def ce_grad_formula(p, sign=1, indicator=None):
    """Softmax cross-entropy gradient as a formula."""
    o = [s.sympy() for s in _ce_sym_symbols(p)]
    pj = sympy.exp(o[p["j"]]) / sum(sympy.exp(x) for x in o)
    target = p["j"] == p["y"] if indicator is None else indicator
    return sign * (pj - (1 if target else 0))
