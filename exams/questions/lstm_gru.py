"""LSTM and GRU questions: parameter counts (PyTorch's layout), a cell update by hand, the
cell-state gradient path, and the GRU update/reset gates. Notation as the notes': cell state
C_t, candidate C~_t (written \\tilde C_t).

Validity (``model.fair_draw``): every draw keeps each named mistake outside the tolerance of
the key and every key entry clearly away from 0; the rules each question adds, and the forms
that are fixed per exam, are stated above its generator.
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
    work,
)
from seqlab.exam.bank.helpers import THREE_FIGURE_WORK, dec, decs, floats, near, ref, shape_numel, slip_scores, t
from seqlab.exam.model import EXACT, FOUR_DIGITS
from seqlab.exam.safeexpr import Sym

GATES = {"lstm": 4, "gru": 3}


def _recurrent_shapes(cell, D, H, layers=1, directions=1, biases=2):
    """PyTorch's parameters of nn.LSTM/nn.GRU: per layer and direction W_ih, W_hh, b_ih, b_hh."""
    g = GATES[cell]
    shapes = {}
    for layer in range(layers):
        inp = D if layer == 0 else H * directions
        for d in range(directions):
            s = f"l{layer}{'_reverse' if d else ''}"
            shapes[f"W_ih_{s}"] = (g * H, inp)
            shapes[f"W_hh_{s}"] = (g * H, H)
            for b in ("b_ih", "b_hh")[:biases]:
                shapes[f"{b}_{s}"] = (g * H,)
    return shapes


# Validity: always two layers, so the second layer's input (H, or 2H with both directions) is part
# of the question; the general rule then drops draws where that input equals D (the ``same_input``
# mistake, every layer reading D features, would give the key).
# Forms: one or two directions; one per exam, and the text names the case asked.
def _sample_lstm_count(rng, form):
    return {
        "D": rng.randint(10, 200),  # wide ranges: no count shared by a class (test_sharing.py)
        "H": 8 * rng.randint(4, 40),
        "layers": 2,
        "bidirectional": form == "bidirectional",
    }


def _lstm_count(p, cell="lstm", biases=2):
    return float(
        shape_numel(_recurrent_shapes(cell, p["D"], p["H"], p["layers"], 2 if p["bidirectional"] else 1, biases))
    )


def _lstm_count_same_input(p):
    directions = 2 if p["bidirectional"] else 1
    one_layer = shape_numel(_recurrent_shapes("lstm", p["D"], p["H"], 1, directions))
    return float(p["layers"] * one_layer)


@numeric("lstm.param_count", _sample_lstm_count, EXACT, hint="an integer")
@text(
    r"""
{% block question %}
`nn.LSTM(input_size={{ p.D }}, hidden_size={{ p.H }}, num_layers={{ p.layers }}, bidirectional={{ p.bidirectional }})`
is a stack of {{ p.layers }} LSTM layers{{ ", each reading the sequence in both directions" if p.bidirectional else ", each reading the sequence left to right" }}.
It keeps, per layer and direction, $W_{ih}$ of shape $(4H, \text{input})$, $W_{hh}$ of shape $(4H, H)$ and two bias
vectors $b_{ih}, b_{hh}$ of size $4H$ (gates $i, f, \tilde C, o$). The first layer's input is the $D = {{ p.D }}$ features;
a layer above the first reads the {{ "concatenated outputs of both directions of the layer below" if p.bidirectional else "hidden states of the layer below" }}.

How many parameters does it have?
{% endblock %}
{% block solution %}
Per layer and direction $4H(\text{input} + H) + 8H$; summed: ${{ answer|num }}$.
{% endblock %}
"""
)
@cites("L5 §7.1", "L5 §9", "L5 §10", "L5 §11", "L7-8 (Lecture 7) §五.1")
@exercises("lstm_gru.lstm_forward", "rnn.birnn_forward")
@forms("unidirectional", "bidirectional")
@mistake("one_bias", "PyTorch keeps two bias vectors, b_ih and b_hh", lambda p: _lstm_count(p, biases=1))
@mistake("as_gru", "an LSTM has four gate blocks (i, f, g, o), not three", lambda p: _lstm_count(p, "gru"))
@mistake(
    "same_input", "the second layer reads the first layer's outputs, not the D input features", _lstm_count_same_input
)
def lstm_param_count(p):
    """Parameters of a two-layer LSTM."""
    return _lstm_count(p)


def _sample_gru_count(rng):
    return {
        # wide ranges, as the LSTM's: sixteen sizes gave one key to a tenth of a class
        # (test_sharing.py); H not a multiple of 8, whose round sizes met other questions' keys
        "D": rng.randint(10, 200),
        "H": rng.randint(17, 99),
        "layers": 1,
        "bidirectional": False,
    }


@numeric("gru.param_count", _sample_gru_count, EXACT, hint="an integer")
@text(
    r"""
{% block question %}
`nn.GRU(input_size={{ p.D }}, hidden_size={{ p.H }})` keeps $W_{ih}$ of shape $(3H, D)$, $W_{hh}$ of shape
$(3H, H)$ and two bias vectors of size $3H$ (gates $r, z, n$). How many parameters does it have?
{% endblock %}
{% block solution %}
$3H(D + H) + 6H = {{ answer|num }}$, three quarters of the LSTM's $4H(D+H) + 8H$.
{% endblock %}
"""
)
# 3H(D + H) + 6H: D + H, 3H, their product, 6H, the sum
@work(lambda v: (5, 1))
@cites("L5 §8", "L5 §9")
@exercises("lstm_gru.gru_forward")
@mistake("one_bias", "PyTorch keeps two bias vectors, b_ih and b_hh", lambda p: _lstm_count(p, "gru", biases=1))
@mistake("as_lstm", "a GRU has three gate blocks (r, z, n)", lambda p: _lstm_count(p, "lstm"))
def gru_param_count(p):
    """Parameters of a GRU."""
    return _lstm_count(p, "gru")


def _formula_symbols(p):
    return (Sym("D", 1, 64, integer=True), Sym("H", 1, 64, integer=True))


# Forms: LSTM or GRU (equal difficulty, but the exam still gives everyone the same cell).
@formula("lstm.param_count_formula", lambda rng, form: {"cell": form}, _formula_symbols)
@text(
    r"""
{% block question %}
Give the number of parameters of a single-layer `nn.{{ "LSTM" if p.cell == "lstm" else "GRU" }}` with input size `D` and
hidden size `H` (PyTorch's layout: $W_{ih}$, $W_{hh}$ and the two biases $b_{ih}$, $b_{hh}$) as a formula in `D` and `H`.
{% endblock %}
{% block solution %}
{{ "Four" if p.cell == "lstm" else "Three" }} gate blocks, each with $H(D + H) + 2H$ parameters: ${{ answer|latex }}$.
{% endblock %}
"""
)
@cites("L5 §9", "L5 §7.1", "L5 §8")
@exercises("lstm_gru.lstm_cell", "lstm_gru.gru_cell")
@forms("lstm", "gru")
@equivalents(
    lambda p: ([f"{GATES[p['cell']]}*H*(D + H + 2)", f"{GATES[p['cell']]}*(H*D + H^2) + {2 * GATES[p['cell']]}*H"])
)
@mistake("one_bias", "PyTorch keeps two bias vectors, b_ih and b_hh", biases=1)
def lstm_param_count_formula(p, biases=2):
    """LSTM or GRU size as a formula."""
    D, H = (s.sympy() for s in _formula_symbols(p))
    return sympy.expand(sum(math.prod(s) for s in _recurrent_shapes(p["cell"], D, H, biases=biases).values()))


# --------------------------------------------------------------------------- LSTM cell by hand


def _sample_lstm_cell(rng):
    return {
        "x": dec(rng, -1, 1, nonzero=True),
        "h_prev": dec(rng, -0.8, 0.8),
        "c_prev": dec(rng, -1.5, 1.5),
        "W_ih": decs(rng, 4, -1, 1),
        "W_hh": decs(rng, 4, -1, 1),
        "b": decs(rng, 4, -0.5, 0.5),
    }


def _lstm_no_output_gate(p):
    c, _ = lstm_cell_update(p)
    return [c, math.tanh(c)]


def _lstm_pre(p: dict) -> list[float]:
    return [wx * p["x"] + wh * p["h_prev"] + b for wx, wh, b in zip(p["W_ih"], p["W_hh"], p["b"])]


def _gates_swap_unseen(p: dict) -> bool:
    """Whether the input and forget gates swapped leave C_t within 10% (the gates nearly equal,
    or c_prev near g): then the swap, a slip of reading the gate order, keeps full marks on that
    paper and not on another (the third blind audit's 0.522 against 0.510)."""
    i, f, g, _ = _lstm_pre(p)
    i, f, g = 1 / (1 + math.exp(-i)), 1 / (1 + math.exp(-f)), math.tanh(g)
    c = f * p["c_prev"] + i * g
    return abs((f - i) * (p["c_prev"] - g)) < 0.1 * abs(c)


def _swap_or_no_tanh_scores(p: dict, answer: list[float]) -> bool:
    """Whether a slip lands within twice the tolerance of the key on every entry it changes, so it
    keeps the marks on this paper and not on another (the seventh audit: x_t = h_{t-1} made the
    input and recurrent weights interchangeable on one paper; C_t = -0.094 made tanh(C_t) = C_t to
    3 figures on another). The slips: w^x and w^h swapped (both entries), h_t = o_t C_t (h_t)."""
    swapped = lstm_cell_update({**p, "W_ih": p["W_hh"], "W_hh": p["W_ih"]})
    o = 1 / (1 + math.exp(-_lstm_pre(p)[3]))
    return all(map(slip_scores, swapped, answer)) or slip_scores(o * answer[0], answer[1])


@numeric("lstm.cell_update", _sample_lstm_cell, THREE_FIGURE_WORK, hint="two numbers, C_t then h_t")
@text(
    r"""
{% block question %}
A scalar LSTM cell (input and hidden size 1) computes, with $\sigma$ the logistic sigmoid and the notes' notation
($C_t$ the cell state, $\tilde C_t$ the candidate),
$$\begin{aligned} i_t &= \sigma(w^{x}_i x_t + w^{h}_i h_{t-1} + b_i), & f_t &= \sigma(w^{x}_f x_t + w^{h}_f h_{t-1} + b_f),\\
\tilde C_t &= \tanh(w^{x}_C x_t + w^{h}_C h_{t-1} + b_C), & o_t &= \sigma(w^{x}_o x_t + w^{h}_o h_{t-1} + b_o), \end{aligned}$$
and from them the new cell state and hidden state by the notes' LSTM update.
The weights, listed in the order $(i, f, \tilde C, o)$, are $w^{x} = {{ p.W_ih|vec }}$, $w^{h} = {{ p.W_hh|vec }}$,
$b = {{ p.b|vec }}$. For $x_t = {{ p.x|num }}$, $h_{t-1} = {{ p.h_prev|num }}$ and $C_{t-1} = {{ p.c_prev|num }}$,
what are $C_t$ and $h_t$? Intermediate results rounded to 3 significant figures are accepted.
{% endblock %}
{% block solution %}
Compute the four gates, then $C_t = f_t C_{t-1} + i_t \tilde C_t$ and $h_t = o_t \tanh(C_t)$: $C_t, h_t = {{ answer|vec }}$.
{% endblock %}
"""
)
# (a bias of 0, as b = (0, 0.4, 0, 0.2) on a paper rendered after the third audit, takes a sum
# away from two gates: the work differs between papers)
# (the sixth audit: h_{t-1} = 0 and C_{t-1} = 1 on one paper took about 8 operations away)
@skips_work(
    "a gate's pre-activation or bias is 0, x, h_{t-1} or C_{t-1} is 0 or +-1, swapping the input and"
    " forget gates moves C_t by under 10%, or swapped weights or a missing tanh(C_t) would score",
    lambda p, a: (
        any(near(x, 0) for x in _lstm_pre(p))
        or 0 in p["b"]
        or any(abs(p[k]) in (0, 1) for k in ("x", "h_prev", "c_prev"))
        or _gates_swap_unseen(p)
        or _swap_or_no_tanh_scores(p, a)
    ),
)
# four gates: 2 products and 2 sums each, a sigmoid (3) for i, f, o, a tanh for the candidate:
# 26; C_t (3), h_t (2)
@work(lambda v: (31, 5))
@cites("L5 §7.1", "L5 §7.2", "L5 §7.3", "L5 §7.4", "L5 §7.5", "L7-8 (Lecture 7) §五.1")
@exercises("lstm_gru.lstm_cell")
@mistake("no_output_gate", "h_t = o_t * tanh(C_t): the output gate is missing", _lstm_no_output_gate)
@own_entries()
def lstm_cell_update(p):
    """One LSTM step by hand."""
    zeros = torch.zeros(4, dtype=torch.float64)
    h, c = ref("lstm_gru").lstm_cell(
        t([[p["x"]]]),
        t([[p["h_prev"]]]),
        t([[p["c_prev"]]]),
        t([[w] for w in p["W_ih"]]),
        t([[w] for w in p["W_hh"]]),
        t(p["b"]),
        zeros,
    )
    return [floats(c)[0], floats(h)[0]]


def _sample_gates(rng):
    return {
        "f": decs(rng, 2, 0.05, 0.95, 2),
        "i": decs(rng, 2, 0.05, 0.95, 2),
        "g": decs(rng, 2, -0.9, 0.9, 2),
        "o": decs(rng, 2, 0.05, 0.95, 2),
        "c_prev": decs(rng, 2, -2, 2),
    }


@numeric(
    "lstm.gates_given",
    _sample_gates,
    FOUR_DIGITS,
    hint="four numbers: C_t (2 entries), then h_t (2 entries)",
)
@text(
    r"""
{% block question %}
In an LSTM with hidden size 2, at one step the gates are $f_t = {{ p.f|vec }}$ (forget), $i_t = {{ p.i|vec }}$ (input),
$\tilde C_t = {{ p.g|vec }}$ (candidate) and $o_t = {{ p.o|vec }}$ (output), and $C_{t-1} = {{ p.c_prev|vec }}$.
What are $C_t$ and $h_t$?
{% endblock %}
{% block solution %}
$C_t = f_t \odot C_{t-1} + i_t \odot \tilde C_t$ and $h_t = o_t \odot \tanh(C_t)$: ${{ answer|vec }}$.
{% endblock %}
"""
)
@cites("L5 §7.4", "L5 §7.5", "L5 §7.2", "L5 §7.3", "L7-8 (Lecture 7) §五.1")
@exercises("lstm_gru.lstm_cell")
@mistake("no_tanh", "h_t = o_t * tanh(C_t): tanh is missing", tanh=False)
def lstm_gates_given(p, tanh=True):
    """An LSTM step from given gates."""
    c = t(p["f"]) * t(p["c_prev"]) + t(p["i"]) * t(p["g"])  # the additive cell path
    h = t(p["o"]) * (torch.tanh(c) if tanh else c)
    return floats(c) + floats(h)


# --------------------------------------------------------------------------- GRU by hand


def _sample_gru(rng):
    return {
        "x": dec(rng, -1, 1, nonzero=True),
        "h_prev": dec(rng, -0.9, 0.9, nonzero=True),
        "W_ih": decs(rng, 3, -1, 1),
        "W_hh": decs(rng, 3, -1, 1),
        "b_ih": decs(rng, 3, -0.5, 0.5),
        "b_hh": decs(rng, 3, -0.5, 0.5, nonzero=True),
    }


@numeric("gru.update", _sample_gru, FOUR_DIGITS, hint="one number, h_t")
@text(
    r"""
{% block question %}
A scalar GRU cell in PyTorch's form computes, with weights listed in the order (reset $r$, update $z$, new $n$),
$$\begin{aligned} r &= \sigma(w^{x}_r x + b^{x}_r + w^{h}_r h_{t-1} + b^{h}_r), \quad z = \sigma(w^{x}_z x + b^{x}_z + w^{h}_z h_{t-1} + b^{h}_z),\\
n &= \tanh\big(w^{x}_n x + b^{x}_n + r\,(w^{h}_n h_{t-1} + b^{h}_n)\big), \quad h_t = (1 - z)\, n + z\, h_{t-1}. \end{aligned}$$
With $w^{x} = {{ p.W_ih|vec }}$, $w^{h} = {{ p.W_hh|vec }}$, $b^{x} = {{ p.b_ih|vec }}$, $b^{h} = {{ p.b_hh|vec }}$,
$x = {{ p.x|num }}$ and $h_{t-1} = {{ p.h_prev|num }}$, what is $h_t$?
(Note: the lecture notes apply $r$ to $h_{t-1}$ before the matrix product; here $r$ multiplies $w^{h}_n h_{t-1} + b^{h}_n$.)
{% endblock %}
{% block solution %}
Compute $r$, $z$, then $n$, then interpolate: $h_t = {{ answer|num }}$. With $z \to 1$ the old state is kept
(update gate), with $r \to 0$ the candidate ignores the past (reset gate).
{% endblock %}
"""
)
# r and z (2 products, 3 sums, a sigmoid: 8 each), n (7), h_t = (1-z) n + z h (4)
@work(lambda v: (27, 3))
@cites("L5 §8", "L5 §8.1", "L5 §8.2")
@exercises("lstm_gru.gru_cell")
@mistake(
    "notes_form",
    "this is the notes' form (r before the matrix product); the question uses PyTorch's r * (W_hn h + b_hn)",
    form="notes",
)
@mistake("swapped_z", "z keeps the old state: h = (1 - z) * n + z * h_prev", form="swapped")
def gru_update(p, form="pytorch"):
    """One GRU step by hand."""
    if form == "pytorch":
        h = ref("lstm_gru").gru_cell(
            t([[p["x"]]]),
            t([[p["h_prev"]]]),
            t([[w] for w in p["W_ih"]]),
            t([[w] for w in p["W_hh"]]),
            t(p["b_ih"]),
            t(p["b_hh"]),
        )
        return floats(h)[0]
    x, h = p["x"], p["h_prev"]
    pre = [p["W_ih"][k] * x + p["b_ih"][k] for k in range(3)]
    sig = lambda v: 1 / (1 + math.exp(-v))  # noqa: E731
    r = sig(pre[0] + p["W_hh"][0] * h + p["b_hh"][0])
    z = sig(pre[1] + p["W_hh"][1] * h + p["b_hh"][1])
    if form == "notes":  # r applied to h before the matrix product, as in the notes
        n = math.tanh(pre[2] + p["W_hh"][2] * (r * h) + p["b_hh"][2])
        return (1 - z) * n + z * h
    n = math.tanh(pre[2] + r * (p["W_hh"][2] * h + p["b_hh"][2]))
    return z * n + (1 - z) * h  # "swapped": the roles of z and 1 - z exchanged


# --------------------------------------------------------------------------- the cell-state path


def _path_symbols(p):
    return tuple(Sym(f"f{i}", 0.05, 0.99) for i in range(1, p["k"] + 1))


@formula("lstm.cell_path", lambda rng, form: {"k": int(form)}, _path_symbols)
@text(
    r"""
{% block question %}
In an LSTM, $C_s = f_s \odot C_{s-1} + i_s \odot \tilde C_s$. Treat the gates as constants and take one cell unit.
Writing {% for i in range(1, p.k + 1) %}`f{{ i }}`{{ ", " if not loop.last }}{% endfor %} for the forget gates
$f_{t-{{ p.k - 1 }}}, \dots, f_t$ of the last {{ p.k }} steps, give $\partial C_t / \partial C_{t-{{ p.k }}}$ along the cell path.
{% endblock %}
{% block solution %}
Each step multiplies by its forget gate and nothing else (no weight matrix, no squashing nonlinearity):
${{ answer|latex }}$. With forget gates near 1 the gradient survives many steps, like a ResNet skip connection in time.
{% endblock %}
"""
)
@cites("L7-8 (Lecture 7) §五.2", "L7-8 (Lecture 7) §六", "L5 §7.4", "L5 §7.2")
@exercises("lstm_gru.lstm_cell")
@forms("2", "3", "4")
@equivalents(
    lambda p: [
        "*".join(f"f{i}" for i in reversed(range(1, p["k"] + 1))),
        "exp(" + " + ".join(f"log(f{i})" for i in range(1, p["k"] + 1)) + ")",
    ]
)
@mistake("sum", "the factors multiply along the path", lambda p: sum(s.sympy() for s in _path_symbols(p)))
def lstm_cell_path(p):
    """The LSTM cell-state gradient path."""
    return sympy.Mul(*[s.sympy() for s in _path_symbols(p)])
