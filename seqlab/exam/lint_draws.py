"""The bank lint's rule on draws: a draw that degenerates, so one student's question is easier.

A numeric question's draw is degenerate when

- a key entry is an exact power of 10 other than 1 (0.1, 10, 100): the arithmetic collapses to a
  shift of the decimal point, and a student who guesses the round number is right;
- a weight the question prints is exactly 0 (a parameter named ``W...`` or ``w...``: ``W_hh``,
  ``W1``, the optimised ``w``): the products it enters are skipped;
- the question's own rule in ``SKIPS_WORK`` names it: a branch of the work the question asks
  for is not needed on this draw (``rnn.sample_token`` with u below p_0 needs no cumulative sum;
  a pre-activation of exactly 0, tanh(0) = 0; two values equal in the entry the output mixes);
- one entry of the key follows from another: two entries equal, or (computed entries) one minus
  the other (a two-class softmax gradient); of a shape, two equal sizes, so an axis swap is not
  seen (the entries of a softmax gradient over three classes sum to 0: such a question asks for
  two of them, ``rnn.bptt_output_grad``; ``rnn.ce_grad``, off the final, still asks for all);
- the tolerance is loose on an entry: its absolute part is more than ``LOOSE`` of the entry
  (0.02 on C_t = 0.076 is +-27%), so work that is wrong by a fifth still scores.

``draws.draw`` refuses such draws (as it refuses an unfair one) and draws again, so the rule is
kept by construction; ``bank_lint.lint_bank_draws`` checks it over many draws of every question and form,
which is what finds a generator whose draws it does not reach (``tests/exam/test_lint_rules.py``).
Exact questions (counts, shapes, indices) are not judged on powers of 10: a count of 10 is a count.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from .model import NUMERIC, Question


def _bptt_pre(p: dict) -> list[float]:
    """The two pre-activations of the scalar BPTT questions' steps."""
    h, out = p["h0"], []
    for x in p["x"]:
        a = p["u"] * x + p["w"] * h + p["b"]
        out.append(a)
        h = math.tanh(a)
    return out


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


def _qkv_values(p: dict) -> list[list[float]]:
    """v_j = W_V x_j for the two tokens (rows of X)."""
    return [[sum(w * x for w, x in zip(row, xj)) for row in p["W_V"]] for xj in p["X"]]


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


# A 3-figure angle is off by up to 0.05% of it, and the sine by as much in absolute, and the
# frequency's own 3 figures (log 10000, the exponent) add theirs: the simulated 3-figure student
# (tests/exam/test_three_figures.py) missed by 2.6 tolerances on 300 draws with angles up to 12
# and by 0.31 with angles up to 4 (the audit's ill-conditioned papers had 54/10^0.75 = 9.6).
PE_MAX_ANGLE = 4.0
# The fifth audit: a small learning rate moved w by 0.05-0.07, so the relative tolerance on w_2
# was 7-12% of the move on one paper and 0.2-0.8% on the others, and a wrong update scored half
# there only. A two-step optimizer draw is kept when its tolerance is at most MOVE_SHARE of how
# far each entry of w moved.
MOVE_SHARE = 0.05


def _loose_on_the_move(p: dict, a: Any) -> bool:
    """The tolerance is loose on the move, or (the sixth audit) a gradient's two entries are equal."""
    equal = any(len(set(p[g])) < len(p[g]) for g in ("g1", "g2"))
    return equal or any(0.01 * abs(w2) > MOVE_SHARE * abs(w2 - w0) for w0, w2 in zip(p["w"], a))


# The work a question asks for and the draws that skip it, per question: (what is skipped, rule).
SKIPS_WORK: dict[str, tuple[str, Callable[[dict, Any], bool]]] = {
    "rnn.sample_token": ("u < p_0: token 0 needs no cumulative sum", lambda p, a: a[0] == 0),
    "opt.momentum_steps": (
        f"the tolerance on w_2 is over {MOVE_SHARE:.0%} of how far w moved (a wrong update scores), or a"
        " gradient's entries are equal",
        _loose_on_the_move,
    ),
    "opt.rmsprop_steps": (
        f"the tolerance on w_2 is over {MOVE_SHARE:.0%} of how far w moved (a wrong update scores), or a"
        " gradient's entries are equal",
        _loose_on_the_move,
    ),
    "rnn.bptt_output_grad": (
        "a pre-activation is 0: h_t = tanh(0) = 0",
        lambda p, a: any(_near(x, 0) for x in _bptt_pre(p)),
    ),
    # the fourth audit: x_1 = x_2 on one paper (one product serves twice)
    # (the sixth audit: a 0 in b_y and a 1 in W_hy saved a few steps on one paper)
    "rnn.bptt_param_grads": (
        "a pre-activation is 0 (h_t = tanh(0) = 0), x_1 = x_2 (one product serves twice), or b_y has a 0 or W_hy a +-1",
        lambda p, a: (
            any(_near(x, 0) for x in _bptt_pre(p))
            or len(set(p["x"])) < len(p["x"])
            or 0 in p.get("c", ())
            or any(abs(v) == 1 for v in p["V"])
        ),
    ),
    # the fourth audit: two equal logits on two papers of three (one exponential fewer)
    "rnn.ce_loss": ("two logits are equal: one exponential serves twice", lambda p, a: len(set(p["logits"])) < 3),
    "rnn.bptt_hidden_grad": (
        "a pre-activation is 0: h_t = tanh(0) = 0",
        lambda p, a: any(_near(x, 0) for x in _bptt_pre(p)),
    ),
    # (a bias of 0, as b = (0, 0.4, 0, 0.2) on a paper rendered after the third audit, takes a sum
    # away from two gates: the work differs between papers)
    # (the sixth audit: h_{t-1} = 0 and C_{t-1} = 1 on one paper took about 8 operations away)
    "lstm.cell_update": (
        "a gate's pre-activation or bias is 0, x, h_{t-1} or C_{t-1} is 0 or +-1, or swapping the input and"
        " forget gates moves C_t by under 10%",
        lambda p, a: (
            any(_near(x, 0) for x in _lstm_pre(p))
            or 0 in p["b"]
            or any(abs(p[k]) in (0, 1) for k in ("x", "h_prev", "c_prev"))
            or _gates_swap_unseen(p)
        ),
    ),
    # the third audit's Q43: b_1 = 0 and a_2 = 1 took two of the six operations away on one paper
    "ssm.linear_recurrence": (
        "a coefficient a_t is 1 or -1, or an input b_t is 0: that step skips a product or a sum",
        lambda p, a: any(abs(x) == 1 for x in p["a"]) or any(x == 0 for x in p["b"]),
    ),
    # the third audit's Q9: B = D on two papers; a size that repeats another lets an axis be
    # read off the wrong one and still score
    "rnn.shapes": (
        "two of the sizes B, T, D, H (and C) are equal: an axis read off the wrong size still scores",
        lambda p, a: len({p["B"], p["T"], p["D"], p["H"], p["C"]}) < 5,
    ),
    # the fourth audit: x_2 = (0.5, 0) on one paper took half the multiply-adds of k_2 and v_2 away
    "attn.qkv_projection": (
        "v_1 and v_2 share an entry (that entry of y_1 needs no attention weight), or a token has a zero feature",
        lambda p, a: any(_near(x, y) for x, y in zip(*_qkv_values(p))) or any(x == 0 for row in p["X"] for x in row),
    ),
    "pos.sinusoidal_entry": (
        f"10000^(2i/d) is a power of 10 (no exponent to compute) or the angle exceeds {PE_MAX_ANGLE:g}"
        " (3-figure work on it moves the sine by more than the tolerance)",
        lambda p, a: (
            (4 * (p["j"] // 2) * 2) % p["d"] == 0 or p["p"] / 10000 ** (2 * (p["j"] // 2) / p["d"]) > PE_MAX_ANGLE
        ),
    ),
}
# The most the absolute part of a tolerance may be of a (nonzero) key entry: beyond it a method
# wrong by that share still scores (0.02 on 0.076). 10%: the 3-figure work the wide tolerances
# accept misses by at most 1% + 0.02, so an entry of 0.2 or more keeps its tolerance within 11%.
LOOSE = 0.1


def _entries(answer) -> list[float]:
    return [float(x) for x in answer] if isinstance(answer, (list, tuple)) else [float(answer)]


def power_of_ten(x: float) -> bool:
    if x == 0 or not math.isfinite(x):
        return False
    k = round(math.log10(abs(x)))
    return k != 0 and abs(x) == 10.0**k


def _weights(params: dict) -> Iterable[tuple[str, float]]:
    def leaves(value, name):
        if isinstance(value, bool):
            return
        if isinstance(value, (int, float)):
            yield name, float(value)
        elif isinstance(value, (list, tuple)):
            for x in value:
                yield from leaves(x, name)

    for name, value in params.items():
        if name[:1] in ("W", "w") and not name.startswith("width"):
            yield from leaves(value, name)


def degenerate(q: Question, params: dict, answer: Any) -> str:
    """Why this draw of ``q`` is degenerate, or "" (module doc)."""
    if q.kind != NUMERIC:
        return ""
    tol = q.tolerance
    exact = tol is not None and tol.rtol == 0 and tol.atol == 0
    entries = _entries(answer)
    if not exact:
        for e in entries:
            if power_of_ten(e):
                return f"the key entry {e:g} is an exact power of 10"
    related = _related_entries(entries, exact, "shape" in q.answer_hint)
    if related:
        return related
    if not exact and tol is not None:
        loose = [e for e in entries if e != 0 and tol.atol > LOOSE * abs(e)]
        if loose:
            return f"the tolerance's absolute {tol.atol:g} is more than {LOOSE:.0%} of the key entry {loose[0]:.4g}"
    zero = [name for name, x in _weights(params) if x == 0]
    if zero:
        return f"the weight {zero[0]} has an entry 0"
    skip = SKIPS_WORK.get(q.id)
    if skip and skip[1](params, answer if isinstance(answer, list) else entries):
        return skip[0]
    return ""


def _related_entries(entries: list[float], exact: bool, shape: bool) -> str:
    """Why one entry of the key follows from another ("" when none does; module doc). Integers
    other than a shape's sizes may repeat (a decoded token twice)."""
    if exact and not shape:
        return ""
    for i, a in enumerate(entries):
        for j in range(i + 1, len(entries)):
            b = entries[j]
            if _near(a, b) and (a != 0 or exact):
                return f"entries {i + 1} and {j + 1} are equal" + (": an axis swap is not seen" if exact else "")
            if not exact and a != 0 and _near(a, -b):
                return f"entry {j + 1} is minus entry {i + 1}"
    return ""
