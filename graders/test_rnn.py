"""Hidden graders for exercises/rnn.py (notes L5 §2-4 and §10, L7-8 (Lecture 7) §一-§三, W8 §3-4).

Inputs are drawn per run; the expected values come from the reference on the same inputs. Every
initial hidden state is nonzero (a forgotten ``h0`` shows). Known wrong variants are computed here,
on the same inputs, only when an answer is wrong, so a failure can say which classic mistake it
looks like; a variant may also have another shape than the answer ("includes h0", "includes the
start token"), and then it names a shape failure.

``rnn_bptt`` and ``truncated_bptt`` are compared on the loss, on every gradient (``W_xh``,
``W_hh``, ``b_h``, ``W_hy``, ``b_y``, ``h0``) and, for ``truncated_bptt``, on ``h_last``, each
part earning its share of the test; any use of autograd inside them voids the function (the
engine watches the call).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from seqlab.grading.autograd import TITLE as AUTOGRAD_TITLE
from seqlab.grading.autograd import check_autograd
from seqlab.grading.checks import Case, from_table
from seqlab.labs.variants import variant_tests

grades = pytest.mark.grades
DTYPES = pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
KEYS = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")
BPTT_RETURNS = ("loss", "grads")
TBPTT_RETURNS = ("loss", "grads", "h_last")


# --- inputs ------------------------------------------------------------------------------------


def rnn_weights(case, input_gain=0.8):
    """W_xh (H, D), W_hh (H, H), b_h (H,): weights ~ gain/sqrt(fan_in), tanh neither saturated nor linear."""
    return {
        "W_xh": case.randn("H", "D", scale=input_gain / case.D**0.5),
        "W_hh": case.randn("H", "H", scale=0.8 / case.H**0.5),
        "b_h": case.randn("H", scale=0.3),
    }


def lm_weights(case, classes="C", input_gain=0.8, output_scale=None):
    """The RNN's weights and the readout W_hy (classes, H), b_y (classes,)."""
    return {
        **rnn_weights(case, input_gain),
        "W_hy": case.randn(classes, "H", scale=output_scale or 1.0 / case.H**0.5),
        "b_y": case.randn(classes, scale=0.3),
    }


def rnn_inputs(case, *x_dims):
    """x of shape ``x_dims``, the starting state (B, H), W_xh, W_hh, b_h (the weights drawn first)."""
    weights = rnn_weights(case)
    return case.randn(*x_dims), case.randn("B", "H", scale=0.5), *weights.values()


def lm_inputs(case):
    """x (B, T, D), targets (B, T) in [0, C), h0 (B, H), params: the language model's problem."""
    return case.randn("B", "T", "D"), case.randint("C", "B", "T"), case.randn("B", "H", scale=0.5), lm_weights(case)


def birnn_inputs(case):
    """x (B, T, D), h0_fwd, h0_bwd (B, H), the forward RNN's weights, the backward RNN's."""
    x, h0_fwd, h0_bwd = case.randn("B", "T", "D"), case.randn("B", "H", scale=0.5), case.randn("B", "H", scale=0.5)
    return x, h0_fwd, h0_bwd, rnn_weights(case), rnn_weights(case)


# --- rnn_cell ----------------------------------------------------------------------------------


def cell_variant(x, h_prev, W_xh, W_hh, b_h, *, swap=False, transpose_xh=True, transpose_hh=True, tanh=True, bias=True):
    """One step h = tanh(x W_xh^T + h_prev W_hh^T + b_h), with switches for the classic slips."""
    if swap:
        W_xh, W_hh = W_hh, W_xh
    a = x @ (W_xh.T if transpose_xh else W_xh) + h_prev @ (W_hh.T if transpose_hh else W_hh)
    a = a + b_h if bias else a
    return torch.tanh(a) if tanh else a


NOT_TRANSPOSED = "weights are stored (out, in) as in PyTorch, so every one is applied as v @ W.T."
CELL_MISTAKES = [
    (
        "W_xh and W_hh swapped",
        {"swap": True},
        "W_xh (H, D) multiplies the input x, W_hh (H, H) the previous state h_prev.",
    ),
    ("W_hh not transposed", {"transpose_hh": False}, NOT_TRANSPOSED),
    ("weights not transposed", {"transpose_xh": False, "transpose_hh": False}, NOT_TRANSPOSED),
    (
        "no tanh",
        {"tanh": False},
        "the new state is the tanh of the pre-activation: h = tanh(x W_xh^T + h_prev W_hh^T + b_h).",
    ),
    ("bias missing", {"bias": False}, "b_h is added inside the tanh."),
]


@grades("rnn.rnn_cell", title="matches nn.RNNCell (tanh), B=3, D=5, H=4")
@DTYPES
def test_cell(grade, make, dtype):
    case = Case(make, B=3, D=5, H=4, dtype=dtype)
    grade.check(*rnn_inputs(case, "B", "D"), case=case, mistakes=from_table(CELL_MISTAKES, cell_variant))


@grades("rnn.rnn_cell", title="matches nn.RNNCell with D == H (so swapped or untransposed weights still run), B=2")
def test_cell_square(grade, make):
    case = Case(make, B=2, D=6, H=6)
    grade.check(*rnn_inputs(case, "B", "D"), case=case, mistakes=from_table(CELL_MISTAKES, cell_variant))


@grades("rnn.rnn_cell", title="matches nn.RNNCell, B=1, D=1, H=3")
def test_cell_single(grade, make):
    case = Case(make, B=1, D=1, H=3)
    grade.check(*rnn_inputs(case, "B", "D"), case=case, mistakes=from_table(CELL_MISTAKES, cell_variant))


# --- rnn_forward -------------------------------------------------------------------------------


def unroll(x, h0, W_xh, W_hh, b_h, *, carry=True):
    """hs (B, T, H): the cell run over time, each step from the previous state (carry) or from h0."""
    h, hs = h0, []
    for t in range(x.shape[1]):
        h = cell_variant(x[:, t], h if carry else h0, W_xh, W_hh, b_h)
        hs.append(h)
    return torch.stack(hs, dim=1)


def forward_variant(x, h0, W_xh, W_hh, b_h, *, carry=True, layout="h_1 ... h_T"):
    """rnn_forward with the state carried or not, and the states laid out as asked."""
    hs = unroll(x, h0, W_xh, W_hh, b_h, carry=carry)
    layouts = {
        "h_1 ... h_T": hs,
        "h0 ... h_T": torch.cat([h0.unsqueeze(1), hs], dim=1),
        "h0 ... h_{T-1}": torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1),
        "h_T": hs[:, -1],
        "time-major": hs.transpose(0, 1),
    }
    return layouts[layout]


FORWARD_MISTAKES = [
    (
        "hidden state not carried",
        {"carry": False},
        "every step starts from the state the previous step returned (h = rnn_cell(x_t, h, ...)), not from h0.",
    ),
    ("includes h0", {"layout": "h0 ... h_T"}, "hs holds h_1 ... h_T (T states); h0 is an input, not an output."),
    (
        "off by one (h0 ... h_{T-1})",
        {"layout": "h0 ... h_{T-1}"},
        "hs[:, t-1] is h_t, the state after reading x_t: h0 is not in hs and hs[:, -1] is h_T.",
    ),
    (
        "returns only the last state",
        {"layout": "h_T"},
        "the contract returns every hidden state, (B, T, H); the last one is hs[:, -1].",
    ),
    (
        "stacked time-major",
        {"layout": "time-major"},
        "the layout is batch-first: stack the states on dim=1 to get (B, T, H).",
    ),
]


@grades("rnn.rnn_forward", title="matches nn.RNN(batch_first=True), B=3, T=6, D=4, H=5, nonzero h0")
@DTYPES
def test_forward(grade, make, dtype):
    case = Case(make, B=3, T=6, D=4, H=5, dtype=dtype)
    grade.check(*rnn_inputs(case, "B", "T", "D"), case=case, mistakes=from_table(FORWARD_MISTAKES, forward_variant))


@grades("rnn.rnn_forward", title="matches nn.RNN, B=1, T=1")
def test_forward_single_step(grade, make):
    case = Case(make, B=1, T=1, D=3, H=4)
    grade.check(*rnn_inputs(case, "B", "T", "D"), case=case, mistakes=from_table(FORWARD_MISTAKES, forward_variant))


@grades("rnn.rnn_forward", title="matches nn.RNN, B=2, T=12 (the state travels 12 steps)")
def test_forward_long(grade, make):
    case = Case(make, B=2, T=12, D=3, H=4)
    grade.check(*rnn_inputs(case, "B", "T", "D"), case=case, mistakes=from_table(FORWARD_MISTAKES, forward_variant))


# --- softmax_cross_entropy ---------------------------------------------------------------------


def picked(logits, targets):
    """Each row's logit (or log-probability) of its target class, (N,)."""
    return logits.gather(1, targets.unsqueeze(1)).squeeze(1)


def nll(logits, targets, dim=1):
    """Each row's negative log-likelihood of its target, with the softmax taken over ``dim``."""
    return -picked(logits - torch.logsumexp(logits, dim=dim, keepdim=True), targets)


NAIVE = "no max subtraction / log-sum-exp"
OVERFLOWS = (
    "exp(1e4) overflows to inf (and the log of an underflowed softmax is log 0); compute "
    "log sum_c exp(o_c) as m + log sum_c exp(o_c - m) with m the row maximum, minus the target logit."
)


# Each known wrong loss, computed from (logits, targets). The three naive forms share one name:
# on large logits all give inf (or nan), so the feedback cannot tell them apart, and rows of
# different names that match alike name nothing (seqlab.grading.mistakes.first_match).
def log_of_sum_of_exp(logits, targets):
    return (torch.log(torch.exp(logits).sum(dim=1)) - picked(logits, targets)).mean()


def log_of_exp_ratio(logits, targets):
    return (-torch.log(torch.exp(picked(logits, targets)) / torch.exp(logits).sum(dim=1))).mean()


def log_of_softmax(logits, targets):
    """The log of a stable softmax: -inf where the target's probability underflows to 0."""
    return (-torch.log(picked(torch.softmax(logits - logits.max(dim=1, keepdim=True).values, 1), targets))).mean()


def summed_over_rows(logits, targets):
    return nll(logits, targets).sum()


def mean_over_entries(logits, targets):
    return nll(logits, targets).sum() / logits.numel()


def softmax_over_rows(logits, targets):
    return nll(logits, targets, dim=0).mean()


def targets_as_a_block(logits, targets):
    return -(logits - torch.logsumexp(logits, dim=1, keepdim=True))[:, targets].mean()


CE_MISTAKES = [
    (NAIVE, log_of_sum_of_exp, OVERFLOWS),
    (NAIVE, log_of_exp_ratio, OVERFLOWS),
    (NAIVE, log_of_softmax, OVERFLOWS),
    ("sum instead of mean", summed_over_rows, "the loss is the mean over the N rows, not their sum."),
    (
        "mean over every entry (N*C)",
        mean_over_entries,
        "average over the N rows only: the one-hot target already picks one class per row.",
    ),
    (
        "softmax over the wrong axis",
        softmax_over_rows,
        "normalise over the classes of each row (dim=1), not over the rows.",
    ),
    (
        "targets picked as an N x N block",
        targets_as_a_block,
        "log_probs[:, targets] is (N, N): every row's log-probability of every row's target; pick one entry "
        "per row, log_probs[torch.arange(N), targets] (or gather).",
    ),
]


@grades("rnn.softmax_cross_entropy", title="matches F.cross_entropy, N=6, C=5")
@DTYPES
def test_ce(grade, make, dtype):
    case = Case(make, N=6, C=5, dtype=dtype)
    grade.check(case.randn("N", "C", scale=2.0), case.randint("C", "N"), case=case, mistakes=from_table(CE_MISTAKES))


@grades("rnn.softmax_cross_entropy", title="matches F.cross_entropy, N=1, C=2")
def test_ce_single_row(grade, make):
    case = Case(make, N=1, C=2)
    grade.check(case.randn("N", "C"), case.randint("C", "N"), case=case, mistakes=from_table(CE_MISTAKES))


@grades("rnn.softmax_cross_entropy", title="stays finite and exact for logits of magnitude 1e4, N=5, C=4", weight=2)
@DTYPES
def test_ce_huge(grade, make, dtype):
    case = Case(make, N=5, C=4, logit_scale=1e4, dtype=dtype)
    logits = case.randn("N", "C", scale=case.logit_scale)
    grade.check(logits, case.randint("C", "N"), case=case, mistakes=from_table(CE_MISTAKES))


@grades(
    "rnn.softmax_cross_entropy",
    title="matches F.cross_entropy for logits of magnitude 1e-6 (nearly uniform, loss ~ log C), N=4, C=7",
)
def test_ce_tiny(grade, make):
    case = Case(make, N=4, C=7, logit_scale=1e-6)
    logits = case.randn("N", "C", scale=case.logit_scale)
    grade.check(logits, case.randint("C", "N"), case=case, mistakes=from_table(CE_MISTAKES))


# --- rnn_bptt ----------------------------------------------------------------------------------


def hand_bptt(x, targets, h0, params, *, mean_over="B", **backward):
    """BPTT by hand, with switches for the classic slips (the defaults are correct): the loss is
    summed over time and divided by the batch ("B"), by every step ("B*T") or by nothing ("none");
    ``backward`` holds the switches of ``backprop_through_time``."""
    W_xh, W_hh, b_h, W_hy, b_y = (params[k] for k in KEYS)
    B, T, _ = x.shape
    hs = unroll(x, h0, W_xh, W_hh, b_h)
    logits = hs @ W_hy.T + b_y
    log_p = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    scale = {"B": 1.0 / B, "B*T": 1.0 / B / T, "none": 1.0}[mean_over]
    loss = -log_p.gather(-1, targets.unsqueeze(-1)).sum() * scale
    d_logits = (log_p.exp() - F.one_hot(targets, logits.shape[-1]).to(logits.dtype)) * scale
    return loss, backprop_through_time(x, h0, params, hs, d_logits, **backward)


def tanh_derivative(h, deriv):
    """d tanh(a)/da from the state h = tanh(a): "1-h^2" (right), or the slips "h" and "1-tanh(h)^2"."""
    if deriv == "h":
        return h
    return 1 - torch.tanh(h) ** 2 if deriv == "1-tanh(h)^2" else 1 - h * h


def backprop_through_time(
    x, h0, p, hs, d_logits, *, recurse=True, deriv="1-h^2", back_through="W_hh", whh_state="h_prev", h0_grad="dL/dh0"
):
    """Every gradient from the states ``hs`` and dL/dlogits; ``h0_grad``: "dL/dh0", "zero",
    "dL/da_1" (the first step's pre-activation gradient, not yet sent back through W_hh), or
    "missing" (no key)."""
    dh_out = d_logits @ p["W_hy"]
    h_prev = torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1)
    W_back = p["W_hh"] if back_through == "W_hh" else p["W_hh"].T
    d_a, carry = torch.empty_like(hs), torch.zeros_like(h0)
    for t in reversed(range(hs.shape[1])):
        d_a[:, t] = (dh_out[:, t] + (carry if recurse else 0)) * tanh_derivative(hs[:, t], deriv)
        carry = d_a[:, t] @ W_back
    grads = {
        "W_xh": torch.einsum("bth,btd->hd", d_a, x),
        "W_hh": torch.einsum("bth,btk->hk", d_a, h_prev if whh_state == "h_prev" else hs),
        "b_h": d_a.sum(dim=(0, 1)),
        "W_hy": torch.einsum("btc,bth->ch", d_logits, hs),
        "b_y": d_logits.sum(dim=(0, 1)),
        "h0": {"dL/dh0": carry, "dL/da_1": d_a[:, 0]}.get(h0_grad, torch.zeros_like(h0)),
    }
    if h0_grad == "missing":
        del grads["h0"]
    return grads


H0_KEY_MISSING = (  # a structural mistake: the key itself is absent
    "h0 gradient missing",
    {"h0_grad": "missing"},
    "h0 is an input too: grads needs the key 'h0' with dL/dh0, shaped like h0.",
)
BPTT_MISTAKES = [
    (
        "mean over time instead of sum (loss off by a factor T)",
        {"mean_over": "B*T"},
        "the loss is summed over the T steps and averaged over the batch only; a mean over B*T is T times too small.",
    ),
    (
        "summed over the batch (no 1/B)",
        {"mean_over": "none"},
        "the loss (and so every gradient) is averaged over the B sequences: dL/do_t = (p_t - onehot(y_t)) / B.",
    ),
    (
        "no recursion: the gradient does not flow back through W_hh",
        {"recurse": False},
        "dL/dh_t also receives dL/da_{t+1} @ W_hh from the next step; carry it backwards through time.",
    ),
    (
        "tanh derivative written as h_t",
        {"deriv": "h"},
        "d tanh(a)/da = 1 - tanh(a)^2 = 1 - h_t^2, with h_t the state already computed.",
    ),
    (
        "tanh applied twice in the derivative",
        {"deriv": "1-tanh(h)^2"},
        "h_t is already tanh(a_t): the derivative is 1 - h_t^2, not 1 - tanh(h_t)^2.",
    ),
    (
        "gradient sent back through W_hh.T",
        {"back_through": "W_hh.T"},
        "a_{t+1} = ... + h_t @ W_hh.T, so dL/dh_t gets dL/da_{t+1} @ W_hh (no transpose).",
    ),
    (
        "W_hh gradient uses h_t instead of h_{t-1}",
        {"whh_state": "h_t"},
        "a_t depends on W_hh through h_{t-1}: grad W_hh = sum_t dL/da_t^T h_{t-1}, with h_0 for the first step.",
    ),
    (
        "h0 gradient left at zero",
        {"h0_grad": "zero"},
        "h0 is an input too: grads['h0'] = dL/da_1 @ W_hh, what the recursion carries past the first step.",
    ),
    (
        "h0 gradient without the last @ W_hh",
        {"h0_grad": "dL/da_1"},
        "h0 enters only through a_1 = x_1 @ W_xh.T + h0 @ W_hh.T + b_h, so dL/dh0 = dL/da_1 @ W_hh: the "
        "recursion's step from a_1 back to h0 is still to take (grads['h0'] is dL/da_1 here).",
    ),
    H0_KEY_MISSING,
]


@grades("rnn.rnn_bptt", title="loss and every gradient match autograd, B=3, T=4, D=4, H=6, C=5", weight=2)
@DTYPES
def test_bptt(grade, make, dtype):
    case = Case(make, B=3, T=4, D=4, H=6, C=5, dtype=dtype)
    grade.check(
        *lm_inputs(case), case=case, returns=BPTT_RETURNS, partial=True, mistakes=from_table(BPTT_MISTAKES, hand_bptt)
    )


@grades("rnn.rnn_bptt", title="loss summed over time, averaged over the batch, B=2, T=3")
def test_bptt_loss(grade, make):
    case = Case(make, B=2, T=3, D=3, H=5, C=6)
    mistakes = from_table(BPTT_MISTAKES, hand_bptt)
    grade.check(*lm_inputs(case), case=case, returns=BPTT_RETURNS, partial=True, only=("loss",), mistakes=mistakes)


@grades("rnn.rnn_bptt", title="loss and every gradient match autograd, B=1, T=1")
def test_bptt_single(grade, make):
    case = Case(make, B=1, T=1, D=3, H=4, C=5)
    grade.check(
        *lm_inputs(case), case=case, returns=BPTT_RETURNS, partial=True, mistakes=from_table(BPTT_MISTAKES, hand_bptt)
    )


@grades("rnn.rnn_bptt", title="loss and every gradient match autograd, B=2, T=8", weight=2)
def test_bptt_long(grade, make):
    case = Case(make, B=2, T=8, D=3, H=5, C=4)
    grade.check(
        *lm_inputs(case), case=case, returns=BPTT_RETURNS, partial=True, mistakes=from_table(BPTT_MISTAKES, hand_bptt)
    )


# --- truncated_bptt ----------------------------------------------------------------------------


def tbptt_variant(
    x, targets, h0, params, chunk, *, carry=True, cut=True, h0_grad="first", drop_partial=False, loss_mean=False
):
    """Truncated BPTT from BPTT by hand, with switches for the classic slips (the defaults are
    correct); ``h0_grad``: from the "first", "last" or every ("sum") chunk, or "missing" (no key)."""
    W_xh, W_hh, b_h = params["W_xh"], params["W_hh"], params["b_h"]
    T = x.shape[1]
    hs = unroll(x, h0, W_xh, W_hh, b_h)
    if not cut:
        return (*hand_bptt(x, targets, h0, params), hs[:, -1])
    end = T - T % chunk if drop_partial else T
    starts = list(range(0, end, chunk))
    if not starts:
        return None
    losses, per_chunk = [], []
    for s in starts:
        h_start = h0 if s == 0 or not carry else hs[:, s - 1]
        loss_c, grads_c = hand_bptt(x[:, s : s + chunk], targets[:, s : s + chunk], h_start, params)
        losses.append(loss_c)
        per_chunk.append(grads_c)
    grads = {k: sum(g[k] for g in per_chunk) for k in KEYS}
    if h0_grad != "missing":
        first, last, every = per_chunk[0]["h0"], per_chunk[-1]["h0"], sum(g["h0"] for g in per_chunk)
        grads["h0"] = {"first": first, "last": last, "sum": every}[h0_grad]
    loss = sum(losses) / (len(losses) if loss_mean else 1)
    h_last = hs[:, min(end, T) - 1] if carry else unroll(x[:, starts[-1] : end], h0, W_xh, W_hh, b_h)[:, -1]
    return loss, grads, h_last


TBPTT_MISTAKES = [
    (
        "hidden state not carried across chunks",
        {"carry": False},
        "only the gradient is cut at a chunk boundary; the next chunk starts from the last state of the previous one.",
    ),
    (
        "gradient not cut (full BPTT)",
        {"cut": False},
        "truncated BPTT treats the state at each cut as a constant: backpropagate inside each chunk only.",
    ),
    (
        "h0 gradient summed over every chunk",
        {"h0_grad": "sum"},
        "later chunks start from a detached state, not from h0: grads['h0'] comes from the first chunk only.",
    ),
    (
        "h0 gradient taken from the last chunk",
        {"h0_grad": "last"},
        "grads['h0'] is the first chunk's gradient of its initial state (h0); later chunks' starts are detached.",
    ),
    (
        "last partial chunk dropped",
        {"drop_partial": True},
        "when chunk does not divide T the last chunk is shorter (range(0, T, chunk)), and it still counts.",
    ),
    (
        "loss averaged over chunks",
        {"loss_mean": True},
        "the loss is the full loss of rnn_bptt: the chunks' losses add up, they are not averaged.",
    ),
    H0_KEY_MISSING,
]


def check_tbptt(grade, case):
    """truncated_bptt on the language model's problem cut every ``case.chunk`` steps: the loss,
    each gradient and h_last earn their share of the test."""
    mistakes = from_table(TBPTT_MISTAKES, tbptt_variant)
    grade.check(*lm_inputs(case), case.chunk, case=case, returns=TBPTT_RETURNS, partial=True, mistakes=mistakes)


# The same test on chunks smaller than, equal to and larger than T (node ids seed the inputs, so
# these stay four tests, not one parametrized test): name -> (title, weight, sizes, also float32).
TBPTT_TESTS = {
    "test_tbptt_chunk_smaller": (
        "loss, every gradient and h_last match autograd with h.detach() at each cut, T=5, chunk=3 (does not divide T)",
        2,
        dict(B=2, T=5, chunk=3, D=3, H=5, C=4),
        True,
    ),
    "test_tbptt_chunk_one": (
        "chunk=1 (every step its own chunk), B=1, T=3",
        1,
        dict(B=1, T=3, chunk=1, D=3, H=4, C=5),
        False,
    ),
    "test_tbptt_chunk_equal": ("chunk == T is full BPTT, T=4", 1, dict(B=3, T=4, chunk=4, D=2, H=4, C=3), False),
    "test_tbptt_chunk_larger": (
        "chunk > T is full BPTT, T=3, chunk=5",
        1,
        dict(B=2, T=3, chunk=5, D=3, H=4, C=5),
        False,
    ),
}


def tbptt_test(name, title, weight, sizes, in_float32):
    """The test function ``name``: ``check_tbptt`` on a case of these sizes (float64, and float32
    as well when ``in_float32``)."""
    if in_float32:

        @DTYPES
        def test(grade, make, dtype):
            check_tbptt(grade, Case(make, **sizes, dtype=dtype))

    else:

        def test(grade, make):
            check_tbptt(grade, Case(make, **sizes))

    test.__name__ = test.__qualname__ = name
    return grades("rnn.truncated_bptt", title=title, weight=weight)(test)


globals().update({name: tbptt_test(name, *row) for name, row in TBPTT_TESTS.items()})


# --- birnn_forward -----------------------------------------------------------------------------


def birnn_variant(
    x,
    h0_fwd,
    h0_bwd,
    params_fwd,
    params_bwd,
    *,
    read_reversed=True,
    re_reverse=True,
    swap_h0=False,
    backward_first=False,
    stack=False,
):
    """The bidirectional RNN with switches for the classic slips (the defaults are correct)."""
    if swap_h0:
        h0_fwd, h0_bwd = h0_bwd, h0_fwd
    fwd = unroll(x, h0_fwd, **params_fwd)
    bwd = unroll(x.flip(1) if read_reversed else x, h0_bwd, **params_bwd)
    bwd = bwd.flip(1) if re_reverse else bwd
    pair = [bwd, fwd] if backward_first else [fwd, bwd]
    return torch.stack(pair, dim=2) if stack else torch.cat(pair, dim=-1)


BIRNN_MISTAKES = [
    (
        "backward direction not re-reversed (position misaligned)",
        {"re_reverse": False},
        "the backward RNN's outputs come out in reversed time; flip them back so hs[:, t] holds both "
        "directions' states at position t.",
    ),
    (
        "backward RNN reads left to right",
        {"read_reversed": False, "re_reverse": False},
        "the backward RNN reads the sequence reversed: run it on x.flip(1), then flip its outputs back.",
    ),
    (
        "backward outputs flipped but its input not",
        {"read_reversed": False},
        "reverse the input (x.flip(1)) before the backward RNN reads it, and its outputs after.",
    ),
    (
        "directions concatenated in the wrong order",
        {"backward_first": True},
        "hs is [forward, backward] on the last axis, as in nn.RNN(bidirectional=True).",
    ),
    ("initial states swapped", {"swap_h0": True}, "h0_fwd starts the left-to-right RNN, h0_bwd the right-to-left one."),
    (
        "stacked instead of concatenated",
        {"stack": True},
        "concatenate the two directions on the last axis: (B, T, 2H).",
    ),
]


@grades("rnn.birnn_forward", title="matches nn.RNN(bidirectional=True, batch_first=True), B=2, T=5, D=3, H=4")
@DTYPES
def test_birnn(grade, make, dtype):
    case = Case(make, B=2, T=5, D=3, H=4, dtype=dtype)
    grade.check(*birnn_inputs(case), case=case, mistakes=from_table(BIRNN_MISTAKES, birnn_variant))


@grades("rnn.birnn_forward", title="matches nn.RNN(bidirectional=True), B=1, T=1")
def test_birnn_single_step(grade, make):
    case = Case(make, B=1, T=1, D=2, H=3)
    grade.check(*birnn_inputs(case), case=case, mistakes=from_table(BIRNN_MISTAKES, birnn_variant))


@grades("rnn.birnn_forward", title="matches nn.RNN(bidirectional=True), B=3, T=9")
def test_birnn_long(grade, make):
    case = Case(make, B=3, T=9, D=4, H=3)
    grade.check(*birnn_inputs(case), case=case, mistakes=from_table(BIRNN_MISTAKES, birnn_variant))


# --- greedy_decode -----------------------------------------------------------------------------


def decode(params, embedding, h0, start_token, steps, *, feed="token", carry=True, pick="lowest", record="generated"):
    """Greedy decoding with switches for the classic slips (the defaults are correct); ``record``:
    the "generated" tokens, or "with start" (the start token first), or "shifted" (the tokens fed in)."""
    h, out = h0, []
    x = embedding[start_token]
    for _ in range(steps):
        h = cell_variant(x, h if carry else h0, params["W_xh"], params["W_hh"], params["b_h"])
        logits = h @ params["W_hy"].T + params["b_y"]
        if pick == "lowest":
            token = torch.argmax(logits, dim=-1)
        else:
            token = logits.shape[-1] - 1 - torch.argmax(logits.flip(-1), dim=-1)
        out.append(token)
        x = {"token": embedding[token], "start": embedding[start_token], "hidden": h}[feed]
    tokens = torch.stack(out, dim=1) if out else torch.empty(h0.shape[0], 0, dtype=torch.int64, device=h0.device)
    if record == "generated":
        return tokens
    with_start = torch.cat([start_token.unsqueeze(1), tokens], dim=1)
    return with_start if record == "with start" else with_start[:, :steps]


DECODE_MISTAKES = [
    (
        "includes the start token",
        {"record": "with start"},
        "tokens holds the steps generated tokens only; the start token is an input.",
    ),
    (
        "includes the start token (shifted by one)",
        {"record": "shifted"},
        "record the token argmax produced at each step, not the one that was fed in.",
    ),
    (
        "generated token not fed back",
        {"feed": "start"},
        "greedy decoding feeds its own prediction back: the next input is embedding[token] of the argmax.",
    ),
    (
        "hidden state fed as the next input",
        {"feed": "hidden"},
        "the next input is the embedding of the predicted token, x = embedding[token]; h goes to h_prev.",
    ),
    (
        "hidden state not carried",
        {"carry": False},
        "each step starts from the state the previous step produced, not from h0.",
    ),
    (
        "ties broken to the highest index",
        {"pick": "highest"},
        "take torch.argmax over the vocabulary: on ties it returns the lowest index.",
    ),
]


def min_margin(params, embedding, h0, start_token, steps):
    """The smallest gap between the best and second-best logit along the reference's path."""
    h, x, gap = h0, embedding[start_token], float("inf")
    for _ in range(steps):
        h = cell_variant(x, h, params["W_xh"], params["W_hh"], params["b_h"])
        logits = h @ params["W_hy"].T + params["b_y"]
        top = torch.topk(logits, 2, dim=-1).values
        gap = min(gap, float((top[:, 0] - top[:, 1]).min()))
        x = embedding[torch.argmax(logits, dim=-1)]
    return gap


def decode_inputs(case):
    """Inputs whose greedy path has no near-tie (so float32 rounding cannot flip an argmax):
    redrawn, from the same seeded generator, until the best logit leads by 1e-3."""
    for _ in range(20):
        # larger gains than the language model's: the fed-back token moves the next state, and a
        # readout of scale 2 spreads the logits, so near-ties (and redraws) are rare
        params = lm_weights(case, classes="V", input_gain=1.5, output_scale=2.0)
        inputs = params, case.randn("V", "D"), case.randn("B", "H", scale=0.5), case.randint("V", "B"), case.steps
        if case.steps == 0 or min_margin(*inputs) > 1e-3:
            return inputs
    return inputs


@grades(
    "rnn.greedy_decode", title="matches a loop of nn.RNNCell + argmax fed back, B=3, V=7, D=4, H=5, 6 steps", weight=2
)
@DTYPES
def test_decode(grade, make, dtype):
    case = Case(make, B=3, V=7, D=4, H=5, steps=6, dtype=dtype)
    grade.check(*decode_inputs(case), case=case, mistakes=from_table(DECODE_MISTAKES, decode))


@grades("rnn.greedy_decode", title="matches the greedy loop with D == H, B=1, V=6, 8 steps")
def test_decode_square(grade, make):
    case = Case(make, B=1, V=6, D=4, H=4, steps=8)
    grade.check(*decode_inputs(case), case=case, mistakes=from_table(DECODE_MISTAKES, decode))


@grades("rnn.greedy_decode", title="steps=0 gives an empty (B, 0) int64 tensor")
def test_decode_zero_steps(grade, make):
    case = Case(make, B=2, V=5, D=3, H=4, steps=0)
    grade.check(*decode_inputs(case), case=case, mistakes=from_table(DECODE_MISTAKES, decode))


@grades("rnn.greedy_decode", title="ties go to the lowest index, as torch.argmax", weight=0.5)
def test_decode_ties(grade, make):
    case = Case(make, B=2, V=6, D=3, H=4, steps=3).note("classes 1 and 4 tied on top")
    params, embedding, h0, start, steps = decode_inputs(case)
    W_hy, b_y = params["W_hy"].clone(), params["b_y"].clone()
    # classes 1 and 4: zero rows and the same large bias, so their logits are exactly equal and on top
    W_hy[[1, 4]] = 0.0
    b_y[[1, 4]] = 50.0
    params = {**params, "W_hy": W_hy, "b_y": b_y}
    grade.check(params, embedding, h0, start, steps, case=case, mistakes=from_table(DECODE_MISTAKES, decode))


# --- the lab: sampling ---------------------------------------------------------------------------


def sample(params, start_token, steps, temperature=1.0, generator=None, *, where="logits", carry=True, draw="sample"):
    """Sampling with switches for the classic slips (the defaults are correct); ``where``: the
    temperature divides the "logits", the "probabilities" (after the softmax: no effect once
    renormalised) or multiplies the logits ("times")."""
    V, H = params["W_hy"].shape
    h0 = torch.zeros(start_token.shape[0], H, dtype=params["W_hy"].dtype)
    h, token, out = h0, start_token, []
    for _ in range(steps):
        x = F.one_hot(token, V).to(h0.dtype)
        h = cell_variant(x, h if carry else h0, params["W_xh"], params["W_hh"], params["b_h"])
        logits = h @ params["W_hy"].T + params["b_y"]
        if where == "logits":
            p = torch.softmax(logits / temperature, dim=-1)
        elif where == "times":
            p = torch.softmax(logits * temperature, dim=-1)
        else:
            p = torch.softmax(logits, dim=-1) / temperature
        token = torch.argmax(p, dim=-1) if draw == "argmax" else torch.multinomial(p, 1, generator=generator)[:, 0]
        out.append(token)
    return torch.stack(out, dim=1) if out else torch.zeros(start_token.shape[0], 0, dtype=torch.int64)


SAMPLE_MISTAKES = [
    (
        "temperature applied after the softmax",
        {"where": "probabilities"},
        "divide the logits by the temperature, then take the softmax; dividing the probabilities "
        "changes nothing once torch.multinomial renormalises them.",
    ),
    ("temperature multiplies the logits", {"where": "times"}, "p = softmax(logits / temperature), not * temperature."),
    ("hidden state not carried", {"carry": False}, "each step starts from the state the previous step produced."),
    ("argmax instead of a draw", {"draw": "argmax"}, "draw the next token with torch.multinomial(p, 1, generator)."),
]


def sample_inputs(case, temperature):
    params = lm_weights(case, classes="V", input_gain=1.5, output_scale=2.0)  # D = V: one-hot inputs
    return params, case.randint("V", "B"), case.steps, temperature


def check_sample(grade, case, temperature, seed):
    """The student's draws against the reference's with generators seeded alike (a variant gets
    its own fresh one: the grader's was used by the reference)."""
    inputs = sample_inputs(case, temperature)

    def variant(*args, **kwargs):  # each variant draws from a generator of its own, seeded alike
        return sample(*args, **{**kwargs, "generator": torch.Generator().manual_seed(seed)})

    mistakes = from_table(SAMPLE_MISTAKES, variant)

    grade.check(*inputs, generator=torch.Generator().manual_seed(seed), case=case, mistakes=mistakes)


@grades("rnn.sample_chars", title="same draws as the reference with the same generator, temperature 0.7", weight=2)
def test_sample_temperature(grade, make, rng):
    case = Case(make, B=4, V=7, D=7, H=6, steps=12, dtype=torch.float64).note("temperature=0.7")
    check_sample(grade, case, 0.7, int(torch.randint(1 << 30, (), generator=rng)))


@grades("rnn.sample_chars", title="same draws as the reference, temperature 1.5, float32")
def test_sample_hot(grade, make, rng):
    case = Case(make, B=3, V=5, D=5, H=4, steps=10, dtype=torch.float32).note("temperature=1.5")
    check_sample(grade, case, 1.5, int(torch.randint(1 << 30, (), generator=rng)))


@grades("rnn.sample_chars", title="steps=0 gives an empty (B, 0) int64 tensor", weight=0.5)
def test_sample_zero_steps(grade, make, rng):
    case = Case(make, B=2, V=5, D=5, H=4, steps=0, dtype=torch.float64)
    check_sample(grade, case, 1.0, 3)


# --- the lab: a character-level language model trained by hand -----------------------------------


def char_rnn_losses(
    ref, tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0, *, carry=True, reset=True, clipped=True,
    global_clip=True, keep_adam=True, per_char=True,
):  # fmt: skip
    """The protocol's loss trajectory with switches for the classic slips (defaults: correct),
    on the reference's truncated_bptt, clip_grad_norm and adam."""
    keys = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")
    V, H = params["W_hy"].shape
    L = tokens.shape[0] // batch_size
    windows = (L - 1) // seq_len
    streams = tokens[: batch_size * L].reshape(batch_size, L)
    theta, state = {k: params[k].clone() for k in keys}, {k: {} for k in keys}
    zeros = torch.zeros(batch_size, H, dtype=theta["W_hy"].dtype)
    h, losses = zeros, torch.zeros(steps, dtype=zeros.dtype)
    for s in range(steps):
        w = s % windows
        if not carry or (reset and w == 0):
            h = zeros
        window = streams[:, w * seq_len : (w + 1) * seq_len + 1]
        x = F.one_hot(window[:, :-1], V).to(zeros.dtype)
        loss, grads, h = ref("rnn.truncated_bptt")(x, window[:, 1:], h, theta, seq_len)
        g = [grads[k] for k in keys]
        if clipped:
            g = (
                ref("optimizers.clip_grad_norm")(g, clip)[0]
                if global_clip
                else [ref("optimizers.clip_grad_norm")([gk], clip)[0][0] for gk in g]
            )
        for k, gk in zip(keys, g):
            theta[k], kept = ref("optimizers.adam")(theta[k], gk, state[k], lr=lr)
            state[k] = kept if keep_adam else {}
        losses[s] = loss / seq_len if per_char else loss
    return losses


CHAR_RNN_MISTAKES = [
    (
        "hidden state not carried across windows",
        {"carry": False},
        "each window starts from the previous step's h_last (the stream goes on); only w == 0 starts from zeros.",
    ),
    (
        "reset missing at w == 0",
        {"reset": False},
        "when the window index wraps to 0 the streams start again: reset h to zeros there.",
    ),
    (
        "clipping after the update (or not at all)",
        {"clipped": False},
        "clip the gradients first, then give the clipped ones to adam: clipping after the step changes nothing.",
    ),
    (
        "each gradient clipped on its own",
        {"global_clip": False},
        "clip_grad_norm takes the list of all five gradients: one global norm, one common factor.",
    ),
    (
        "Adam state not kept between steps",
        {"keep_adam": False},
        "keep each parameter's Adam state (m, v, step) from one step to the next; a fresh {} every step "
        "makes every update a first, bias-corrected step of size ~lr.",
    ),
    (
        "loss not divided by seq_len",
        {"per_char": False},
        "losses[s] = loss / seq_len: truncated_bptt sums over the window's steps; the lab reports nats per character.",
    ),
]


def char_rnn_mistakes(ref):
    return [
        (name, lambda inputs, steps, s=switches: char_rnn_losses(ref, **{**inputs, "steps": steps}, **s), explain)
        for name, switches, explain in CHAR_RNN_MISTAKES
    ]


@grades(
    "rnn.train_char_rnn",
    title="held-out cross-entropy on a fresh text gets 90% of the way from a unigram model to the reference's",
    weight=3,
)
def test_char_rnn_heldout(lab):
    lab.check_metrics("progress")


@grades("rnn.train_char_rnn", title="the loss trajectory follows the protocol, step by step", weight=2)
def test_char_rnn_trajectory(lab, ref):
    lab.check_trajectory(lambda: char_rnn_mistakes(ref))


# --- supports autograd (a lab trains through it; the public twin is test_<function>_supports_autograd) ---


@grades("rnn.softmax_cross_entropy", title=AUTOGRAD_TITLE)
def test_ce_supports_autograd(grade, make):
    case = Case(make, N=7, C=5)
    check_autograd(grade, case.randn("N", "C", scale=2.0), case.randint("C", "N"), case=case)


# --- every argument tried: the lab's function on its inputs with arguments changed ---------------
# (seqlab/labs/variants.py: another kind, float64, another lr or clip, a text a multiple of seq_len)

globals().update(variant_tests("rnn.train_char_rnn"))
