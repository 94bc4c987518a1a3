"""Transformer questions, positional encodings: an entry of the sinusoidal encoding (by hand and
as a formula) and a token's embedding plus its encoding.

Validity (``model.fair_draw``): see the package docstring.
"""

from __future__ import annotations

import math

import sympy
import torch

from seqlab.exam.bank.declare import (
    by_hand,
    cites,
    equivalents,
    exercises,
    formula,
    mistake,
    numeric,
    skips_work,
    text,
    work,
)
from seqlab.exam.bank.helpers import THREE_FIGURE_WORK, decs, floats, ref, slip_scores, t
from seqlab.exam.model import FOUR_DIGITS
from seqlab.exam.safeexpr import Sym

# --------------------------------------------------------------------------- positional encoding


# Validity: an odd column j >= 3, so i = (j - 1)/2 >= 1. In columns 0 and 1 the frequency is 1
# (no exponent to get right); in even columns j = 2i, so the ``column_exponent`` mistake (j/d
# for 2i/d) would give the key. Angles are in radians (the ``degrees`` mistake).
# Positions, widths and columns drawn wide: the validity rules (no power of 10, an angle of at
# most 4) leave few (p, d, j) in a narrow range, and one key was held by 11% of a class of 300
# with p <= 60, d in (8, 16, 64, 512) and j < 8 (tests/exam/test_sharing.py bounds it at 2%).
# Since the seventh audit a position off by one (counting from 1, the trap the conventions warn
# of) must land outside twice the tolerance, or it scored on some papers only: that holds for
# 111 of the (p, d, j) above with p up to 500, too few for the sharing bound (many d and i
# share a frequency 10000^(-2i/d), hence a key). Every even d_model from 16 to 98 and every
# multiple of 20 from 100 to 500, odd columns up to 31 and p up to 60 (valid positions stay
# under 55) give 1935 valid draws of 54540 and 1255 keys, the most common held by 0.8% of them.
# Every number printed has at most two significant digits, so none reads as another question's
# key (the lint's leak rule: a d_model of 216 on a paper whose token count was 216).
PE_WIDTHS = (*range(16, 100, 2), *range(100, 520, 20))


def _sample_pe(rng):
    d = rng.choice(PE_WIDTHS)
    return {"p": rng.randint(1, 60), "d": d, "j": rng.choice(range(3, min(32, d), 2))}


def _pe_wrong(p, swap=False, index_as_i=False, half=False, degrees=False):
    i = p["j"] // 2
    expo = (p["j"] if index_as_i else i if half else 2 * i) / p["d"]
    angle = p["p"] / 10000**expo
    if degrees:
        angle = math.radians(angle)
    sine = p["j"] % 2 == 0
    if swap:
        sine = not sine
    return math.sin(angle) if sine else math.cos(angle)


def pe_by_hand(p, r=lambda x: x) -> float:
    """The entry as a student computes it: 2i/d, 10000 to that power, the angle, its sine or
    cosine, each value written down passed through ``r`` (``three_figures``' rounding paths)."""
    i = p["j"] // 2
    angle = r(p["p"] / r(10000 ** r(2 * i / p["d"])))
    return r(math.sin(angle) if p["j"] % 2 == 0 else math.cos(angle))


# A 3-figure angle is off by up to 0.05% of it, and the sine by as much in absolute, and the
# frequency's own 3 figures (log 10000, the exponent) add theirs: the simulated 3-figure student
# (tests/exam/test_three_figures.py) missed by 2.6 tolerances on 300 draws with angles up to 12
# and by 0.31 with angles up to 4 (the audit's ill-conditioned papers had 54/10^0.75 = 9.6).
PE_MAX_ANGLE = 4.0


def _off_by_one_scores(p: dict, answer: float | list[float]) -> bool:
    """Whether PE at position p - 1 or p + 1 lands within twice the tolerance of the key: counting
    positions from 1 then keeps the marks on this paper and not on another (the seventh audit:
    0.2% and 1.4% off on two papers, 2.5% on the third)."""
    answer = answer[0] if isinstance(answer, list) else answer  # the lint hands the key as a list
    i, j = p["j"] // 2, p["j"]
    wave = math.sin if j % 2 == 0 else math.cos
    near_by = [wave(q / 10000 ** (2 * i / p["d"])) for q in (p["p"] - 1, p["p"] + 1)]
    return any(slip_scores(v, answer) for v in near_by)


@numeric("pos.sinusoidal_entry", _sample_pe, THREE_FIGURE_WORK, hint="one number")
@text(
    r"""
{% block question %}
The sinusoidal positional encoding with $d_{\text{model}} = {{ p.d }}$ is
$PE_{p, 2i} = \sin(p / 10000^{2i/d_{\text{model}}})$ and $PE_{p, 2i+1} = \cos(p / 10000^{2i/d_{\text{model}}})$
(positions $p$ and columns counted from 0; the angles are in radians). What is $PE_{ {{- p.p }}, {{ p.j -}} }$? Intermediate results rounded to 3 significant figures are accepted.
{% endblock %}
{% block solution %}
Column {{ p.j }} is {{ "even: a sine" if p.j % 2 == 0 else "odd: a cosine" }} with $i = {{ p.j // 2 }}$:
$PE_{ {{- p.p }}, {{ p.j -}} } = {{ answer|num }}$.
{% endblock %}
"""
)
@skips_work(
    f"10000^(2i/d) is a power of 10 (no exponent to compute), the angle exceeds {PE_MAX_ANGLE:g}"
    " (3-figure work on it moves the sine by more than the tolerance), or position p - 1 or p + 1 would score",
    lambda p, a: (
        (4 * (p["j"] // 2) * 2) % p["d"] == 0
        or p["p"] / 10000 ** (2 * (p["j"] // 2) / p["d"]) > PE_MAX_ANGLE
        or _off_by_one_scores(p, a)
    ),
)
@by_hand(pe_by_hand)
# the column's parity gives i, 2i/d (2), 10000^x, p / it, sin or cos: 6
@work(lambda v: (6, 2))
@cites("W8 §11.3", "W8 §11")
@exercises("positional.sinusoidal_encoding")
@mistake("swapped", "even columns are sines, odd columns cosines", lambda p: _pe_wrong(p, swap=True))
@mistake(
    "column_exponent", "columns 2i and 2i+1 share the frequency 1/10000^(2i/d)", lambda p: _pe_wrong(p, index_as_i=True)
)
@mistake("half_exponent", "the exponent is 2i/d, not i/d", lambda p: _pe_wrong(p, half=True))
@mistake("degrees", "the angle is in radians", lambda p: _pe_wrong(p, degrees=True))
def sinusoidal_entry(p):
    """An entry of the sinusoidal positional encoding."""
    pe = ref("positional").sinusoidal_encoding(p["p"] + 1, p["d"], dtype=torch.float64)
    return float(pe[p["p"], p["j"]])


def _pe_symbols(p):
    return (Sym("p", 0, 50, integer=True), Sym("i", 0, 8, integer=True), Sym("d", 16, 64, integer=True))


@formula("pos.sinusoidal_formula", lambda rng: {"column": rng.choice(("even", "odd"))}, _pe_symbols)
@text(
    r"""
{% block question %}
Give the sinusoidal positional encoding $PE_{p,\,{{ "2i+1" if p.column == "odd" else "2i" }}}$ of Vaswani et al.
as a formula in the position `p`, the frequency index `i` and the model width `d`.
{% endblock %}
{% block solution %}
${{ answer|latex }}$.
{% endblock %}
"""
)
@cites("W8 §11.3")
@exercises("positional.sinusoidal_encoding")
@equivalents(
    lambda p: [
        f"{'cos' if p['column'] == 'odd' else 'sin'}(p*10000^(-2*i/d))",
        f"{'cos' if p['column'] == 'odd' else 'sin'}(p*exp(-2*i*log(10000)/d))",
    ]
)
@mistake("swapped", "even columns are sines, odd columns cosines", swap=True)
def sinusoidal_formula(p, swap=False):
    """The sinusoidal encoding as a formula."""
    pp, i, d = (s.sympy() for s in _pe_symbols(p))
    angle = pp / sympy.Integer(10000) ** (2 * i / d)
    odd = p["column"] == "odd"
    return sympy.cos(angle) if odd != swap else sympy.sin(angle)


def _sample_embed(rng):
    return {"row": decs(rng, 4, -1, 1), "token": rng.randint(0, 9), "pos": rng.randint(0, 5)}


@numeric("pos.embed_entry", _sample_embed, FOUR_DIGITS, hint="four numbers")
@text(
    r"""
{% block question %}
A Transformer with $d = 4$ embeds token {{ p.token }} at position $t = {{ p.pos }}$ (counted from 0) as
$x_t = \sqrt{d}\, E[\text{token}] + PE_t$, with the sinusoidal encoding
$PE_{t,2i} = \sin(t/10000^{2i/d})$, $PE_{t,2i+1} = \cos(t/10000^{2i/d})$.
The embedding row of token {{ p.token }} is $E[{{ p.token }}] = {{ p.row|vec }}$. What is $x_t$?
{% endblock %}
{% block solution %}
$2 \cdot E[{{ p.token }}] + PE_{ {{- p.pos -}} } = {{ answer|vec }}$.
{% endblock %}
"""
)
@cites("W8 §11.1", "W8 §15.1", "L7-8 (Lecture 7) §三", "W8 §10.3")
@exercises("positional.embed_tokens", "positional.sinusoidal_encoding")
@mistake("no_scale", "the embedding is scaled by sqrt(d) = 2 before adding PE", scale=False)
def embed_entry(p, scale=True):
    """Token embedding plus positional encoding."""
    d = 4
    V = 10
    E = torch.zeros(V, d, dtype=torch.float64)
    E[p["token"]] = t(p["row"])
    pe = ref("positional").sinusoidal_encoding(p["pos"] + 1, d, dtype=torch.float64)
    tokens = torch.full((1, p["pos"] + 1), p["token"], dtype=torch.int64)
    if not scale:
        return floats(E[p["token"]] + pe[p["pos"]])
    return floats(ref("positional").embed_tokens(tokens, E, pe)[0, p["pos"]])
