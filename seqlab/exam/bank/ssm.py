"""State-space questions: Mamba's discretization, a selective scan by hand, a linear
recurrence, parallel-scan depth, the KV cache, and unrolling h_t = a_t h_{t-1} + b_t.

Validity (``model.fair_draw``): every draw keeps each named mistake outside the tolerance of
the key and every key entry clearly away from 0; the rules each question adds, and the forms
that are fixed per exam, are stated above its generator.
"""

from __future__ import annotations

import sympy

from ..model import EXACT, FOUR_DIGITS
from ..safeexpr import Sym
from ._util import THREE_FIGURES_RELATIVE, dec, decs, floats, ref, t
from .declare import cites, equivalents, exercises, forms, formula, mistake, numeric, own_entries


def _sample_disc(rng):
    return {"delta": dec(rng, 0.1, 2.0), "A": dec(rng, -2.0, -0.1), "B": dec(rng, -1.5, 1.5, nonzero=True)}


def _euler(p):
    return [1 + p["delta"] * p["A"], p["delta"] * p["B"]]


@numeric("ssm.discretize", _sample_disc, FOUR_DIGITS, hint="two numbers, A_bar then B_bar")
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
        "bytes": rng.choice((2, 4)),
    }


@numeric("ssm.kv_cache", _sample_kv, THREE_FIGURES_RELATIVE, hint="one number, in MiB (2^20 bytes)")
@cites("L7-8 (Lecture 7) §七", "L5 §18", "L5 §14", "W8 §14")
@exercises("selective_scan.selective_scan")
@mistake("keys_only", "the cache stores both keys and values", both=False)
def kv_cache(p, both=True):
    """The KV cache that Mamba avoids."""
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
