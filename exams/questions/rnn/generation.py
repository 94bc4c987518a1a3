"""Vanilla RNN questions, the embedding and generation: lookup, greedy decoding, sampling a token;
and the exam-focus BPTT parameter gradients, kept after them so the bank keeps its order
(``docs/coverage.md`` lists questions in registration order).

Validity (``model.fair_draw``): see the package docstring.
"""

from __future__ import annotations

import functools
import math

import torch

from seqlab.exam.bank.declare import (
    by_hand,
    cites,
    exercises,
    graded_steps,
    mistake,
    numeric,
    own_entries,
    skips_work,
    text,
    valid_when,
    work,
)
from seqlab.exam.bank.helpers import THREE_FIGURE_WORK, dec, decs, floats, mat, near, ref, t
from seqlab.exam.model import EXACT, FOUR_DIGITS, REGISTRY, fair_draw

from .gradients import BPTT_SETUP, _bptt, _sample_bptt, bptt_pre

# --------------------------------------------------------------------------- embedding, decoding


def _sample_embedding(rng):
    return {"E": mat(rng, 4, 3, -2, 2), "W_xh": mat(rng, 2, 3), "k": rng.randint(0, 3)}


# The answer is the input's term W_xh x_t of the hidden pre-activation, not the embedding row
# itself: a row of the printed E could be copied.
@numeric("rnn.embedding_lookup", _sample_embedding, FOUR_DIGITS, hint="two numbers, the entries of W_xh x_t")
@text(
    r"""
{% block question %}
A vocabulary of $V = 4$ tokens (indices 0-3) is embedded with the matrix (one row per token)
$$E = {{ p.E|mat }},$$
and an RNN reads the embedded tokens: at step $t$ its input $x_t$ is the embedding of the token
read, and the input's term of the pre-activation is $W_{xh} x_t$ with
$$W_{xh} = {{ p.W_xh|mat }}.$$
The token read at step $t$ is token {{ p.k }} (one-hot vector $e_{ {{- p.k -}} }$, so $x_t^\top = e_{ {{- p.k -}} }^\top E$). What is $W_{xh} x_t$?
{% endblock %}
{% block solution %}
The one-hot product selects row {{ p.k }} of $E$ (an embedding layer is a table lookup), and $W_{xh}$ maps it: ${{ answer|vec }}$.
{% endblock %}
"""
)
# the row is a lookup; W_xh (2x3) times it: 6 products, 4 sums
@work(lambda v: (10, 0))
@cites("L7-8 (Lecture 7) §三", "W8 §4")
@exercises("positional.embed_tokens", "rnn.greedy_decode")
@own_entries()
def embedding_lookup(p):
    """The embedded token as the RNN's input."""
    onehot = torch.nn.functional.one_hot(torch.tensor(p["k"]), 4).to(torch.float64)
    return floats(t(p["W_xh"]) @ (onehot @ t(p["E"])))


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
        p = {
            "E": mat(rng, 3, 2),
            "W_xh": mat(rng, 2, 2),
            "W_hh": mat(rng, 2, 2),
            "b_h": decs(rng, 2, -0.5, 0.5),
            "W_hy": mat(rng, 3, 2, -2, 2),
            "b_y": decs(rng, 3, -0.5, 0.5),
            "start": rng.randint(0, 2),
            "steps": 2,
        }
        if _greedy_margin(p) > 0.1:
            return p


@numeric("rnn.greedy_decode", _sample_greedy, EXACT, hint="two token indices")
@text(
    r"""
{% block question %}
A character-level RNN language model over $V = 3$ tokens (0, 1, 2) generates greedily: starting from
token $y_0 = {{ p.start }}$ and $h_0 = 0$, at each step $x_s = E[y_{s-1}]$ (row of $E$),
$h_s = \tanh(W_{xh} x_s + W_{hh} h_{s-1} + b_h)$, $y_s = \operatorname{argmax} (W_{hy} h_s + b_y)$, fed back as the next input. With
$$E = {{ p.E|mat }},\ W_{xh} = {{ p.W_xh|mat }},\ W_{hh} = {{ p.W_hh|mat }},\ b_h = {{ p.b_h|colvec }},\ W_{hy} = {{ p.W_hy|mat }},\ b_y = {{ p.b_y|colvec }},$$
which tokens $y_1, y_2$ are generated?
{% endblock %}
{% block solution %}
Run two steps, feeding each argmax back as the next input: ${{ answer|map("int")|join(", ") }}$.
{% endblock %}
"""
)
@cites("W8 §4", "W8 §3.3", "L5 §4", "L7-8 (Lecture 7) §三")
@exercises("rnn.greedy_decode")
def greedy_decode(p):
    """Greedy generation from a character RNN."""
    params = {k: t(p[k]) for k in ("W_xh", "W_hh", "b_h", "W_hy", "b_y")}
    tokens = ref("rnn").greedy_decode(params, t(p["E"]), t([[0.0, 0.0]]), torch.tensor([p["start"]]), p["steps"])
    return [float(x) for x in tokens[0].tolist()]


# ------------------------------------------------------------------------------------- exam focus
# BPTT gradients of the recurrent parameters (L5 §3.5) and sampling at generation time (W8 §4).


def _param_grads_by_hand(
    p, recursion=True, tanh_deriv=True, h_index=-1, path_deriv=True, one_hot=True, all_classes=True, r=lambda x: x
):
    """dL/du, dL/dw, dL/db of the scalar two-step RNN of ``BPTT_SETUP``, written out as in L5 §3.5;
    the keyword arguments switch on the named mistakes; ``r`` rounds each value a student writes
    down (``three_figures.HAND``: the 3-figure student's paths)."""
    h = [p["h0"]]
    for x in p["x"]:
        h.append(r(math.tanh(r(r(p["u"] * x) + r(p["w"] * h[-1]) + p["b"]))))
    dh_out = []
    for step in (1, 2):
        logits = [r(p["V"][0] * h[step] + p["c"][0]), r(p["V"][1] * h[step] + p["c"][1])]
        top = max(logits)
        exp = [r(math.exp(z - top)) for z in logits]
        total = r(sum(exp))
        probs = [r(e / total) for e in exp]
        target = p["y"][step - 1]
        if one_hot:
            probs[target] = r(probs[target] - 1.0)
        classes = (0, 1) if all_classes else (target,)
        dh_out.append(r(sum(r(p["V"][j] * probs[j]) for j in classes)))
    deriv = [r(1 - r(h[s] ** 2)) if tanh_deriv else 1.0 for s in (1, 2)]
    delta2 = r(dh_out[1] * deriv[1])
    back = delta2 if path_deriv else dh_out[1]  # dL/dh_2 times w, not dL/da_2: tanh' dropped on that path
    delta1 = r(r(dh_out[0] + (r(p["w"] * back) if recursion else 0.0)) * deriv[0])
    prev = [h[0], h[1]] if h_index == -1 else [h[1], h[2]]
    return [
        r(delta1 * p["x"][0]) + r(delta2 * p["x"][1]),
        r(delta1 * prev[0]) + r(delta2 * prev[1]),
        delta1 + delta2,
    ]


# Validity (general rule): the three mistakes (no recursion, no tanh derivative, h_t for h_{t-1})
# are distinguishable from the key and each other, and no entry of the key accepts 0; the
# parameters are drawn as for the output-layer question.
def _sample_param_grads(rng):
    return _sample_bptt(rng, ("all",))


# THREE_FIGURE_WORK (seqlab/exam/bank/helpers.py): measured for this question first; the paper says so in its text.
# Graded steps: it computes p - y (L5 §3.2), the output gradient dL/dh_t summed over the classes
# (§3.3) and the hidden-state recursion (§3.4) on the way to dL/du, dL/dw, dL/db (§3.5), each step
# with its named mistake outside the tolerance on every draw (``model.fair_draw``), so a student
# who cannot do the step loses the marks: one calculation examines the four sections, where four
# questions repeated its forward pass (tests/exam/test_third_audit.py).
@numeric("rnn.bptt_param_grads", _sample_param_grads, THREE_FIGURE_WORK, hint="dL/du, dL/dw, dL/db in this order")
@graded_steps({"L5 §3.2": "no_one_hot", "L5 §3.3": "target_class_only", "L5 §3.4": "no_recursion"})
@text(
    "{% block question %}\n"
    + BPTT_SETUP
    + r"""
Backpropagating through time, what are $\partial L / \partial u$, $\partial L / \partial w$ and
$\partial L / \partial b$? Intermediate results rounded to 3 significant figures are accepted.
{% endblock %}
{% block solution %}
With $p_t = \mathrm{softmax}(o_t)$ and $e_t = \mathrm{onehot}(y_t)$: $\partial L/\partial h_2 = W_{hy}^\top (p_2 - e_2)$,
$\delta_2 = (1 - h_2^2)\, \partial L/\partial h_2$; $\partial L/\partial h_1 = W_{hy}^\top (p_1 - e_1) + w\, \delta_2$,
$\delta_1 = (1 - h_1^2)\, \partial L/\partial h_1$. Then $\partial L/\partial u = \sum_t \delta_t x_t$,
$\partial L/\partial w = \sum_t \delta_t h_{t-1}$, $\partial L/\partial b = \sum_t \delta_t$ $= {{ answer|vec }}$.
{% endblock %}
"""
)
# the fourth audit: x_1 = x_2 on one paper (one product serves twice)
# (the sixth audit: a 0 in b_y and a 1 in W_hy saved a few steps on one paper)
@skips_work(
    "a pre-activation is 0 (h_t = tanh(0) = 0), x_1 = x_2 (one product serves twice), b_y has a 0 or W_hy"
    " a +-1, or w is +-1 or b is 0 (the seventh audit: a product and a sum fewer)",
    lambda p, a: (
        any(near(x, 0) for x in bptt_pre(p))
        or len(set(p["x"])) < len(p["x"])
        or 0 in p.get("c", ())
        or any(abs(v) == 1 for v in p["V"])
        or abs(p["w"]) == 1
        or p["b"] == 0
    ),
)
@by_hand(lambda p, r: _param_grads_by_hand(p, r=r))
# the forward as above (30); dL/dh2 (3), delta2 (3), dL/dh1 (5), delta1 (3); dL/du, dL/dw (3
# each) and dL/db (1): 51; h_t, o_t, p_t, the four deltas and gradients written
@work(lambda v: (51, 14))
@cites("L5 §3.5", "L5 §3.4", "L5 §3", "L7-8 (Lecture 7) §二.2")
@exercises("rnn.rnn_bptt")
@mistake(
    "no_recursion",
    "dL/dh_1 also receives w * delta_2 from step 2 (the hidden-state recursion, L5 §3.4)",
    lambda p: _param_grads_by_hand(p, recursion=False),
)
@mistake(
    "no_tanh_deriv",
    "the gradient passes through tanh: multiply by 1 - h_t^2",
    lambda p: _param_grads_by_hand(p, tanh_deriv=False),
)
# the steps of L5 §3.2 and §3.3 this question grades (its ``graded_steps``): p - y, and the
# output gradient summed over every class
@mistake(
    "no_one_hot",
    "the softmax-cross-entropy gradient of the logits is p_t - y_t: subtract 1 at the target class",
    lambda p: _param_grads_by_hand(p, one_hot=False),
)
@mistake(
    "target_class_only",
    "dL/dh_t sums over every class: V_0 (p_0 - y_0) + V_1 (p_1 - y_1), not the target's term alone",
    lambda p: _param_grads_by_hand(p, all_classes=False),
)
# the slip the third audit graded (7.33/11 on one paper, 0 on another under an absolute tolerance)
@mistake(
    "no_tanh_on_path",
    "dL/dh_1 receives w * delta_2, and delta_2 = dL/dh_2 * (1 - h_2^2) holds tanh' of h_2",
    lambda p: _param_grads_by_hand(p, path_deriv=False),
)
@mistake(
    "h_t_not_h_prev",
    "dL/dw sums delta_t * h_{t-1} (the state the weight multiplied), not h_t",
    lambda p: _param_grads_by_hand(p, h_index=0),
)
@own_entries()
def bptt_param_grads(p):
    """Backpropagating through time to u, w and b."""
    grads = _bptt(p)[1]
    return [floats(grads["W_xh"])[0], floats(grads["W_hh"])[0], floats(grads["b_h"])[0]]


# Validity: its own rule makes the key and the three named mistakes (greedy argmax, no
# temperature, multiplying by the temperature) four different tokens (the probability alone
# would tell them apart for the general rule, but the token is what the question is about),
# so the feedback names the mistake made; and its own rule: u is at least 0.02 from every
# cumulative boundary, so rounding the probabilities to two places cannot move the answer.
# Four different tokens are rare (about 1 draw in 200 with u drawn freely), so u is drawn among
# the values 0.05-0.95 that make the draw valid (judged by model.fair_draw itself, the one rule):
# then about 1 draw of logits in 10 admits one, and the redraw loop finds it.
def _sample_token_params(rng):
    p = {"logits": decs(rng, 4, -2, 2), "temperature": rng.choice((0.5, 2.0))}
    valid_u = [u for u in _four_token_us(p) if _token_draw_valid({**p, "u": u})]
    return {**p, "u": rng.choice(valid_u) if valid_u else dec(rng, 0.05, 0.95, places=2)}


def _token_draw_valid(p) -> bool:
    q = REGISTRY["rnn.sample_token"]
    return fair_draw(q, p, q.answer(p))


# The values of u at which the key and the three mistakes are four different tokens; fair_draw
# refuses every other u (a mistake's token equal to the key's or to another mistake's);
# only these few (about 1 in 200) are put to it, which keeps fair_draw the judge and makes a draw
# ~10 times cheaper: the fairness test draws this question for 2000 students.
def _four_token_us(p) -> list[float]:
    distributions = (_key_cdf(p), _no_temperature_cdf(p), _times_temperature_cdf(p))
    greedy = _greedy_token(p)
    us = []
    for k in range(5, 96):
        u = k / 100
        tokens = [_inverse_cdf(cdf, u) for cdf in distributions]
        if tokens[0] != 0 and len({greedy, *tokens}) == 4:
            us.append(u)
    return us


def _sample_token_valid(p):
    cdfs = (_key_cdf(p), _no_temperature_cdf(p), _times_temperature_cdf(p))
    tokens = {_greedy_token(p), *(_inverse_cdf(cdf, p["u"]) for cdf in cdfs)}
    # the key's token is not token 0: u < p_0 is a draw that needs no cumulative sum (the work
    # the question asks for), which the lint's degenerate-draw rule refuses
    return (
        len(tokens) == 4
        and _inverse_cdf(cdfs[0], p["u"]) != 0
        and min(abs(p["u"] - c) for c in _key_cdf(p)[:-1]) >= 0.02
    )


# The key's distribution and the two temperature mistakes', each written once: the answer, the
# mistakes, the validity rule and the draw's shortcut all read them from here.
def _key_cdf(p) -> tuple[float, ...]:
    return _cumulative(p["logits"], p["temperature"])


def _no_temperature_cdf(p) -> tuple[float, ...]:
    return _cumulative(p["logits"], 1.0)


def _times_temperature_cdf(p) -> tuple[float, ...]:
    return _cumulative([z * p["temperature"] for z in p["logits"]], 1.0)


def _cumulative(logits, temperature) -> tuple[float, ...]:
    return _cumulative_of(tuple(logits), temperature)


# Cached: a draw tries every u (91 values) against the same logits, and each try asks for the same
# four distributions again. The value depends only on the two arguments (the key), and a tuple
# comes back so no caller can change a cached distribution. 64 entries hold a whole draw's four.
@functools.lru_cache(maxsize=64)
def _cumulative_of(logits: tuple[float, ...], temperature) -> tuple[float, ...]:
    # plain floats: validity and mistakes call this several times per draw, a tensor per call costs ~10 ms
    scaled = [z / temperature for z in logits]
    top = max(scaled)
    exp = [math.exp(z - top) for z in scaled]
    total, running, out = sum(exp), 0.0, []
    for e in exp:
        running += e / total
        out.append(running)
    return tuple(out)


def _inverse_cdf(cumulative, u):
    return float(next(i for i, c in enumerate(cumulative) if u < c))


def _greedy_token(p):
    return float(max(range(4), key=lambda i: p["logits"][i]))


def _token_and_probability(cdf, u) -> list[float]:
    """The sampled token and its probability under the distribution ``cdf`` is the running sum of."""
    k = int(_inverse_cdf(cdf, u))
    return [float(k), cdf[k] - (cdf[k - 1] if k else 0.0)]


def _token(v) -> int:
    """The sampled token of a variant's key (its work: the cumulative sums up to it)."""
    return int(v.answer[0]) if isinstance(v.answer, list) else 0


# The answer is the token and its probability: the token alone takes 4 values, so a class would
# share it by the quarter; the probability makes each student's key their own and shows the
# softmax at the temperature was computed, not guessed.
@numeric(
    "rnn.sample_token",
    _sample_token_params,
    FOUR_DIGITS,
    hint="two numbers: the token index, then its probability",
)
@text(
    r"""
{% block question %}
A language model over $V = 4$ tokens (0, 1, 2, 3) turns its logits $z$ into the distribution
$p = \mathrm{softmax}(z / \tau)$ with temperature $\tau = {{ p.temperature|num }}$ and picks its next token
with one uniform number $u \in [0, 1)$: the sampled token is the smallest $k$ with
$p_0 + \dots + p_k > u$. At this step the logits are $z = {{ p.logits|vec }}$ and $u = {{ p.u|num }}$.
Which token $k$ is sampled, and what is its probability $p_k$?
{% endblock %}
{% block solution %}
$p = \mathrm{softmax}(z/{{ p.temperature|num }})$; the first cumulative sum above $u = {{ p.u|num }}$ is at token ${{ answer[0]|int }}$, whose probability is ${{ answer[1]|num }}$.
{% endblock %}
"""
)
@skips_work("u < p_0: token 0 needs no cumulative sum", lambda p, a: a[0] == 0)
# V quotients z/tau, V exps, V-1 sums, then p_0..p_k (k+1 quotients, k sums) and the comparisons
@work(lambda v: (3 * len(v.params["logits"]) - 1 + 2 * _token(v) + 1 + _token(v) + 1, 3))
@cites("W8 §4", "W8 §3.3", "L5 §4")
@exercises("rnn.greedy_decode")
@valid_when(_sample_token_valid)
@mistake(
    "greedy",
    "generation samples from the distribution; the argmax is greedy decoding",
    lambda p: [_greedy_token(p), _probability(_key_cdf(p), int(_greedy_token(p)))],
)
@mistake(
    "no_temperature",
    "divide the logits by the temperature before the softmax",
    lambda p: _token_and_probability(_no_temperature_cdf(p), p["u"]),
)
@mistake(
    "times_temperature",
    "the logits are divided by the temperature, not multiplied",
    lambda p: _token_and_probability(_times_temperature_cdf(p), p["u"]),
)
def sample_token(p):
    """Sampling the next token at generation time."""
    return _token_and_probability(_key_cdf(p), p["u"])


def _probability(cdf, k: int) -> float:
    return cdf[k] - (cdf[k - 1] if k else 0.0)
