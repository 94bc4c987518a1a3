"""Vanilla RNN questions: parameter counts, shapes, a forward step, the loss, BPTT gradients,
vanishing/exploding gradients, truncated BPTT, the embedding lookup and greedy decoding.

Validity (``model.fair_draw``): every draw keeps each named mistake outside the tolerance of
the key and every key entry clearly away from 0; the rules each question adds, and the forms
that are fixed per exam, are stated above its generator.
"""
from __future__ import annotations

import math

import sympy
import torch

from ..model import EXACT, FOUR_DIGITS, NUMERIC, REGISTRY, SYMBOLIC, Mistake, Tolerance, fair_draw, question
from ..safeexpr import Sym
from ._util import dec, decs, floats, mat, ref, shape_numel, t


def _rnn_shapes(D, H, C, output=True):
    shapes = {"W_xh": (H, D), "W_hh": (H, H), "b_h": (H,)}
    if output:
        shapes.update({"W_hy": (C, H), "b_y": (C,)})
    return shapes


# --------------------------------------------------------------------------- parameter count

def _sample_count(rng):
    return {"D": rng.choice((8, 16, 32, 50, 64, 100)), "H": rng.choice((16, 32, 64, 128, 256)),
            "C": rng.choice((10, 27, 65, 100)), "T": rng.choice((20, 50, 100, 1000))}


def _count_mistakes(p):
    full = shape_numel(_rnn_shapes(p["D"], p["H"], p["C"]))
    no_bias = shape_numel({k: v for k, v in _rnn_shapes(p["D"], p["H"], p["C"]).items() if not k.startswith("b")})
    return {"times_T": Mistake(float(full * p["T"]), "the weights are shared by all time steps: the count does not grow with T"),
            "no_bias": Mistake(float(no_bias), "the two bias vectors b_h and b_y count too")}


@question("rnn.param_count", kind=NUMERIC, title="Parameters of an Elman RNN",
          sections=("L5 §2.1", "W8 §2.2", "L7-8 (Lecture 7) §一.2", "L7-8 (Lecture 7) §四"),
          sample=_sample_count, tolerance=EXACT, mistakes=_count_mistakes,
          exercises=("rnn.rnn_forward", "rnn.rnn_bptt"), answer_hint="an integer")
def param_count(p):
    return float(shape_numel(_rnn_shapes(p["D"], p["H"], p["C"])))


def _count_sym_symbols(p):
    return tuple(Sym(n, 1, 64, integer=True) for n in (("D", "H", "C") if p["output"] else ("D", "H")))


# Forms: with or without the output layer (one more term to count); one per exam.
@question("rnn.param_count_formula", kind=SYMBOLIC, title="RNN parameter count as a formula", sections=("L5 §2.1", "L5 §0"),
          sample=lambda rng, form: {"output": form == "with_output"}, symbols=_count_sym_symbols,
          forms=("with_output", "hidden_only"),
          exercises=("rnn.rnn_forward",),
          mistakes=lambda p: {"no_bias": Mistake(_count_formula(p, bias=False), "the bias vectors count too")},
          equivalents=lambda p: ["H*(D + H + 1) + C*(H + 1)", "(D+H+1)*H + C*H + C"] if p["output"] else ["H*(D+H+1)", "H^2 + H*D + H"])
def param_count_formula(p):
    return _count_formula(p)


def _count_formula(p, bias=True):
    syms = [s.sympy() for s in _count_sym_symbols(p)] + [None]
    shapes = _rnn_shapes(syms[0], syms[1], syms[2], output=p["output"])
    return sympy.expand(sum(math.prod(s) for k, s in shapes.items() if bias or not k.startswith("b")))


# --------------------------------------------------------------------------- one forward step

def _sample_cell(rng):
    return {"x": decs(rng, 2, -1, 1), "h_prev": decs(rng, 2, -1, 1), "W_xh": mat(rng, 2, 2),
            "W_hh": mat(rng, 2, 2), "b_h": decs(rng, 2, -0.5, 0.5)}


def _cell_pre(p):
    return floats(t(p["x"]) @ t(p["W_xh"]).T + t(p["h_prev"]) @ t(p["W_hh"]).T + t(p["b_h"]))


@question("rnn.cell_step", kind=NUMERIC, title="One step of a vanilla RNN",
          sections=("W8 §2.2", "L5 §2.1", "L7-8 (Lecture 7) §一.2", "W8 §3"),
          sample=_sample_cell, tolerance=FOUR_DIGITS, exercises=("rnn.rnn_cell",),
          mistakes=lambda p: {"no_tanh": Mistake(_cell_pre(p), "that is the pre-activation; apply tanh")},
          answer_hint="two numbers, the entries of h_t")
def cell_step(p):
    h = ref("rnn").rnn_cell(t([p["x"]]), t([p["h_prev"]]), t(p["W_xh"]), t(p["W_hh"]), t(p["b_h"]))
    return floats(h)


# --------------------------------------------------------------------------- shapes

# Forms: the four task types ask for different amounts of thought (only the bidirectional one
# computes an entry), so the exam fixes one for every student.
SHAPE_CASES = ("many_to_many", "many_to_one", "bidirectional", "logits")


def _sample_shapes(rng, form):
    return {"case": form, "B": rng.randint(2, 8), "T": rng.randint(3, 12),
            "D": rng.choice((4, 6, 8)), "H": rng.choice((5, 10, 12)), "C": rng.choice((3, 7, 11))}


@question("rnn.shapes", kind=NUMERIC, title="Shapes in RNN task types",
          sections=("W8 §3.1", "W8 §3.2", "L5 §1.1", "L5 §10", "L7-8 (Lecture 7) §一.1", "W8 §3"),
          sample=_sample_shapes, tolerance=EXACT, forms=SHAPE_CASES,
          exercises=("rnn.rnn_forward", "rnn.birnn_forward"), answer_hint="the shape as integers, e.g. 2, 3, 4")
def shapes(p):
    R = ref("rnn")
    B, T, D, H, C = p["B"], p["T"], p["D"], p["H"], p["C"]
    x, h0 = torch.zeros(B, T, D, dtype=torch.float64), torch.zeros(B, H, dtype=torch.float64)
    cell = {"W_xh": torch.zeros(H, D, dtype=torch.float64), "W_hh": torch.zeros(H, H, dtype=torch.float64),
            "b_h": torch.zeros(H, dtype=torch.float64)}
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


@question("rnn.ce_loss", kind=NUMERIC, title="Cross-entropy of one prediction",
          sections=("L5 §2.2", "W8 §4", "L7-8 (Lecture 7) §二.1"), sample=_sample_ce, tolerance=FOUR_DIGITS,
          exercises=("rnn.softmax_cross_entropy",),
          mistakes=lambda p: {"log2": Mistake(float(_ce(p)) / math.log(2), "the loss uses the natural log, not log2")},
          answer_hint="one number")
def ce_loss(p):
    return float(_ce(p))


def _ce_grad(p):
    logits = t([p["logits"]]).requires_grad_(True)
    loss = ref("rnn").softmax_cross_entropy(logits, torch.tensor([p["target"]]))
    (g,) = torch.autograd.grad(loss, logits)   # autograd through the reference: the exact gradient
    return floats(g)


@question("rnn.ce_grad", kind=NUMERIC, title="Gradient of softmax cross-entropy",
          sections=("L5 §3.2",), sample=_sample_ce, tolerance=FOUR_DIGITS,
          exercises=("rnn.softmax_cross_entropy", "rnn.rnn_bptt"),
          mistakes=lambda p: {"sign": Mistake([-x for x in _ce_grad(p)], "the sign is flipped: the gradient is p - y")},
          answer_hint="three numbers, dL/do_0, dL/do_1, dL/do_2")
def ce_grad(p):
    return _ce_grad(p)


def _ce_sym_symbols(p):
    return tuple(Sym(f"o{i}", -2.0, 2.0) for i in range(1, p["C"] + 1))


# Forms: the logit of the target class (p_j - 1) or of another class (p_j); one per exam.
def _sample_ce_sym(rng, form):
    C = rng.choice((2, 3, 4))
    y = rng.randint(1, C)
    j = y if form == "target" else rng.choice([i for i in range(1, C + 1) if i != y])
    return {"C": C, "y": y, "j": j}


def _ce_sym(p, sign=1):
    o = [s.sympy() for s in _ce_sym_symbols(p)]
    pj = sympy.exp(o[p["j"] - 1]) / sum(sympy.exp(x) for x in o)
    return sign * (pj - (1 if p["j"] == p["y"] else 0))


@question("rnn.ce_grad_formula", kind=SYMBOLIC, title="Softmax cross-entropy gradient as a formula",
          sections=("L5 §3.2", "L5 §20"), sample=_sample_ce_sym, symbols=_ce_sym_symbols, forms=("target", "other"),
          exercises=("rnn.softmax_cross_entropy", "rnn.rnn_bptt"),
          mistakes=lambda p: {"sign": Mistake(_ce_sym(p, -1), "the sign is flipped: the gradient is p - y")},
          equivalents=lambda p: [
              "1/(1 + " + " + ".join(f"exp(o{i} - o{p['j']})" for i in range(1, p["C"] + 1) if i != p["j"]) + ")"
              + (" - 1" if p["j"] == p["y"] else ""),
              "exp(o{j})*(".format(j=p["j"]) + " + ".join(f"exp(o{i})" for i in range(1, p["C"] + 1)) + ")^(-1)"
              + (" - 1" if p["j"] == p["y"] else ""),
          ])
def ce_grad_formula(p):
    return _ce_sym(p)


# --------------------------------------------------------------------------- BPTT by hand

def _sample_bptt(rng, targets_of=("b_y", "W_hy")):
    while True:
        V = [dec(rng, -1, 1, nonzero=True), dec(rng, -1, 1, nonzero=True)]
        if abs(V[0] - V[1]) >= 0.4:   # with V_0 = V_1 no gradient reaches h: a degenerate question
            break
    return {"x": decs(rng, 2, -1, 1, nonzero=True), "y": [rng.randint(0, 1), rng.randint(0, 1)],
            "h0": dec(rng, -0.5, 0.5, nonzero=True), "u": dec(rng, -1, 1, nonzero=True),
            "w": dec(rng, -1, 1, nonzero=True), "b": dec(rng, -0.5, 0.5), "V": V,
            "c": decs(rng, 2, -0.5, 0.5), "target": rng.choice(targets_of)}


def _bptt(p):
    params = {"W_xh": t([[p["u"]]]), "W_hh": t([[p["w"]]]), "b_h": t([p["b"]]),
              "W_hy": t([[p["V"][0]], [p["V"][1]]]), "b_y": t(p["c"])}
    x = t([[[p["x"][0]], [p["x"][1]]]])
    loss, grads = ref("rnn").rnn_bptt(x, torch.tensor([p["y"]]), t([[p["h0"]]]), params)
    return loss, grads


# Forms: which gradient is asked (each is a different sum over the steps); one per exam.
@question("rnn.bptt_output_grad", kind=NUMERIC, title="BPTT: output-layer gradient",
          sections=("L5 §3.3", "L5 §3.1", "L5 §3", "L7-8 (Lecture 7) §二.2"),
          sample=lambda rng, form: _sample_bptt(rng, (form,)), tolerance=FOUR_DIGITS, forms=("b_y", "W_hy"),
          exercises=("rnn.rnn_bptt",), answer_hint="two numbers, one per class")
def bptt_output_grad(p):
    return floats(_bptt(p)[1][p["target"]])


@question("rnn.bptt_hidden_grad", kind=NUMERIC, title="BPTT: recurrent-weight and initial-state gradients",
          sections=("L5 §3.4", "L5 §3.5", "L5 §3", "L7-8 (Lecture 7) §二.2", "L5 §20"),
          sample=lambda rng, form: _sample_bptt(rng, (form,)), tolerance=FOUR_DIGITS,
          forms=("W_hh", "h0", "b_h", "W_xh"),
          exercises=("rnn.rnn_bptt",), answer_hint="one number")
def bptt_hidden_grad(p):
    return floats(_bptt(p)[1][p["target"]])[0]


# Validity: never the last step t = T, where only the output path remains (no recursion to know);
# ``last`` stays a parameter so the question's text keeps both readings documented.
def _sample_recursion(rng):
    return {"last": False}


def _recursion_symbols(p):
    base = (Sym("v", -2, 2), Sym("p_t", 0.05, 0.95), Sym("y_t", 0, 1, integer=True))
    return base if p["last"] else base + (Sym("w", -2, 2), Sym("h_next", -0.9, 0.9),
                                          Sym("g_next", -2, 2))


def _recursion(p, form="right"):
    s = {x.name: x.sympy() for x in _recursion_symbols(p)}
    out = s["v"] * (s["p_t"] - s["y_t"])
    if not p["last"]:
        deriv = (1 - s["h_next"] ** 2) if form != "no_tanh" else 1
        out = out + s["w"] * deriv * s["g_next"]
    return out


@question("rnn.hidden_grad_recursion", kind=SYMBOLIC, title="The hidden-state gradient recursion",
          sections=("L5 §3.4", "L5 §20"), sample=_sample_recursion, symbols=_recursion_symbols,
          exercises=("rnn.rnn_bptt",),
          mistakes=lambda p: {} if p["last"] else {
              "no_tanh": Mistake(_recursion(p, "no_tanh"), "the path through h_{t+1} = tanh(a_{t+1}) carries tanh' = 1 - h_{t+1}^2")},
          equivalents=lambda p: ["v*p_t - v*y_t"] if p["last"] else
          ["v*p_t - v*y_t + w*g_next - w*g_next*h_next^2", "(p_t - y_t)*v + (1 - h_next)*(1 + h_next)*w*g_next"])
def hidden_grad_recursion(p):
    return _recursion(p)


# --------------------------------------------------------------------------- vanishing / exploding

def _sample_eigen(rng):
    direction = rng.choice(("plus", "minus"))
    while True:
        a, b = dec(rng, -1, 1.2), dec(rng, -0.6, 0.6, nonzero=True)
        k = rng.choice((5, 10, 20, 30))
        lam = abs(a + b if direction == "plus" else a - b)     # the eigenvalue along the chosen direction
        # clearly exploding or vanishing, but a factor a calculator shows without underflow
        if 0.3 <= lam <= 1.6 and abs(lam - 1) > 0.05 and 1e-4 <= lam ** k <= 1e5:
            break
    return {"a": a, "b": b, "k": k, "direction": direction}


def _eigen(p, power=True):
    W = t([[p["a"], p["b"]], [p["b"], p["a"]]])
    u = t([1.0, 1.0 if p["direction"] == "plus" else -1.0])
    if not power:
        lam = float((W @ u).norm() / u.norm())
        return lam * p["k"]
    grad = torch.linalg.matrix_power(W.T, p["k"]) @ u   # k steps of dL/dh_{t-1} = W^T dL/dh_t
    return float(grad.norm() / u.norm())


@question("rnn.eigen_growth", kind=NUMERIC, title="Exploding and vanishing gradients",
          sections=("L5 §5.1", "L5 §5", "L7-8 (Lecture 7) §四", "L5 §20"), sample=_sample_eigen,
          tolerance=Tolerance(rtol=1e-3, atol=0.0), exercises=("rnn.rnn_bptt",),
          mistakes=lambda p: {"linear": Mistake(_eigen(p, power=False), "the factor compounds: lambda^k, not k*lambda")},
          answer_hint="one number, the ratio of norms")
def eigen_growth(p):
    return _eigen(p)


def _sample_power(rng):
    return {"k": rng.randint(3, 12)}


@question("rnn.linear_power", kind=SYMBOLIC, title="Gradient through a linear recurrence", sections=("L5 §5.1",),
          sample=_sample_power, symbols=lambda p: (Sym("w", 0.3, 1.6),), exercises=("rnn.rnn_bptt",),
          mistakes=lambda p: {"linear": Mistake(p["k"] * Sym("w", 0.3, 1.6).sympy(),
                                                "the Jacobians multiply: w^k, not k*w")},
          equivalents=lambda p: [f"w^{p['k'] - 1}*w", f"exp({p['k']}*log(w))"])
def linear_power(p):
    return Sym("w", 0.3, 1.6).sympy() ** p["k"]


# Forms: the number of steps (2 or 3; one step has no chain), the same for every student of an exam.
def _tanh_symbols(p):
    return (Sym("w", -2, 2),) + tuple(Sym(f"h{i}", -0.9, 0.9) for i in range(1, p["k"] + 1))


def _tanh_jac(p, with_deriv=True):
    s = [x.sympy() for x in _tanh_symbols(p)]
    out = s[0] ** p["k"]
    if with_deriv:
        for h in s[1:]:
            out = out * (1 - h ** 2)
    return out


@question("rnn.tanh_jacobian", kind=SYMBOLIC, title="Gradient through tanh steps",
          sections=("L5 §5.2", "L5 §3.4", "L5 §6.2"), sample=lambda rng, form: {"k": int(form)}, forms=("2", "3"),
          symbols=_tanh_symbols, exercises=("rnn.rnn_bptt",),
          mistakes=lambda p: {"no_deriv": Mistake(_tanh_jac(p, False), "each step also multiplies by tanh' = 1 - h^2")},
          equivalents=lambda p: ["*".join(["w"] * p["k"] + [f"(1 - h{i})*(1 + h{i})" for i in range(1, p["k"] + 1)]),
                                 sympy.sstr(sympy.expand(_tanh_jac(p)))])
def tanh_jacobian(p):
    return _tanh_jac(p)


# --------------------------------------------------------------------------- truncated BPTT

# Validity: T is not a multiple of the chunk, so the last chunk is shorter (entry 3 is computed,
# not the chunk length copied from the question) and the count needs the ceiling.
def _sample_tbptt(rng):
    return {"T": rng.choice((100, 250, 1000, 1234, 500)), "chunk": rng.choice((16, 32, 35, 50, 64))}


def _tbptt_valid(p):
    return p["T"] % p["chunk"] != 0


@question("rnn.truncated_chunks", kind=NUMERIC, title="Truncated BPTT bookkeeping",
          sections=("L7-8 (Lecture 7) §二.3", "L7-8 (Lecture 7) §二"), sample=_sample_tbptt, tolerance=EXACT,
          valid=_tbptt_valid,
          exercises=("rnn.truncated_bptt",), answer_hint="three integers")
def truncated_chunks(p):
    starts = list(range(0, p["T"], p["chunk"]))          # the cuts truncated_bptt makes
    lengths = [min(p["chunk"], p["T"] - s) for s in starts]
    return [float(len(starts)), float(max(lengths)), float(lengths[-1])]


# --------------------------------------------------------------------------- embedding, decoding

def _sample_embedding(rng):
    return {"E": mat(rng, 4, 3, -2, 2), "k": rng.randint(0, 3)}


@question("rnn.embedding_lookup", kind=NUMERIC, title="One-hot times the embedding matrix",
          sections=("L7-8 (Lecture 7) §三", "W8 §4"), sample=_sample_embedding, tolerance=FOUR_DIGITS,
          exercises=("positional.embed_tokens", "rnn.greedy_decode"), answer_hint="three numbers")
def embedding_lookup(p):
    onehot = torch.nn.functional.one_hot(torch.tensor(p["k"]), 4).to(torch.float64)
    return floats(onehot @ t(p["E"]))


def _greedy_margin(p) -> float:
    """The smallest gap between the two best logits over the decoding steps (ties are fragile)."""
    params = {k: t(p[k]) for k in ("W_xh", "W_hh", "b_h", "W_hy", "b_y")}
    h, token, gaps = t([[0.0, 0.0]]), p["start"], []
    for _ in range(p["steps"]):
        h = torch.tanh(t(p["E"])[token] @ params["W_xh"].T + h @ params["W_hh"].T + params["b_h"])
        logits = (h @ params["W_hy"].T + params["b_y"])[0]
        top = torch.topk(logits, 2).values
        gaps.append(float(top[0] - top[1]))
        token = int(torch.argmax(logits))
    return min(gaps)


def _sample_greedy(rng):
    while True:
        p = {"E": mat(rng, 3, 2), "W_xh": mat(rng, 2, 2), "W_hh": mat(rng, 2, 2), "b_h": decs(rng, 2, -0.5, 0.5),
             "W_hy": mat(rng, 3, 2, -2, 2), "b_y": decs(rng, 3, -0.5, 0.5), "start": rng.randint(0, 2), "steps": 2}
        if _greedy_margin(p) > 0.1:
            return p


@question("rnn.greedy_decode", kind=NUMERIC, title="Greedy generation from a character RNN",
          sections=("W8 §4", "W8 §3.3", "L5 §4", "L7-8 (Lecture 7) §三"), sample=_sample_greedy, tolerance=EXACT,
          exercises=("rnn.greedy_decode",), answer_hint="two token indices")
def greedy_decode(p):
    params = {k: t(p[k]) for k in ("W_xh", "W_hh", "b_h", "W_hy", "b_y")}
    tokens = ref("rnn").greedy_decode(params, t(p["E"]), t([[0.0, 0.0]]), torch.tensor([p["start"]]), p["steps"])
    return [float(x) for x in tokens[0].tolist()]


# --------------------------------------------------------------------------- issue 12: exam focus
# BPTT gradients of the recurrent parameters (L5 §3.5) and sampling at generation time (W8 §4).


def _param_grads_by_hand(p, recursion=True, tanh_deriv=True, h_index=-1):
    """dL/du, dL/dw, dL/db of the scalar two-step RNN of ``_bptt_setup``, written out as in L5 §3.5;
    the keyword arguments switch on the named mistakes."""
    h = [p["h0"]]
    for x in p["x"]:
        h.append(math.tanh(p["u"] * x + p["w"] * h[-1] + p["b"]))
    dh_out = []
    for step in (1, 2):
        logits = [p["V"][0] * h[step] + p["c"][0], p["V"][1] * h[step] + p["c"][1]]
        top = max(logits)
        exp = [math.exp(z - top) for z in logits]
        probs = [e / sum(exp) for e in exp]
        probs[p["y"][step - 1]] -= 1.0
        dh_out.append(p["V"][0] * probs[0] + p["V"][1] * probs[1])
    deriv = [(1 - h[s] ** 2) if tanh_deriv else 1.0 for s in (1, 2)]
    delta2 = dh_out[1] * deriv[1]
    delta1 = (dh_out[0] + (p["w"] * delta2 if recursion else 0.0)) * deriv[0]
    prev = [h[0], h[1]] if h_index == -1 else [h[1], h[2]]
    return [delta1 * p["x"][0] + delta2 * p["x"][1], delta1 * prev[0] + delta2 * prev[1], delta1 + delta2]


def _param_grads_mistakes(p):
    return {
        "no_recursion": Mistake(_param_grads_by_hand(p, recursion=False),
                                "dL/dh_1 also receives w * delta_2 from step 2 (the hidden-state recursion, L5 §3.4)"),
        "no_tanh_deriv": Mistake(_param_grads_by_hand(p, tanh_deriv=False),
                                 "the gradient passes through tanh: multiply by 1 - h_t^2"),
        "h_t_not_h_prev": Mistake(_param_grads_by_hand(p, h_index=0),
                                  "dL/dw sums delta_t * h_{t-1} (the state the weight multiplied), not h_t"),
    }


# Validity (general rule): the three mistakes (no recursion, no tanh derivative, h_t for h_{t-1})
# are distinguishable from the key and each other, and no entry of the key accepts 0; the
# parameters are drawn as for the output-layer question.
def _sample_param_grads(rng):
    return _sample_bptt(rng, ("all",))


@question("rnn.bptt_param_grads", kind=NUMERIC, title="BPTT: gradients of u, w and b",
          sections=("L5 §3.5", "L5 §3.4", "L5 §3", "L7-8 (Lecture 7) §二.2"),
          sample=_sample_param_grads, tolerance=FOUR_DIGITS, mistakes=_param_grads_mistakes,
          exercises=("rnn.rnn_bptt",), answer_hint="dL/du, dL/dw, dL/db in this order")
def bptt_param_grads(p):
    grads = _bptt(p)[1]
    return [floats(grads["W_xh"])[0], floats(grads["W_hh"])[0], floats(grads["b_h"])[0]]


# Validity: the general rule, which with exact tolerances makes the key and the three named
# mistakes (greedy argmax, no temperature, multiplying by the temperature) four different tokens,
# so the feedback names the mistake made; and its own rule: u is at least 0.02 from every
# cumulative boundary, so rounding the probabilities to two places cannot move the answer.
# Four different tokens are rare (about 1 draw in 200 with u drawn freely), so u is drawn among
# the values 0.05-0.95 that make the draw valid (judged by model.fair_draw itself, the one rule):
# then about 1 draw of logits in 10 admits one, and the redraw loop finds it.
def _sample_token_params(rng):
    p = {"logits": decs(rng, 4, -2, 2), "temperature": rng.choice((0.5, 2.0))}
    valid_u = [k / 100 for k in range(5, 96) if _token_draw_valid({**p, "u": k / 100})]
    return {**p, "u": rng.choice(valid_u) if valid_u else dec(rng, 0.05, 0.95, places=2)}


def _token_draw_valid(p) -> bool:
    q = REGISTRY["rnn.sample_token"]
    return fair_draw(q, p, q.answer(p))


def _sample_token_valid(p):
    return min(abs(p["u"] - c) for c in _cumulative(p["logits"], p["temperature"])[:-1]) >= 0.02


def _cumulative(logits, temperature):
    # plain floats: validity and mistakes call this several times per draw, a tensor per call costs ~10 ms
    scaled = [z / temperature for z in logits]
    top = max(scaled)
    exp = [math.exp(z - top) for z in scaled]
    total, running, out = sum(exp), 0.0, []
    for e in exp:
        running += e / total
        out.append(running)
    return out


def _inverse_cdf(cumulative, u):
    return float(next(i for i, c in enumerate(cumulative) if u < c))


def _sample_token_mistakes(p):
    return {
        "greedy": Mistake(float(max(range(4), key=lambda i: p["logits"][i])),
                          "generation samples from the distribution; the argmax is greedy decoding"),
        "no_temperature": Mistake(_inverse_cdf(_cumulative(p["logits"], 1.0), p["u"]),
                                  "divide the logits by the temperature before the softmax"),
        "times_temperature": Mistake(_inverse_cdf(_cumulative([z * p["temperature"] for z in p["logits"]], 1.0), p["u"]),
                                     "the logits are divided by the temperature, not multiplied"),
    }


@question("rnn.sample_token", kind=NUMERIC, title="Sampling the next token at generation time",
          sections=("W8 §4", "W8 §3.3", "L5 §4"), sample=_sample_token_params, tolerance=EXACT,
          mistakes=_sample_token_mistakes, valid=_sample_token_valid, exercises=("rnn.greedy_decode",),
          answer_hint="a token index, 0-3")
def sample_token(p):
    return _inverse_cdf(_cumulative(p["logits"], p["temperature"]), p["u"])
