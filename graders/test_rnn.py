"""Hidden graders for exercises/rnn.py (notes L5 §2-4 and §10, L7-8 (Lecture 7) §一-§三, W8 §3-4).

Inputs are drawn per run; the expected values come from the reference on the same inputs. Every
initial hidden state is nonzero (a forgotten ``h0`` shows). Known wrong variants are computed here,
on the same inputs, only when an answer is wrong, so a failure can say which classic mistake it
looks like; a variant may also have another shape than the answer ("includes h0", "includes the
start token"), and then it names a shape failure.

``rnn_bptt`` and ``truncated_bptt`` are compared on the loss, on every gradient (``W_xh``,
``W_hh``, ``b_h``, ``W_hy``, ``b_y``, ``h0``) and, for ``truncated_bptt``, on ``h_last``; any use of
autograd inside them voids the function (the engine watches the call).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from seqlab.grading.checks import GradeFailure, Mistake, describe_case, variant_output

grades = pytest.mark.grades
DTYPES = pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
KEYS = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")


# --- comparing (grade.compare computes the mistakes only on failure) -------------------------


def check(grade, *args, case, mistakes=None):
    """Run the student's function and the reference on the same arguments and compare;
    ``mistakes(*args)`` gives the known wrong variants."""
    got = grade.run(*args).value
    want = grade.ref(*args)
    grade.compare(got, want, case=case, mistakes=() if mistakes is None else (lambda: mistakes(*args)))
    return got


def check_parts(grade, *args, names, case, mistakes=None, only=None):
    """For functions returning a tuple: check the arity, then each part under its own name
    (``loss``, ``grads['W_hh']``, ``h_last``). A mistake's output is a tuple like the answer's."""
    got = grade.unpack(grade.run(*args).value, names)
    want = grade.ref(*args)
    cache = []

    def variants():
        if not cache:
            cache.append(mistakes(*args))
        return cache[0]

    # Partial credit: each part (the loss, every gradient, h_last) earns its share of the test;
    # the feedback is the first wrong part's, with the count of the others.
    def pick(output, i, key):
        if output is None:
            return None
        part = output[i]
        return part.get(key) if key is not None and isinstance(part, dict) else part

    checked = []
    for i, name in enumerate(names):
        if only is not None and name not in only:
            continue
        if isinstance(want[i], dict) and isinstance(got[i], dict) and set(got[i]) == set(want[i]):
            checked += [(i, key, f"{name}[{key!r}]") for key in want[i]]  # each gradient is a part
        else:
            checked.append((i, None, name))
    failures = []
    for i, key, label in checked:
        part = (
            None
            if mistakes is None
            else (lambda i=i, key=key: [Mistake(m.name, pick(m.output, i, key), m.explain) for m in variants()])
        )
        try:
            grade.compare(pick(got, i, key), pick(want, i, key), case=case, what=label, mistakes=part or ())
        except GradeFailure as failure:
            if failure.rule:  # a gate (shape, dtype, device) fails the whole test
                raise
            failures.append(failure)
    if failures:
        right = len(checked) - len(failures)
        grade.award(right / len(checked))
        first = failures[0]
        first.message += f" ({right} of {len(checked)} parts right: partial credit)"
        first.args = (first.message,)
        raise first
    return got


# --- inputs ------------------------------------------------------------------------------------


def cell_params(make, D, H, dtype):
    # weights ~ 0.8/sqrt(fan_in): tanh neither saturated nor linear
    return {
        "W_xh": make.randn(H, D, dtype=dtype, scale=0.8 / D**0.5),
        "W_hh": make.randn(H, H, dtype=dtype, scale=0.8 / H**0.5),
        "b_h": make.randn(H, dtype=dtype, scale=0.3),
    }


def lm_params(make, D, H, C, dtype):
    return {
        **cell_params(make, D, H, dtype),
        "W_hy": make.randn(C, H, dtype=dtype, scale=1.0 / H**0.5),
        "b_y": make.randn(C, dtype=dtype, scale=0.3),
    }


def lm_problem(make, B, T, D, H, C, dtype):
    x = make.randn(B, T, D, dtype=dtype)
    targets = make.randint(C, B, T)
    h0 = make.randn(B, H, dtype=dtype, scale=0.5)
    return x, targets, h0, lm_params(make, D, H, C, dtype)


# --- rnn_cell ----------------------------------------------------------------------------------


def cell_mistakes(x, h, W_xh, W_hh, b_h):
    return [
        Mistake(
            "W_xh and W_hh swapped",
            variant_output(lambda: torch.tanh(x @ W_hh.T + h @ W_xh.T + b_h)),
            "W_xh (H, D) multiplies the input x, W_hh (H, H) the previous state h_prev.",
        ),
        Mistake(
            "W_hh not transposed",
            torch.tanh(x @ W_xh.T + h @ W_hh + b_h),
            "weights are stored (out, in) as in PyTorch, so every one is applied as v @ W.T.",
        ),
        Mistake(
            "weights not transposed",
            variant_output(lambda: torch.tanh(x @ W_xh + h @ W_hh + b_h)),
            "weights are stored (out, in) as in PyTorch, so every one is applied as v @ W.T.",
        ),
        Mistake(
            "no tanh",
            x @ W_xh.T + h @ W_hh.T + b_h,
            "the new state is the tanh of the pre-activation: h = tanh(x W_xh^T + h_prev W_hh^T + b_h).",
        ),
        Mistake("bias missing", torch.tanh(x @ W_xh.T + h @ W_hh.T), "b_h is added inside the tanh."),
    ]


def cell_case(make, B, D, H, dtype):
    p = cell_params(make, D, H, dtype)
    return make.randn(B, D, dtype=dtype), make.randn(B, H, dtype=dtype, scale=0.5), p["W_xh"], p["W_hh"], p["b_h"]


@grades("rnn.rnn_cell", title="matches nn.RNNCell (tanh), B=3, D=5, H=4")
@DTYPES
def test_cell(grade, make, dtype):
    check(
        grade, *cell_case(make, 3, 5, 4, dtype), case=describe_case(B=3, D=5, H=4, dtype=dtype), mistakes=cell_mistakes
    )


@grades("rnn.rnn_cell", title="matches nn.RNNCell with D == H (so swapped or untransposed weights still run), B=2")
def test_cell_square(grade, make):
    check(grade, *cell_case(make, 2, 6, 6, torch.float64), case=describe_case(B=2, D=6, H=6), mistakes=cell_mistakes)


@grades("rnn.rnn_cell", title="matches nn.RNNCell, B=1, D=1, H=3")
def test_cell_single(grade, make):
    check(grade, *cell_case(make, 1, 1, 3, torch.float64), case=describe_case(B=1, D=1, H=3), mistakes=cell_mistakes)


# --- rnn_forward -------------------------------------------------------------------------------


def _unroll(x, h0, W_xh, W_hh, b_h, *, carry=True):
    h, hs = h0, []
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ W_xh.T + (h if carry else h0) @ W_hh.T + b_h)
        hs.append(h)
    return torch.stack(hs, dim=1)


def forward_mistakes(x, h0, W_xh, W_hh, b_h):
    hs = _unroll(x, h0, W_xh, W_hh, b_h)
    return [
        Mistake(
            "hidden state not carried",
            _unroll(x, h0, W_xh, W_hh, b_h, carry=False),
            "every step starts from the state the previous step returned (h = rnn_cell(x_t, h, ...)), not from h0.",
        ),
        Mistake(
            "includes h0",
            torch.cat([h0.unsqueeze(1), hs], dim=1),
            "hs holds h_1 ... h_T (T states); h0 is an input, not an output.",
        ),
        Mistake(
            "off by one (h0 ... h_{T-1})",
            torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1),
            "hs[:, t-1] is h_t, the state after reading x_t: h0 is not in hs and hs[:, -1] is h_T.",
        ),
        Mistake(
            "returns only the last state",
            hs[:, -1],
            "the contract returns every hidden state, (B, T, H); the last one is hs[:, -1].",
        ),
        Mistake(
            "stacked time-major",
            hs.transpose(0, 1),
            "the layout is batch-first: stack the states on dim=1 to get (B, T, H).",
        ),
    ]


def forward_case(make, B, T, D, H, dtype):
    p = cell_params(make, D, H, dtype)
    return (make.randn(B, T, D, dtype=dtype), make.randn(B, H, dtype=dtype, scale=0.5), p["W_xh"], p["W_hh"], p["b_h"])


@grades("rnn.rnn_forward", title="matches nn.RNN(batch_first=True), B=3, T=6, D=4, H=5, nonzero h0")
@DTYPES
def test_forward(grade, make, dtype):
    check(
        grade,
        *forward_case(make, 3, 6, 4, 5, dtype),
        case=describe_case(B=3, T=6, D=4, H=5, dtype=dtype),
        mistakes=forward_mistakes,
    )


@grades("rnn.rnn_forward", title="matches nn.RNN, B=1, T=1")
def test_forward_single_step(grade, make):
    check(
        grade,
        *forward_case(make, 1, 1, 3, 4, torch.float64),
        case=describe_case(B=1, T=1, D=3, H=4),
        mistakes=forward_mistakes,
    )


@grades("rnn.rnn_forward", title="matches nn.RNN, B=2, T=12 (the state travels 12 steps)")
def test_forward_long(grade, make):
    check(
        grade,
        *forward_case(make, 2, 12, 3, 4, torch.float64),
        case=describe_case(B=2, T=12, D=3, H=4),
        mistakes=forward_mistakes,
    )


# --- softmax_cross_entropy ---------------------------------------------------------------------

NAIVE = (
    "no max subtraction / log-sum-exp",
    "exp(1e4) overflows to inf (and the log of an underflowed softmax is log 0); compute "
    "log sum_c exp(o_c) as m + log sum_c exp(o_c - m) with m the row maximum, minus the target logit.",
)


def ce_mistakes(logits, targets):
    N, C = logits.shape
    picked = logits.gather(1, targets.unsqueeze(1)).squeeze(1)
    log_probs = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    nll = -log_probs.gather(1, targets.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        naive_lse = (torch.log(torch.exp(logits).sum(dim=1)) - picked).mean()
        naive_ratio = (-torch.log(torch.exp(picked) / torch.exp(logits).sum(dim=1))).mean()
        shifted = logits - logits.max(dim=1, keepdim=True).values
        log_of_softmax = (-torch.log(torch.softmax(shifted, dim=1).gather(1, targets.unsqueeze(1)))).mean()
    return [
        Mistake(NAIVE[0], naive_lse, NAIVE[1]),
        Mistake(NAIVE[0], naive_ratio, NAIVE[1]),
        Mistake(NAIVE[0], log_of_softmax, NAIVE[1]),
        Mistake("sum instead of mean", nll.sum(), "the loss is the mean over the N rows, not their sum."),
        Mistake(
            "mean over every entry (N*C)",
            nll.sum() / (N * C),
            "average over the N rows only: the one-hot target already picks one class per row.",
        ),
        Mistake(
            "softmax over the wrong axis",
            -(logits - torch.logsumexp(logits, dim=0, keepdim=True)).gather(1, targets.unsqueeze(1)).mean(),
            "normalise over the classes of each row (dim=1), not over the rows.",
        ),
    ]


@grades("rnn.softmax_cross_entropy", title="matches F.cross_entropy, N=6, C=5")
@DTYPES
def test_ce(grade, make, dtype):
    check(
        grade,
        make.randn(6, 5, dtype=dtype, scale=2.0),
        make.randint(5, 6),
        case=describe_case(N=6, C=5, dtype=dtype),
        mistakes=ce_mistakes,
    )


@grades("rnn.softmax_cross_entropy", title="matches F.cross_entropy, N=1, C=2")
def test_ce_single_row(grade, make):
    check(grade, make.randn(1, 2), make.randint(2, 1), case=describe_case(N=1, C=2), mistakes=ce_mistakes)


@grades("rnn.softmax_cross_entropy", title="stays finite and exact for logits of magnitude 1e4, N=5, C=4", weight=2)
@DTYPES
def test_ce_huge(grade, make, dtype):
    check(
        grade,
        make.randn(5, 4, dtype=dtype, scale=1e4),
        make.randint(4, 5),
        case=describe_case(N=5, C=4, logit_scale=1e4, dtype=dtype),
        mistakes=ce_mistakes,
    )


@grades(
    "rnn.softmax_cross_entropy",
    title="matches F.cross_entropy for logits of magnitude 1e-6 (nearly uniform, loss ~ log C), N=4, C=7",
)
def test_ce_tiny(grade, make):
    check(
        grade,
        make.randn(4, 7, scale=1e-6),
        make.randint(7, 4),
        case=describe_case(N=4, C=7, logit_scale=1e-6),
        mistakes=ce_mistakes,
    )


# --- rnn_bptt ----------------------------------------------------------------------------------


def hand_bptt(
    x,
    targets,
    h0,
    p,
    *,
    time_mean=False,
    batch_sum=False,
    recurse=True,
    deriv="1-h^2",
    back_through="W_hh",
    whh_state="h_prev",
    h0_grad=True,
):
    """BPTT by hand with switches for the classic slips (the defaults are correct)."""
    W_xh, W_hh, b_h, W_hy, b_y = (p[k] for k in KEYS)
    B, T, _ = x.shape
    hs = _unroll(x, h0, W_xh, W_hh, b_h)
    logits = hs @ W_hy.T + b_y
    log_p = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    scale = (1.0 if batch_sum else 1.0 / B) / (T if time_mean else 1)
    loss = -log_p.gather(-1, targets.unsqueeze(-1)).sum() * scale
    d_logits = (log_p.exp() - F.one_hot(targets, logits.shape[-1]).to(logits.dtype)) * scale
    dh_out = d_logits @ W_hy
    h_prev = torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1)
    derivative = {"1-h^2": lambda h: 1 - h * h, "h": lambda h: h, "1-tanh(h)^2": lambda h: 1 - torch.tanh(h) ** 2}[
        deriv
    ]
    W_back = W_hh if back_through == "W_hh" else W_hh.T
    d_a, carry = torch.empty_like(hs), torch.zeros_like(h0)
    for t in reversed(range(T)):
        d_a[:, t] = (dh_out[:, t] + (carry if recurse else 0)) * derivative(hs[:, t])
        carry = d_a[:, t] @ W_back
    grads = {
        "W_xh": torch.einsum("bth,btd->hd", d_a, x),
        "W_hh": torch.einsum("bth,btk->hk", d_a, h_prev if whh_state == "h_prev" else hs),
        "b_h": d_a.sum(dim=(0, 1)),
        "W_hy": torch.einsum("btc,bth->ch", d_logits, hs),
        "b_y": d_logits.sum(dim=(0, 1)),
        "h0": carry if h0_grad else torch.zeros_like(h0),
    }
    return loss, grads


BPTT_MISTAKES = [
    (
        "mean over time instead of sum (loss off by a factor T)",
        dict(time_mean=True),
        "the loss is summed over the T steps and averaged over the batch only; a mean over B*T is T times too small.",
    ),
    (
        "summed over the batch (no 1/B)",
        dict(batch_sum=True),
        "the loss (and so every gradient) is averaged over the B sequences: dL/do_t = (p_t - onehot(y_t)) / B.",
    ),
    (
        "no recursion: the gradient does not flow back through W_hh",
        dict(recurse=False),
        "dL/dh_t also receives dL/da_{t+1} @ W_hh from the next step; carry it backwards through time.",
    ),
    (
        "tanh derivative written as h_t",
        dict(deriv="h"),
        "d tanh(a)/da = 1 - tanh(a)^2 = 1 - h_t^2, with h_t the state already computed.",
    ),
    (
        "tanh applied twice in the derivative",
        dict(deriv="1-tanh(h)^2"),
        "h_t is already tanh(a_t): the derivative is 1 - h_t^2, not 1 - tanh(h_t)^2.",
    ),
    (
        "gradient sent back through W_hh.T",
        dict(back_through="W_hh.T"),
        "a_{t+1} = ... + h_t @ W_hh.T, so dL/dh_t gets dL/da_{t+1} @ W_hh (no transpose).",
    ),
    (
        "W_hh gradient uses h_t instead of h_{t-1}",
        dict(whh_state="h_t"),
        "a_t depends on W_hh through h_{t-1}: grad W_hh = sum_t dL/da_t^T h_{t-1}, with h_0 for the first step.",
    ),
    (
        "h0 gradient missing",
        dict(h0_grad=False),
        "h0 is an input too: grads['h0'] = dL/da_1 @ W_hh, what the recursion carries past the first step.",
    ),
]


H0_KEY = ("h0 gradient missing", "h0 is an input too: grads needs the key 'h0' with dL/dh0, shaped like h0.")


def without_h0(result):
    """The answer with grads['h0'] left out (a structural mistake)."""
    return (result[0], {k: v for k, v in result[1].items() if k != "h0"}, *result[2:])


def bptt_mistakes(x, targets, h0, p):
    return [
        Mistake(name, variant_output(hand_bptt, x, targets, h0, p, **kw), why) for name, kw, why in BPTT_MISTAKES
    ] + [Mistake(*H0_KEY[:1], without_h0(hand_bptt(x, targets, h0, p)), H0_KEY[1])]


BPTT_NAMES = ("loss", "grads")


@grades("rnn.rnn_bptt", title="loss and every gradient match autograd, B=3, T=4, D=4, H=6, C=5", weight=2)
@DTYPES
def test_bptt(grade, make, dtype):
    check_parts(
        grade,
        *lm_problem(make, 3, 4, 4, 6, 5, dtype),
        names=BPTT_NAMES,
        case=describe_case(B=3, T=4, D=4, H=6, C=5, dtype=dtype),
        mistakes=bptt_mistakes,
    )


@grades("rnn.rnn_bptt", title="loss summed over time, averaged over the batch, B=2, T=3")
def test_bptt_loss(grade, make):
    check_parts(
        grade,
        *lm_problem(make, 2, 3, 3, 5, 6, torch.float64),
        names=BPTT_NAMES,
        only=("loss",),
        case=describe_case(B=2, T=3, D=3, H=5, C=6),
        mistakes=bptt_mistakes,
    )


@grades("rnn.rnn_bptt", title="loss and every gradient match autograd, B=1, T=1")
def test_bptt_single(grade, make):
    check_parts(
        grade,
        *lm_problem(make, 1, 1, 3, 4, 5, torch.float64),
        names=BPTT_NAMES,
        case=describe_case(B=1, T=1, D=3, H=4, C=5),
        mistakes=bptt_mistakes,
    )


@grades("rnn.rnn_bptt", title="loss and every gradient match autograd, B=2, T=8", weight=2)
def test_bptt_long(grade, make):
    check_parts(
        grade,
        *lm_problem(make, 2, 8, 3, 5, 4, torch.float64),
        names=BPTT_NAMES,
        case=describe_case(B=2, T=8, D=3, H=5, C=4),
        mistakes=bptt_mistakes,
    )


# --- truncated_bptt ----------------------------------------------------------------------------


def tbptt_variant(
    ref, x, targets, h0, p, chunk, *, carry=True, cut=True, h0_grad="first", drop_partial=False, loss_mean=False
):
    """Truncated BPTT from the reference's pieces, with switches for the classic slips."""
    bptt, forward = ref("rnn.rnn_bptt"), ref("rnn.rnn_forward")
    T = x.shape[1]
    hs = forward(x, h0, p["W_xh"], p["W_hh"], p["b_h"])
    if not cut:
        loss, grads = bptt(x, targets, h0, p)
        return loss, grads, hs[:, -1]
    end = T - T % chunk if drop_partial else T
    starts = list(range(0, end, chunk))
    if not starts:
        return None
    losses, per_chunk = [], []
    for s in starts:
        h_start = h0 if s == 0 or not carry else hs[:, s - 1]
        loss_c, grads_c = bptt(x[:, s : s + chunk], targets[:, s : s + chunk], h_start, p)
        losses.append(loss_c)
        per_chunk.append(grads_c)
    grads = {k: sum(g[k] for g in per_chunk) for k in KEYS}
    grads["h0"] = {"first": per_chunk[0]["h0"], "sum": sum(g["h0"] for g in per_chunk), "last": per_chunk[-1]["h0"]}[
        h0_grad
    ]
    loss = sum(losses) / (len(losses) if loss_mean else 1)
    last = starts[-1]
    h_last = hs[:, min(end, T) - 1] if carry else forward(x[:, last:end], h0, p["W_xh"], p["W_hh"], p["b_h"])[:, -1]
    return loss, grads, h_last


TBPTT_MISTAKES = [
    (
        "hidden state not carried across chunks",
        dict(carry=False),
        "only the gradient is cut at a chunk boundary; the next chunk starts from the last state of the previous one.",
    ),
    (
        "gradient not cut (full BPTT)",
        dict(cut=False),
        "truncated BPTT treats the state at each cut as a constant: backpropagate inside each chunk only.",
    ),
    (
        "h0 gradient summed over every chunk",
        dict(h0_grad="sum"),
        "later chunks start from a detached state, not from h0: grads['h0'] comes from the first chunk only.",
    ),
    (
        "h0 gradient taken from the last chunk",
        dict(h0_grad="last"),
        "grads['h0'] is the first chunk's gradient of its initial state (h0); later chunks' starts are detached.",
    ),
    (
        "last partial chunk dropped",
        dict(drop_partial=True),
        "when chunk does not divide T the last chunk is shorter (range(0, T, chunk)), and it still counts.",
    ),
    (
        "loss averaged over chunks",
        dict(loss_mean=True),
        "the loss is the full loss of rnn_bptt: the chunks' losses add up, they are not averaged.",
    ),
]


def tbptt_mistakes(ref):
    def build(x, targets, h0, p, chunk):
        return [
            Mistake(name, variant_output(tbptt_variant, ref, x, targets, h0, p, chunk, **kw), why)
            for name, kw, why in TBPTT_MISTAKES
        ] + [Mistake(H0_KEY[0], without_h0(tbptt_variant(ref, x, targets, h0, p, chunk)), H0_KEY[1])]

    return build


TBPTT_NAMES = ("loss", "grads", "h_last")


@grades(
    "rnn.truncated_bptt",
    title="loss, every gradient and h_last match autograd with h.detach() at each cut, T=5, chunk=3 (does not divide T)",
    weight=2,
)
@DTYPES
def test_tbptt_chunk_smaller(grade, make, ref, dtype):
    check_parts(
        grade,
        *lm_problem(make, 2, 5, 3, 5, 4, dtype),
        3,
        names=TBPTT_NAMES,
        case=describe_case(B=2, T=5, chunk=3, D=3, H=5, C=4, dtype=dtype),
        mistakes=tbptt_mistakes(ref),
    )


@grades("rnn.truncated_bptt", title="chunk=1 (every step its own chunk), B=1, T=3")
def test_tbptt_chunk_one(grade, make, ref):
    check_parts(
        grade,
        *lm_problem(make, 1, 3, 3, 4, 5, torch.float64),
        1,
        names=TBPTT_NAMES,
        case=describe_case(B=1, T=3, chunk=1, D=3, H=4, C=5),
        mistakes=tbptt_mistakes(ref),
    )


@grades("rnn.truncated_bptt", title="chunk == T is full BPTT, T=4")
def test_tbptt_chunk_equal(grade, make, ref):
    check_parts(
        grade,
        *lm_problem(make, 3, 4, 2, 4, 3, torch.float64),
        4,
        names=TBPTT_NAMES,
        case=describe_case(B=3, T=4, chunk=4, D=2, H=4, C=3),
        mistakes=tbptt_mistakes(ref),
    )


@grades("rnn.truncated_bptt", title="chunk > T is full BPTT, T=3, chunk=5")
def test_tbptt_chunk_larger(grade, make, ref):
    check_parts(
        grade,
        *lm_problem(make, 2, 3, 3, 4, 5, torch.float64),
        5,
        names=TBPTT_NAMES,
        case=describe_case(B=2, T=3, chunk=5, D=3, H=4, C=5),
        mistakes=tbptt_mistakes(ref),
    )


# --- birnn_forward -----------------------------------------------------------------------------


def birnn_mistakes(x, h0_fwd, h0_bwd, pf, pb):
    def run(inputs, h0, p):
        return _unroll(inputs, h0, p["W_xh"], p["W_hh"], p["b_h"])

    fwd = run(x, h0_fwd, pf)
    bwd = run(x.flip(1), h0_bwd, pb)
    return [
        Mistake(
            "backward direction not re-reversed (position misaligned)",
            torch.cat([fwd, bwd], dim=-1),
            "the backward RNN's outputs come out in reversed time; flip them back so hs[:, t] holds both "
            "directions' states at position t.",
        ),
        Mistake(
            "backward RNN reads left to right",
            torch.cat([fwd, run(x, h0_bwd, pb)], dim=-1),
            "the backward RNN reads the sequence reversed: run it on x.flip(1), then flip its outputs back.",
        ),
        Mistake(
            "backward outputs flipped but its input not",
            torch.cat([fwd, run(x, h0_bwd, pb).flip(1)], dim=-1),
            "reverse the input (x.flip(1)) before the backward RNN reads it, and its outputs after.",
        ),
        Mistake(
            "directions concatenated in the wrong order",
            torch.cat([bwd.flip(1), fwd], dim=-1),
            "hs is [forward, backward] on the last axis, as in nn.RNN(bidirectional=True).",
        ),
        Mistake(
            "initial states swapped",
            torch.cat([run(x, h0_bwd, pf), run(x.flip(1), h0_fwd, pb).flip(1)], dim=-1),
            "h0_fwd starts the left-to-right RNN, h0_bwd the right-to-left one.",
        ),
        Mistake(
            "stacked instead of concatenated",
            torch.stack([fwd, bwd.flip(1)], dim=2),
            "concatenate the two directions on the last axis: (B, T, 2H).",
        ),
    ]


def birnn_case(make, B, T, D, H, dtype):
    return (
        make.randn(B, T, D, dtype=dtype),
        make.randn(B, H, dtype=dtype, scale=0.5),
        make.randn(B, H, dtype=dtype, scale=0.5),
        cell_params(make, D, H, dtype),
        cell_params(make, D, H, dtype),
    )


@grades("rnn.birnn_forward", title="matches nn.RNN(bidirectional=True, batch_first=True), B=2, T=5, D=3, H=4")
@DTYPES
def test_birnn(grade, make, dtype):
    check(
        grade,
        *birnn_case(make, 2, 5, 3, 4, dtype),
        case=describe_case(B=2, T=5, D=3, H=4, dtype=dtype),
        mistakes=birnn_mistakes,
    )


@grades("rnn.birnn_forward", title="matches nn.RNN(bidirectional=True), B=1, T=1")
def test_birnn_single_step(grade, make):
    check(
        grade,
        *birnn_case(make, 1, 1, 2, 3, torch.float64),
        case=describe_case(B=1, T=1, D=2, H=3),
        mistakes=birnn_mistakes,
    )


@grades("rnn.birnn_forward", title="matches nn.RNN(bidirectional=True), B=3, T=9")
def test_birnn_long(grade, make):
    check(
        grade,
        *birnn_case(make, 3, 9, 4, 3, torch.float64),
        case=describe_case(B=3, T=9, D=4, H=3),
        mistakes=birnn_mistakes,
    )


# --- greedy_decode -----------------------------------------------------------------------------


def decode(params, embedding, h0, start_token, steps, *, feed="token", carry=True, pick="lowest"):
    """Greedy decoding with switches for the classic slips (the defaults are correct)."""
    W_xh, W_hh, b_h, W_hy, b_y = (params[k] for k in KEYS)
    h, token, out = h0, start_token, []
    x = embedding[start_token]
    for _ in range(steps):
        h = torch.tanh(x @ W_xh.T + (h if carry else h0) @ W_hh.T + b_h)
        logits = h @ W_hy.T + b_y
        token = (
            torch.argmax(logits, dim=-1)
            if pick == "lowest"
            else logits.shape[-1] - 1 - torch.argmax(logits.flip(-1), dim=-1)
        )
        out.append(token)
        x = {"token": embedding[token], "start": embedding[start_token], "hidden": h}[feed]
    return torch.stack(out, dim=1) if out else torch.empty(h0.shape[0], 0, dtype=torch.int64, device=h0.device)


def decode_mistakes(params, embedding, h0, start_token, steps):
    tokens = decode(params, embedding, h0, start_token, steps)
    with_start = torch.cat([start_token.unsqueeze(1), tokens], dim=1)
    return [
        Mistake(
            "includes the start token",
            with_start,
            "tokens holds the steps generated tokens only; the start token is an input.",
        ),
        Mistake(
            "includes the start token (shifted by one)",
            with_start[:, :steps],
            "record the token argmax produced at each step, not the one that was fed in.",
        ),
        Mistake(
            "generated token not fed back",
            variant_output(decode, params, embedding, h0, start_token, steps, feed="start"),
            "greedy decoding feeds its own prediction back: the next input is embedding[token] of the argmax.",
        ),
        Mistake(
            "hidden state fed as the next input",
            variant_output(decode, params, embedding, h0, start_token, steps, feed="hidden"),
            "the next input is the embedding of the predicted token, x = embedding[token]; h goes to h_prev.",
        ),
        Mistake(
            "hidden state not carried",
            decode(params, embedding, h0, start_token, steps, carry=False),
            "each step starts from the state the previous step produced, not from h0.",
        ),
        Mistake(
            "ties broken to the highest index",
            decode(params, embedding, h0, start_token, steps, pick="highest"),
            "take torch.argmax over the vocabulary: on ties it returns the lowest index.",
        ),
    ]


def min_margin(params, embedding, h0, start_token, steps):
    """The smallest gap between the best and second-best logit along the reference's path."""
    h, x, gap = h0, embedding[start_token], float("inf")
    for _ in range(steps):
        h = torch.tanh(x @ params["W_xh"].T + h @ params["W_hh"].T + params["b_h"])
        top = torch.topk(h @ params["W_hy"].T + params["b_y"], 2, dim=-1).values
        gap = min(gap, float((top[:, 0] - top[:, 1]).min()))
        x = embedding[torch.argmax(h @ params["W_hy"].T + params["b_y"], dim=-1)]
    return gap


def decode_case(make, B, V, D, H, steps, dtype):
    """Inputs whose greedy path has no near-tie (so float32 rounding cannot flip an argmax):
    redrawn, from the same seeded generator, until the best logit leads by 1e-3."""
    for _ in range(20):
        params = {
            "W_xh": make.randn(H, D, dtype=dtype, scale=1.5 / D**0.5),
            "W_hh": make.randn(H, H, dtype=dtype, scale=0.8 / H**0.5),
            "b_h": make.randn(H, dtype=dtype, scale=0.3),
            "W_hy": make.randn(V, H, dtype=dtype, scale=2.0),
            "b_y": make.randn(V, dtype=dtype, scale=0.3),
        }
        args = (
            params,
            make.randn(V, D, dtype=dtype),
            make.randn(B, H, dtype=dtype, scale=0.5),
            make.randint(V, B),
            steps,
        )
        if steps == 0 or min_margin(*args) > 1e-3:
            return args
    return args


@grades(
    "rnn.greedy_decode", title="matches a loop of nn.RNNCell + argmax fed back, B=3, V=7, D=4, H=5, 6 steps", weight=2
)
@DTYPES
def test_decode(grade, make, dtype):
    check(
        grade,
        *decode_case(make, 3, 7, 4, 5, 6, dtype),
        case=describe_case(B=3, V=7, D=4, H=5, steps=6, dtype=dtype),
        mistakes=decode_mistakes,
    )


@grades("rnn.greedy_decode", title="matches the greedy loop with D == H, B=1, V=6, 8 steps")
def test_decode_square(grade, make):
    check(
        grade,
        *decode_case(make, 1, 6, 4, 4, 8, torch.float64),
        case=describe_case(B=1, V=6, D=4, H=4, steps=8),
        mistakes=decode_mistakes,
    )


@grades("rnn.greedy_decode", title="steps=0 gives an empty (B, 0) int64 tensor")
def test_decode_zero_steps(grade, make):
    check(
        grade,
        *decode_case(make, 2, 5, 3, 4, 0, torch.float64),
        case=describe_case(B=2, V=5, steps=0),
        mistakes=decode_mistakes,
    )


@grades("rnn.greedy_decode", title="ties go to the lowest index, as torch.argmax", weight=0.5)
def test_decode_ties(grade, make):
    params, embedding, h0, start, steps = decode_case(make, 2, 6, 3, 4, 3, torch.float64)
    W_hy, b_y = params["W_hy"].clone(), params["b_y"].clone()
    # classes 1 and 4: zero rows and the same large bias, so their logits are exactly equal and on top
    W_hy[[1, 4]] = 0.0
    b_y[[1, 4]] = 50.0
    params = {**params, "W_hy": W_hy, "b_y": b_y}
    check(
        grade,
        params,
        embedding,
        h0,
        start,
        steps,
        case="B=2, V=6, steps=3, classes 1 and 4 tied on top",
        mistakes=decode_mistakes,
    )
