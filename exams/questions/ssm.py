"""State-space questions: Mamba's discretization, a selective scan by hand, a linear
recurrence, parallel-scan depth, the KV cache, and unrolling h_t = a_t h_{t-1} + b_t.

Validity (``model.fair_draw``): every draw keeps each named mistake outside the tolerance of
the key and every key entry clearly away from 0; the rules each question adds, and the forms
that are fixed per exam, are stated above its generator.
"""

from __future__ import annotations

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
from seqlab.exam.bank.helpers import THREE_FIGURES_RELATIVE, dec, decs, floats, ref, t
from seqlab.exam.model import EXACT, FOUR_DIGITS
from seqlab.exam.safeexpr import Sym


def _sample_disc(rng):
    return {"delta": dec(rng, 0.1, 2.0), "A": dec(rng, -2.0, -0.1), "B": dec(rng, -1.5, 1.5, nonzero=True)}


def _euler(p):
    return [1 + p["delta"] * p["A"], p["delta"] * p["B"]]


@numeric("ssm.discretize", _sample_disc, FOUR_DIGITS, hint="two numbers, A_bar then B_bar")
@text(
    r"""
{% block question %}
Mamba discretizes the continuous state-space model $h'(t) = A h(t) + B u(t)$ with step size $\Delta$ as
$\bar A = \exp(\Delta A)$ (zero-order hold) and $\bar B = \Delta B$ (Euler), giving $h_t = \bar A h_{t-1} + \bar B u_t$.
For one channel and one state with $\Delta = {{ p.delta|num }}$, $A = {{ p.A|num }}$ and $B = {{ p.B|num }}$, what are $\bar A$ and $\bar B$?
{% endblock %}
{% block solution %}
${{ answer|vec }}$. A large $\Delta$ makes $\bar A \to 0$ (the token overwrites the state), a small $\Delta$ keeps the
state: this input-dependent step is the selective mechanism.
{% endblock %}
"""
)
@cites("L5 §18.1", "L5 §18.2", "L5 §18")
@exercises("selective_scan.discretize")
@mistake("euler_A", "A_bar is exp(delta*A) (zero-order hold), not 1 + delta*A", _euler)
def discretize(p):
    """Discretizing a state-space model."""
    A_bar, B_bar = ref("selective_scan").discretize(t([[[p["delta"]]]]), t([[p["A"]]]), t([[[p["B"]]]]))
    return floats(A_bar) + floats(B_bar)


def _sample_scan(rng):
    return {
        "u": decs(rng, 2, -2, 2, nonzero=True),
        "delta": decs(rng, 2, 0.1, 1.5),
        "A": dec(rng, -2, -0.2),
        "B": decs(rng, 2, -1, 1, nonzero=True),
        "C": decs(rng, 2, -1, 1, nonzero=True),
        "D": dec(rng, -1, 1),
    }


@numeric("ssm.scan_output", _sample_scan, FOUR_DIGITS, hint="two numbers, y_1 and y_2")
@text(
    r"""
{% block question %}
A selective SSM with one channel and one state ($N = 1$) runs for two steps from $h_0 = 0$:
$h_t = \exp(\Delta_t A)\, h_{t-1} + \Delta_t B_t u_t$, $y_t = C_t h_t + D u_t$, with $A = {{ p.A|num }}$, $D = {{ p.D|num }}$,
inputs $u = {{ p.u|vec }}$, step sizes $\Delta = {{ p.delta|vec }}$, $B = {{ p.B|vec }}$ and $C = {{ p.C|vec }}$ (per step).
What are $y_1$ and $y_2$?
{% endblock %}
{% block solution %}
$h_1 = \Delta_1 B_1 u_1$, $y_1 = C_1 h_1 + D u_1$; $h_2 = e^{\Delta_2 A} h_1 + \Delta_2 B_2 u_2$, $y_2 = C_2 h_2 + D u_2$:
${{ answer|vec }}$.
{% endblock %}
"""
)
@cites("L5 §18.2", "L5 §18.1", "L7-8 (Lecture 7) §七")
@exercises("selective_scan.selective_scan")
@mistake("no_skip", "the skip term D*u_t is part of y_t", skip=False)
def scan_output(p, skip=True):
    """A selective scan by hand."""
    u, delta = t([[[x] for x in p["u"]]]), t([[[x] for x in p["delta"]]])
    B, C = t([[[x] for x in p["B"]]]), t([[[x] for x in p["C"]]])
    D = t([p["D"]]) if skip else None
    return floats(ref("selective_scan").selective_scan(u, delta, t([[p["A"]]]), B, C, D))


def _sample_linear(rng):
    return {"a": decs(rng, 3, -1.5, 1.5, nonzero=True), "b": decs(rng, 3, -2, 2), "h0": dec(rng, -2, 2, nonzero=True)}


def _from_zero(p):
    return floats(ref("selective_scan").linear_scan(t([[p["a"]]]), t([[p["b"]]])))


@numeric("ssm.linear_recurrence", _sample_linear, FOUR_DIGITS, hint="three numbers, h_1, h_2, h_3")
@text(
    r"""
{% block question %}
The linear recurrence $h_t = a_t h_{t-1} + b_t$ starts at $h_0 = {{ p.h0|num }}$ with
$a = {{ p.a|vec }}$ and $b = {{ p.b|vec }}$ ($t = 1, 2, 3$). What are $h_1, h_2, h_3$?
{% endblock %}
{% block solution %}
${{ answer|vec }}$. The same values come from prefix products of $a$ and prefix sums, which a parallel scan computes.
{% endblock %}
"""
)
# the third audit's Q43: b_1 = 0 and a_2 = 1 took two of the six operations away on one paper
@skips_work(
    "a coefficient a_t or h_0 is 1 or -1, or an input b_t is 0: that step skips a product or a sum",
    lambda p, a: any(abs(x) == 1 for x in (*p["a"], p["h0"])) or any(x == 0 for x in p["b"]),
)
# h_t = a_t h_{t-1} + b_t: a product and a sum per step
@work(lambda v: (2 * len(v.answer), 0))
@cites("L5 §18.3", "L5 §5.1", "L5 §18.1")
@exercises("selective_scan.linear_scan")
@mistake("no_h0", "the recurrence starts from the given h_0, not from 0", _from_zero)
@own_entries()
def linear_recurrence(p):
    """A few steps of a linear recurrence."""
    return floats(ref("selective_scan").linear_scan(t([p["a"]]), t([p["b"]]), t([p["h0"]])))


def _scan_depth(T: int) -> int:
    """Levels of a Hillis-Steele scan: combine with the element 1, 2, 4, ... positions back."""
    levels, offset = 0, 1
    while offset < T:
        levels, offset = levels + 1, offset * 2
    return levels


@numeric(
    "ssm.scan_depth",
    lambda rng: {"T": rng.choice((100, 1000, 1024, 4096, 5000, 65536, 100000))},
    EXACT,
    hint="two integers",
)
@text(
    r"""
{% block question %}
The recurrence $h_t = a_t h_{t-1} + b_t$ over $T = {{ p.T }}$ steps is computed (1) with a loop over time and
(2) with a parallel (Hillis-Steele) scan, where level $k$ combines every element with the one $2^k$ positions
earlier, all elements at once. How many sequential steps does each take?
{% endblock %}
{% block solution %}
The loop takes $T$ steps; the scan $\lceil \log_2 T \rceil$ levels: {{ answer|map("int")|join(", ") }}.
{% endblock %}
"""
)
@cites("L5 §18.3", "L7-8 (Lecture 7) §七", "L5 §19")
@exercises("selective_scan.linear_scan")
def scan_depth(p):
    """Sequential steps of a parallel scan."""
    return [float(p["T"]), float(_scan_depth(p["T"]))]


def _sample_kv(rng):
    return {
        "layers": rng.randint(6, 48),  # wide ranges: no size shared by a class (test_sharing.py)
        "E": 256 * rng.randint(2, 24),
        "T": 1024 * rng.randint(1, 32),
        # no 2 bytes: forgetting the bytes then halves the key, as the named keys_only mistake does,
        # and earns its credit on that paper only (the seventh audit)
        "bytes": rng.choice((4, 8)),
    }


@numeric("ssm.kv_cache", _sample_kv, THREE_FIGURES_RELATIVE, hint="one number, in MiB (2^20 bytes)")
@text(
    r"""
{% block question %}
A decoder-only Transformer with {{ p.layers }} layers and width $E = {{ p.E }}$ generates text and caches, for every
layer and every past token, one key and one value vector of size $E$, at {{ p.bytes }} bytes per number.
How many MiB ($2^{20}$ bytes) does the cache take after $T = {{ p.T }}$ tokens (one sequence)? Intermediate results rounded to 3 significant figures are accepted.
{% endblock %}
{% block solution %}
$2 \cdot L \cdot E \cdot T \cdot \text{bytes} / 2^{20} = {{ answer|num }}$ MiB, growing linearly with $T$.
{% endblock %}
"""
)
# 2 L E T bytes / 2^20: four products, a power, a quotient
@work(lambda v: (6, 0))
@cites("L7-8 (Lecture 7) §七", "L5 §18", "L5 §14", "W8 §14")
@exercises("selective_scan.selective_scan")
@mistake("keys_only", "the cache stores both keys and values", both=False)
def kv_cache(p, both=True):
    """The memory of a decoder's KV cache."""
    per_token = (2 if both else 1) * p["layers"] * p["E"] * p["bytes"]  # a key and a value per layer
    return per_token * p["T"] / 2**20


def _unroll_symbols(p):
    names = [f"a{i}" for i in range(1, p["T"] + 1)] + (
        [f"b{i}" for i in range(1, p["T"] + 1)] + ["h0"] if p["what"] == "state" else []
    )
    return tuple(Sym(n, -2, 2) for n in names)


def _unroll_equivalents(p):
    a = [f"a{i}" for i in range(1, p["T"] + 1)]
    if p["what"] == "state":
        return [
            sympy.sstr(sympy.expand(unroll(p))),
            "h0*" + "*".join(a) + " + " + sympy.sstr(sympy.expand(unroll(p, drop_h0=True))),
        ]
    return ["*".join(reversed(a)), "(" + "*".join(a) + ")^2/(" + "*".join(a) + ")"]


@formula("ssm.unroll", lambda rng, form: {"T": 3, "what": form}, _unroll_symbols)
@text(
    r"""
{% block question %}
{% if p.what == "state" %}
Unroll $h_t = a_t h_{t-1} + b_t$ for $T = {{ p.T }}$ steps: give $h_{ {{- p.T -}} }$ as a formula in `h0`,
{% for i in range(1, p.T + 1) %}`a{{ i }}`, {% endfor %}{% for i in range(1, p.T + 1) %}`b{{ i }}`{{ ", " if not loop.last }}{% endfor %}.
{% else %}
For $h_t = a_t h_{t-1} + b_t$, give $\partial h_{ {{- p.T -}} } / \partial h_0$ as a formula in
{% for i in range(1, p.T + 1) %}`a{{ i }}`{{ ", " if not loop.last }}{% endfor %}.
{% endif %}
{% endblock %}
{% block solution %}
${{ answer|latex }}$: a prefix product (times $h_0$) plus prefix-weighted sums, the structure a parallel scan exploits.
{% endblock %}
"""
)
@cites("L5 §18.3", "L5 §18.2")
@exercises("selective_scan.linear_scan")
@forms("state", "gradient")
@equivalents(_unroll_equivalents)
@mistake(
    "no_h0",
    "the initial state h0 contributes a1*...*aT*h0",
    drop_h0=True,
    when=lambda p: p["what"] == "state",
)
def unroll(p, drop_h0=False):
    """Unrolling a time-varying linear recurrence."""
    s = {x.name: x.sympy() for x in _unroll_symbols(p)}
    if p["what"] == "gradient":
        return sympy.Mul(*[s[f"a{i}"] for i in range(1, p["T"] + 1)])
    h = 0 if drop_h0 else s["h0"]
    for i in range(1, p["T"] + 1):
        h = s[f"a{i}"] * h + s[f"b{i}"]
    return h
