"""Public tests of exercises/rnn.py: shapes and dtypes, small worked examples, and a gradient check.

The worked examples use one or two hidden units, so every expected value is a short formula of
the inputs written next to it (``tanh``, ``exp``, ``log`` of small numbers).
"""

from __future__ import annotations

import math

import pytest
import torch
from _autograd import check_autograd
from _check import call, check_batch_first, check_close, check_tensor, randn, unpack
from _labs import BUDGETS_OFF, check_adam_steps, check_budget, lab_test

from exercises import rnn

checks = pytest.mark.checks
FLOATS = pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
T64 = torch.float64


def t(values, dtype=T64):
    return torch.tensor(values, dtype=dtype)


def sigmoid(z):
    return 1 / (1 + math.exp(-z))


def random_params(gen, D, H, C, dtype):
    return {
        "W_xh": randn(gen, H, D, dtype=dtype, scale=0.5),
        "W_hh": randn(gen, H, H, dtype=dtype, scale=0.5),
        "b_h": randn(gen, H, dtype=dtype, scale=0.1),
        "W_hy": randn(gen, C, H, dtype=dtype, scale=0.5),
        "b_y": randn(gen, C, dtype=dtype, scale=0.1),
    }


# --- rnn_cell ------------------------------------------------------------------------------------


@checks("rnn.rnn_cell")
def test_rnn_cell_worked_example():
    # x @ W_xh.T = [1*1 + 2*0, 1*1 + 2*1] = [1, 3];  h_prev @ W_hh.T = [h_prev[1], 0] = [-1, 0]
    # a = [1, 3] + [-1, 0] + b_h = [0.5, 0.5], so h = [tanh 0.5, tanh 0.5]
    # (W_xh used untransposed would give [3, 2] + ..., W_hh untransposed [0, 0.5] + ...)
    case = "B=1, D=2, H=2, x=[1, 2], h_prev=[0.5, -1]"
    h = call(
        "rnn.rnn_cell",
        rnn.rnn_cell,
        t([[1.0, 2.0]]),
        t([[0.5, -1.0]]),
        t([[1.0, 0.0], [1.0, 1.0]]),
        t([[0.0, 1.0], [0.0, 0.0]]),
        t([0.5, -2.5]),
        case=case,
    )
    check_close("rnn.rnn_cell", h, [[math.tanh(0.5), math.tanh(0.5)]], case=case)


@checks("rnn.rnn_cell")
@FLOATS
def test_rnn_cell_shape_and_dtype(dtype):
    gen = torch.Generator().manual_seed(0)
    case = f"B=3, D=4, H=5, {str(dtype)[6:]}"
    h = call(
        "rnn.rnn_cell",
        rnn.rnn_cell,
        randn(gen, 3, 4, dtype=dtype),
        randn(gen, 3, 5, dtype=dtype),
        randn(gen, 5, 4, dtype=dtype),
        randn(gen, 5, 5, dtype=dtype),
        randn(gen, 5, dtype=dtype),
        case=case,
    )
    check_tensor("rnn.rnn_cell", h, case=case, shape=(3, 5), dtype=dtype)


# --- rnn_forward ---------------------------------------------------------------------------------


@checks("rnn.rnn_forward")
def test_rnn_forward_worked_example():
    # h1 = tanh(1 * x1 - 1 * h0) = tanh(1 - 0.5) = tanh 0.5;  h2 = tanh(x2 - h1) = tanh(2 - tanh 0.5)
    # hs holds h1 and h2, not h0.
    case = "B=1, T=2, D=1, H=1, x=[1, 2], h0=0.5, W_xh=1, W_hh=-1, b_h=0"
    hs = call(
        "rnn.rnn_forward",
        rnn.rnn_forward,
        t([[[1.0], [2.0]]]),
        t([[0.5]]),
        t([[1.0]]),
        t([[-1.0]]),
        t([0.0]),
        case=case,
    )
    check_close("rnn.rnn_forward", hs, [[[math.tanh(0.5)], [math.tanh(2 - math.tanh(0.5))]]], case=case)


@checks("rnn.rnn_forward")
def test_rnn_forward_keeps_batch_and_time_apart():
    # D = H = 1, W_xh = 1, W_hh = 0, b_h = 0: each state is tanh of its own input, hs[b, t] =
    # tanh(x[b, t]). With B = 2 and T = 3 every (b, t) holds a different input, so states stacked
    # time-major (T, B) and reshaped to (B, T) instead of transposed land in the wrong places.
    case = "B=2, T=3, D=H=1, W_xh=[[1]], W_hh=[[0]], b_h=[0], x[b, t] = 1, 2, 3 / 4, 5, 6"
    x = t([[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]]]) / 4
    hs = call(
        "rnn.rnn_forward", rnn.rnn_forward, x, torch.zeros(2, 1, dtype=T64), t([[1.0]]), t([[0.0]]), t([0.0]), case=case
    )
    check_batch_first("rnn.rnn_forward", hs, torch.tanh(x), case=case, what="hs")


@checks("rnn.rnn_forward")
@FLOATS
def test_rnn_forward_shape_and_dtype(dtype):
    gen = torch.Generator().manual_seed(1)
    case = f"B=2, T=3, D=4, H=5, {str(dtype)[6:]}"
    hs = call(
        "rnn.rnn_forward",
        rnn.rnn_forward,
        randn(gen, 2, 3, 4, dtype=dtype),
        randn(gen, 2, 5, dtype=dtype),
        randn(gen, 5, 4, dtype=dtype),
        randn(gen, 5, 5, dtype=dtype),
        randn(gen, 5, dtype=dtype),
        case=case,
    )
    check_tensor("rnn.rnn_forward", hs, case=case, shape=(2, 3, 5), dtype=dtype, what="hs")


# --- softmax_cross_entropy -----------------------------------------------------------------------


@checks("rnn.softmax_cross_entropy")
def test_softmax_cross_entropy_worked_examples():
    qualname = "rnn.softmax_cross_entropy"
    # equal logits over 2 classes: -log(1/2) = log 2
    case = "logits=[[0, 0]], targets=[1]"
    loss = call(qualname, rnn.softmax_cross_entropy, t([[0.0, 0.0]]), torch.tensor([1]), case=case)
    check_tensor(qualname, loss, case=case, shape=(), dtype=T64, what="loss (a 0-dim tensor)")
    check_close(qualname, loss, math.log(2), case=case)
    # log(e^1 + e^2 + e^3) - 3 = log(1 + e^-1 + e^-2)
    case = "logits=[[1, 2, 3]], targets=[2]"
    loss = call(qualname, rnn.softmax_cross_entropy, t([[1.0, 2.0, 3.0]]), torch.tensor([2]), case=case)
    check_close(qualname, loss, math.log(1 + math.exp(-1) + math.exp(-2)), case=case)
    # two rows, two different targets: one entry per row is picked, then the mean of the rows.
    # row 0: softmax [1/2, 1/2], target 0: log 2; row 1: softmax [3/4, 1/4], target 1: log 4;
    # mean: (log 2 + log 4) / 2 = 1.5 log 2. (logits[:, targets] would pick a 2 x 2 block instead.)
    case = "logits=[[0, 0], [log 3, 0]], targets=[0, 1]"
    logits = t([[0.0, 0.0], [math.log(3.0), 0.0]])
    loss = call(qualname, rnn.softmax_cross_entropy, logits, torch.tensor([0, 1]), case=case)
    check_close(qualname, loss, 1.5 * math.log(2), case=case)


@checks("rnn.softmax_cross_entropy")
@FLOATS
def test_softmax_cross_entropy_is_stable_for_huge_logits(dtype):
    # row 1: the target has the largest logit by 1e4, its loss is log(1 + e^-10000) = 0
    # row 2: the target is 1e4 below the largest, its loss is 10000; the mean is 5000.
    # exp(10000) overflows to inf: subtract the row maximum first (log-sum-exp).
    case = f"logits=[[1e4, 0], [0, 1e4]], targets=[0, 0], {str(dtype)[6:]}"
    loss = call(
        "rnn.softmax_cross_entropy",
        rnn.softmax_cross_entropy,
        t([[1e4, 0.0], [0.0, 1e4]], dtype),
        torch.tensor([0, 0]),
        case=case,
    )
    check_tensor("rnn.softmax_cross_entropy", loss, case=case, shape=(), dtype=dtype, what="loss")
    check_close("rnn.softmax_cross_entropy", loss, 5000.0, case=case)
    # each row is shifted by its own maximum: row 2's logits lie 1e4 below row 1's, and shifting it
    # by the batch's maximum makes every exp of row 2 underflow to 0 and its loss log(0) = -inf.
    # row 1: log(1 + e^-10000) = 0; row 2: equal logits, log 2; the mean is log(2) / 2.
    case = f"logits=[[1e4, 0], [0, 0]], targets=[0, 0], {str(dtype)[6:]}"
    logits = t([[1e4, 0.0], [0.0, 0.0]], dtype)
    loss = call("rnn.softmax_cross_entropy", rnn.softmax_cross_entropy, logits, torch.tensor([0, 0]), case=case)
    check_close("rnn.softmax_cross_entropy", loss, math.log(2) / 2, case=case)


# --- rnn_bptt ------------------------------------------------------------------------------------


def one_step_by_hand(x, h_prev, w_xh, w_hh, b_h):
    """Loss and gradients of the one-step, one-unit model used below (W_hy = [[1], [-1]], b_y = 0,
    target class 0), worked out with the chain rule:

        a = w_xh x + w_hh h_prev + b_h,  h = tanh a,  logits = [h, -h],
        loss = log(e^h + e^-h) - h = log(1 + e^(-2h)),
        q = 1 - softmax(logits)[0] = sigmoid(-2h),  dL/dlogits = [-q, q],
        dL/dh = -q * 1 + q * (-1) = -2q,  dL/da = -2q (1 - h^2).
    """
    h = math.tanh(w_xh * x + w_hh * h_prev + b_h)
    q = sigmoid(-2 * h)
    da = -2 * q * (1 - h * h)
    grads = {
        "W_xh": [[da * x]],
        "W_hh": [[da * h_prev]],
        "b_h": [da],
        "W_hy": [[-q * h], [q * h]],
        "b_y": [-q, q],
        "h0": [[da * w_hh]],
    }
    return math.log(1 + math.exp(-2 * h)), grads, h


def scalar_params(w_xh, w_hh, b_h):
    return {"W_xh": t([[w_xh]]), "W_hh": t([[w_hh]]), "b_h": t([b_h]), "W_hy": t([[1.0], [-1.0]]), "b_y": t([0.0, 0.0])}


def check_grads(qualname, grads, want, case):
    if not isinstance(grads, dict) or set(grads) != set(want):
        got = sorted(grads) if isinstance(grads, dict) else type(grads).__name__
        pytest.fail(
            f"{qualname}, case {case}: grads should be a dict with keys {sorted(want)}, got {got}", pytrace=False
        )
    for key, value in want.items():
        check_close(qualname, grads[key], value, case=case, what=f"grads[{key!r}]")


@checks("rnn.rnn_bptt")
def test_rnn_bptt_one_step_worked_example():
    # x = 1, h0 = 0.5: a = 1 + 2 * 0.5 - 1 = 1, h = tanh 1 (see one_step_by_hand for every gradient)
    case = "B=1, T=1, D=1, H=1, C=2, x=1, h0=0.5, W_xh=1, W_hh=2, b_h=-1, W_hy=[[1], [-1]], target 0"
    loss_want, grads_want, _ = one_step_by_hand(1.0, 0.5, 1.0, 2.0, -1.0)
    loss, grads = unpack(
        "rnn.rnn_bptt",
        call(
            "rnn.rnn_bptt",
            rnn.rnn_bptt,
            t([[[1.0]]]),
            torch.tensor([[0]]),
            t([[0.5]]),
            scalar_params(1.0, 2.0, -1.0),
            case=case,
        ),
        ("loss", "grads"),
        case=case,
    )
    check_close("rnn.rnn_bptt", loss, loss_want, case=case, what="loss")
    check_grads("rnn.rnn_bptt", grads, grads_want, case)


@checks("rnn.rnn_bptt")
def test_rnn_bptt_loss_sums_over_time_and_averages_over_batch():
    # W_hy = 0 and b_y = 0: every step predicts the uniform distribution over C=2 classes, so each of
    # the B*T = 6 terms is log 2. Summed over T=3 and averaged over B=2 the loss is 3 log 2 = 2.079.
    # B != T on purpose, so every wrong normalisation gives another number: divided by T instead of
    # B, 2 log 2 = 1.386; a mean over all B*T terms, log 2 = 0.693; summed over both, 6 log 2 = 4.159.
    case = "B=2, T=3, D=1, H=1, C=2, W_hy=0, b_y=0"
    params = {"W_xh": t([[1.0]]), "W_hh": t([[0.5]]), "b_h": t([0.0]), "W_hy": t([[0.0], [0.0]]), "b_y": t([0.0, 0.0])}
    loss, _ = unpack(
        "rnn.rnn_bptt",
        call(
            "rnn.rnn_bptt",
            rnn.rnn_bptt,
            t([[[1.0], [2.0], [0.0]], [[-1.0], [0.5], [1.5]]]),
            torch.tensor([[0, 1, 0], [1, 1, 0]]),
            t([[0.0], [0.3]]),
            params,
            case=case,
        ),
        ("loss", "grads"),
        case=case,
    )
    check_close("rnn.rnn_bptt", loss, 3 * math.log(2), case=case, what="loss")


@checks("rnn.rnn_bptt")
def test_rnn_bptt_gradients_match_finite_differences_of_its_loss():
    # Nudge each parameter by +-1e-6 and watch your own loss change: (L(p + e) - L(p - e)) / 2e must
    # equal your gradient. Checks the backward pass through time (T=3) without any reference answer.
    qualname, case = "rnn.rnn_bptt", "B=2, T=3, D=2, H=3, C=4, float64, central differences with eps=1e-6"
    gen = torch.Generator().manual_seed(2)
    x, h0 = randn(gen, 2, 3, 2), randn(gen, 2, 3, scale=0.5)
    targets = torch.tensor([[0, 3, 1], [2, 2, 0]])
    params = random_params(gen, 2, 3, 4, T64)
    loss, grads = unpack(
        qualname, call(qualname, rnn.rnn_bptt, x, targets, h0, params, case=case), ("loss", "grads"), case=case
    )
    check_tensor(qualname, loss, case=case, shape=(), dtype=T64, what="loss (a 0-dim tensor)")
    eps = 1e-6

    def loss_at(name, index, delta):
        p = {k: v.clone() for k, v in params.items()}
        h = h0.clone()
        (h if name == "h0" else p[name])[index] += delta
        return float(rnn.rnn_bptt(x, targets, h, p)[0])

    for name, value in [*params.items(), ("h0", h0)]:
        if name not in grads:
            pytest.fail(f"{qualname}, case {case}: grads has no key {name!r}", pytrace=False)
        check_tensor(qualname, grads[name], case=case, shape=tuple(value.shape), dtype=T64, what=f"grads[{name!r}]")
        numeric = torch.zeros_like(value)
        for index in torch.cartesian_prod(*[torch.arange(n) for n in value.shape]).reshape(-1, value.dim()).tolist():
            index = tuple(index)
            numeric[index] = (loss_at(name, index, eps) - loss_at(name, index, -eps)) / (2 * eps)
        check_close(
            qualname,
            grads[name],
            numeric,
            case=case,
            what=f"grads[{name!r}] vs finite differences",
            atol=1e-6,
            rtol=1e-5,
        )


# --- truncated_bptt ------------------------------------------------------------------------------


@checks("rnn.truncated_bptt")
def test_truncated_bptt_worked_example():
    # T=2 cut into chunks of 1. Chunk 1 starts from h0, chunk 2 from h1 = tanh(x1 + 2 h0 - 1) (the state
    # flows across the cut), but chunk 2's gradient stops at h1 (treated as a constant). So:
    #   loss = loss_1 + loss_2,  grads = grads_1 + grads_2 (except "h0": only grads_1), h_last = h2.
    case = "B=1, T=2, D=1, H=1, C=2, chunk=1, x=[1, -0.5], h0=0.5, W_xh=1, W_hh=2, b_h=-1, targets [0, 0]"
    loss1, g1, h1 = one_step_by_hand(1.0, 0.5, 1.0, 2.0, -1.0)
    loss2, g2, h2 = one_step_by_hand(-0.5, h1, 1.0, 2.0, -1.0)
    want = {k: (g1[k] if k == "h0" else (torch.tensor(g1[k]) + torch.tensor(g2[k])).tolist()) for k in g1}
    out = call(
        "rnn.truncated_bptt",
        rnn.truncated_bptt,
        t([[[1.0], [-0.5]]]),
        torch.tensor([[0, 0]]),
        t([[0.5]]),
        scalar_params(1.0, 2.0, -1.0),
        1,
        case=case,
    )
    loss, grads, h_last = unpack("rnn.truncated_bptt", out, ("loss", "grads", "h_last"), case=case)
    check_close("rnn.truncated_bptt", loss, loss1 + loss2, case=case, what="loss")
    check_grads("rnn.truncated_bptt", grads, want, case)
    check_close("rnn.truncated_bptt", h_last, [[h2]], case=case, what="h_last")


@checks("rnn.truncated_bptt")
def test_truncated_bptt_loss_is_the_full_loss():
    # Truncation changes the gradients, never the loss: with chunks of 2 over T=5 (the last chunk is a
    # single step) the loss must equal your rnn_bptt's loss on the whole sequence; with chunk >= T
    # everything must equal rnn_bptt.
    gen = torch.Generator().manual_seed(5)
    x, h0, targets = randn(gen, 2, 5, 3), randn(gen, 2, 4, scale=0.5), torch.randint(0, 6, (2, 5), generator=gen)
    params = random_params(gen, 3, 4, 6, T64)
    full_loss, full_grads = unpack(
        "rnn.rnn_bptt",
        call("rnn.rnn_bptt", rnn.rnn_bptt, x, targets, h0, params, case="B=2, T=5"),
        ("loss", "grads"),
        case="B=2, T=5",
    )
    for chunk in (2, 5, 8):
        case = f"B=2, T=5, D=3, H=4, C=6, chunk={chunk}, compared with your rnn_bptt"
        loss, grads, _ = unpack(
            "rnn.truncated_bptt",
            call("rnn.truncated_bptt", rnn.truncated_bptt, x, targets, h0, params, chunk, case=case),
            ("loss", "grads", "h_last"),
            case=case,
        )
        check_close("rnn.truncated_bptt", loss, full_loss, case=case, what="loss")
        if chunk >= 5:
            check_grads("rnn.truncated_bptt", grads, full_grads, case)


@checks("rnn.truncated_bptt")
@FLOATS
def test_truncated_bptt_shapes_and_dtype(dtype):
    gen = torch.Generator().manual_seed(3)
    case = f"B=2, T=5, D=3, H=4, C=6, chunk=2 (the last chunk is shorter), {str(dtype)[6:]}"
    params = random_params(gen, 3, 4, 6, dtype)
    out = call(
        "rnn.truncated_bptt",
        rnn.truncated_bptt,
        randn(gen, 2, 5, 3, dtype=dtype),
        torch.randint(0, 6, (2, 5), generator=gen),
        randn(gen, 2, 4, dtype=dtype),
        params,
        2,
        case=case,
    )
    loss, grads, h_last = unpack("rnn.truncated_bptt", out, ("loss", "grads", "h_last"), case=case)
    check_tensor("rnn.truncated_bptt", loss, case=case, shape=(), dtype=dtype, what="loss")
    check_tensor("rnn.truncated_bptt", h_last, case=case, shape=(2, 4), dtype=dtype, what="h_last")
    for key, value in [*params.items(), ("h0", h_last)]:
        check_tensor(
            "rnn.truncated_bptt",
            grads.get(key),
            case=case,
            shape=tuple(value.shape),
            dtype=dtype,
            what=f"grads[{key!r}]",
        )


# --- birnn_forward -------------------------------------------------------------------------------


@checks("rnn.birnn_forward")
def test_birnn_forward_worked_example():
    # Both directions: W_xh = 1, W_hh = 1, b_h = 0, so h = tanh(x_t + h_previous_in_reading_order).
    #   forward  (reads x1, x2 from h0_fwd = -0.5): f1 = tanh(1 - 0.5), f2 = tanh(2 + f1)
    #   backward (reads x2, x1 from h0_bwd = 0.5):  b2 = tanh(2 + 0.5), b1 = tanh(1 + b2)
    # Position-aligned: hs[:, 0] = [f1, b1], hs[:, 1] = [f2, b2].
    case = "B=1, T=2, D=1, H=1, x=[1, 2], h0_fwd=-0.5, h0_bwd=0.5, all weights 1, biases 0"
    p = {"W_xh": t([[1.0]]), "W_hh": t([[1.0]]), "b_h": t([0.0])}
    hs = call(
        "rnn.birnn_forward",
        rnn.birnn_forward,
        t([[[1.0], [2.0]]]),
        t([[-0.5]]),
        t([[0.5]]),
        p,
        {k: v.clone() for k, v in p.items()},
        case=case,
    )
    f1 = math.tanh(0.5)
    b2 = math.tanh(2.5)
    check_close("rnn.birnn_forward", hs, [[[f1, math.tanh(1 + b2)], [math.tanh(2 + f1), b2]]], case=case)


@checks("rnn.birnn_forward")
def test_birnn_forward_each_direction_has_its_own_weights():
    # D = H = 1, W_hh = 0 in both directions (so order does not matter), W_xh = 1 forward and 2
    # backward: position t holds [tanh(x_t), tanh(2 x_t)]. x = [0.5, 1]: [[tanh 0.5, tanh 1],
    # [tanh 1, tanh 2]]; the forward weights used backward would repeat the first column.
    case = "B=1, T=2, D=H=1, W_hh=0, W_xh = 1 forward and 2 backward, x=[0.5, 1]"
    fwd = {"W_xh": t([[1.0]]), "W_hh": t([[0.0]]), "b_h": t([0.0])}
    bwd = {"W_xh": t([[2.0]]), "W_hh": t([[0.0]]), "b_h": t([0.0])}
    zero = torch.zeros(1, 1, dtype=T64)
    out = call("rnn.birnn_forward", rnn.birnn_forward, t([[[0.5], [1.0]]]), zero, zero.clone(), fwd, bwd, case=case)
    want = [[[math.tanh(0.5), math.tanh(1.0)], [math.tanh(1.0), math.tanh(2.0)]]]
    check_close("rnn.birnn_forward", out, want, case=case)


@checks("rnn.birnn_forward")
@FLOATS
def test_birnn_forward_shape_and_dtype(dtype):
    gen = torch.Generator().manual_seed(4)
    case = f"B=2, T=3, D=4, H=5, {str(dtype)[6:]}"

    def p():
        return {
            "W_xh": randn(gen, 5, 4, dtype=dtype),
            "W_hh": randn(gen, 5, 5, dtype=dtype),
            "b_h": randn(gen, 5, dtype=dtype),
        }

    hs = call(
        "rnn.birnn_forward",
        rnn.birnn_forward,
        randn(gen, 2, 3, 4, dtype=dtype),
        randn(gen, 2, 5, dtype=dtype),
        randn(gen, 2, 5, dtype=dtype),
        p(),
        p(),
        case=case,
    )
    check_tensor("rnn.birnn_forward", hs, case=case, shape=(2, 3, 10), dtype=dtype, what="hs")


# --- greedy_decode -------------------------------------------------------------------------------


@checks("rnn.greedy_decode")
def test_greedy_decode_worked_example():
    # W_hh = 0, b_h = 0, W_hy = identity, b_y = 0, and two permutations:
    #   the embedding sends token j to the one-hot e_emb(j), emb: 0 -> 0, 1 -> 2, 2 -> 1
    #   W_xh sends e_i to e_mix(i),                          mix: 0 -> 2, 1 -> 0, 2 -> 1
    # so h = tanh(1) e_mix(emb(j)), whose largest logit is next(j) = mix(emb(j)): 0 -> 2, 2 -> 0, 1 -> 1.
    # Start tokens [0, 1] give [2, 0, 2, 0] and [1, 1, 1, 1] (the start token itself is not returned).
    case = "B=2, V=D=H=3, steps=4, start tokens [0, 1], permutations as embedding and W_xh"
    params = {
        "W_xh": t([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
        "W_hh": torch.zeros(3, 3, dtype=T64),
        "b_h": torch.zeros(3, dtype=T64),
        "W_hy": torch.eye(3, dtype=T64),
        "b_y": torch.zeros(3, dtype=T64),
    }
    embedding = t([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    tokens = call(
        "rnn.greedy_decode",
        rnn.greedy_decode,
        params,
        embedding,
        torch.zeros(2, 3, dtype=T64),
        torch.tensor([0, 1]),
        4,
        case=case,
    )
    check_tensor("rnn.greedy_decode", tokens, case=case, shape=(2, 4), dtype=torch.int64, what="tokens")
    check_close("rnn.greedy_decode", tokens, [[2, 0, 2, 0], [1, 1, 1, 1]], case=case, what="tokens")


@checks("rnn.greedy_decode")
def test_greedy_decode_carries_the_state_between_steps():
    # W_xh = 0, so only the state decides; W_hh swaps the two state entries and W_hy = identity:
    #   h0 = [1, 0] -> h1 = tanh([0, 1]) = [0, 0.76] -> token 1
    #            -> h2 = tanh([0.76, 0]) = [0.64, 0] -> token 0, then 1, 0 again.
    # A decoder that restarts every step from h0 would emit [1, 1, 1, 1].
    case = "B=1, V=D=H=2, steps=4, W_xh=0, W_hh=[[0, 1], [1, 0]], W_hy=identity, h0=[1, 0]"
    params = {
        "W_xh": torch.zeros(2, 2, dtype=T64),
        "W_hh": t([[0.0, 1.0], [1.0, 0.0]]),
        "b_h": torch.zeros(2, dtype=T64),
        "W_hy": torch.eye(2, dtype=T64),
        "b_y": torch.zeros(2, dtype=T64),
    }
    tokens = call(
        "rnn.greedy_decode",
        rnn.greedy_decode,
        params,
        torch.eye(2, dtype=T64),
        t([[1.0, 0.0]]),
        torch.tensor([0]),
        4,
        case=case,
    )
    check_tensor("rnn.greedy_decode", tokens, case=case, shape=(1, 4), dtype=torch.int64, what="tokens")
    check_close("rnn.greedy_decode", tokens, [[1, 0, 1, 0]], case=case, what="tokens")


@checks("rnn.greedy_decode")
def test_greedy_decode_breaks_ties_to_the_lowest_index():
    # W_hy = 0 and b_y = [1, 3, 3]: classes 1 and 2 tie at every step; argmax takes the lower, 1.
    case = "B=1, V=3, D=2, H=2, steps=3, b_y=[1, 3, 3] (a tie)"
    params = {
        "W_xh": torch.ones(2, 2, dtype=T64),
        "W_hh": torch.ones(2, 2, dtype=T64),
        "b_h": torch.zeros(2, dtype=T64),
        "W_hy": torch.zeros(3, 2, dtype=T64),
        "b_y": t([1.0, 3.0, 3.0]),
    }
    tokens = call(
        "rnn.greedy_decode",
        rnn.greedy_decode,
        params,
        torch.ones(3, 2, dtype=T64),
        torch.zeros(1, 2, dtype=T64),
        torch.tensor([0]),
        3,
        case=case,
    )
    check_close("rnn.greedy_decode", tokens, [[1, 1, 1]], case=case, what="tokens")


# --- the lab: train_char_rnn and sample_chars ------------------------------------------------------


def protocol_by_autograd(tokens, params, steps, batch_size, seq_len, lr, clip):
    """The lab's protocol written with PyTorch's autograd, clip_grad_norm_ and Adam as
    torch.optim.Adam documents it (defaults: betas 0.9, 0.999, eps 1e-8): what your hand-written
    loop must agree with, step by step. Adam is spelled out because making a torch.optim.Adam
    loads PyTorch's compiler, seconds of these tests' time."""
    V, H = params["W_hy"].shape
    leaves = {k: v.clone().requires_grad_() for k, v in params.items()}
    moments = {k: (torch.zeros_like(v), torch.zeros_like(v)) for k, v in leaves.items()}
    per_stream = tokens.shape[0] // batch_size
    rows = tokens[: batch_size * per_stream].reshape(batch_size, per_stream)
    n_windows = (per_stream - 1) // seq_len
    state, out = torch.zeros(batch_size, H, dtype=T64), []
    for step in range(steps):
        at = (step % n_windows) * seq_len
        if at == 0:
            state = torch.zeros(batch_size, H, dtype=T64)
        total = 0.0
        for k in range(seq_len):
            state = torch.tanh(
                torch.eye(V, dtype=T64)[rows[:, at + k]] @ leaves["W_xh"].T + state @ leaves["W_hh"].T + leaves["b_h"]
            )
            logits = state @ leaves["W_hy"].T + leaves["b_y"]
            total = total + torch.nn.functional.cross_entropy(logits, rows[:, at + k + 1], reduction="sum") / batch_size
        for v in leaves.values():
            v.grad = None
        total.backward()
        torch.nn.utils.clip_grad_norm_(list(leaves.values()), clip)
        with torch.no_grad():
            for k, v in leaves.items():
                m, sq = moments[k]
                m.mul_(0.9).add_(v.grad, alpha=0.1)
                sq.mul_(0.999).addcmul_(v.grad, v.grad, value=0.001)
                m_hat, s_hat = m / (1 - 0.9 ** (step + 1)), sq / (1 - 0.999 ** (step + 1))
                v.sub_(lr * m_hat / (s_hat.sqrt() + 1e-8))
        state = state.detach()
        out.append(total.item() / seq_len)
    return {k: v.detach() for k, v in leaves.items()}, torch.tensor(out, dtype=T64)


@checks("rnn.train_char_rnn")
@lab_test("rnn.train_char_rnn")
@pytest.mark.parametrize("clip", [0.5, 100.0], ids=["clipping", "no clipping"])
def test_train_char_rnn_follows_the_protocol(clip):
    qualname, case = "rnn.train_char_rnn", f"V=5, H=4, B=2, seq_len=3, 3 windows, 8 steps, clip={clip}"
    gen = torch.Generator().manual_seed(3)
    tokens = torch.randint(0, 5, (2 * (3 * 3 + 1) + 1,), generator=gen)
    params = random_params(gen, 5, 4, 5, T64)
    params_out, losses = unpack(
        qualname,
        call(qualname, rnn.train_char_rnn, tokens, params, 8, 2, 3, lr=0.05, clip=clip, case=case),
        ("params_out", "losses"),
        case=case,
    )
    want_params, want_losses = protocol_by_autograd(tokens, params, 8, 2, 3, 0.05, clip)
    check_tensor(qualname, losses, case=case, shape=(8,), dtype=T64, what="losses")
    check_close(qualname, losses, want_losses, case=case, what="losses")
    for key, value in want_params.items():
        check_close(qualname, params_out[key], value, case=case, what=f"params_out[{key!r}]")


@checks("rnn.train_char_rnn")
@lab_test("rnn.train_char_rnn")
def test_train_char_rnn_streams_a_multiple_of_seq_len_long():
    """The grader also trains on a text whose streams are exactly a multiple of seq_len long
    (here L = 9 = 3 * seq_len): the last window needs the token after it, so there are
    (L - 1) // seq_len = 2 windows, not L // seq_len = 3, and step 2 starts window 0 again."""
    qualname, case = "rnn.train_char_rnn", "V=5, H=4, B=2, seq_len=3, streams of 9 tokens, 7 steps, lr=0.03, clip=0.5"
    gen = torch.Generator().manual_seed(4)
    tokens = torch.randint(0, 5, (2 * 9,), generator=gen)
    params = random_params(gen, 5, 4, 5, T64)
    params_out, losses = unpack(
        qualname,
        call(qualname, rnn.train_char_rnn, tokens, params, 7, 2, 3, lr=0.03, clip=0.5, case=case),
        ("params_out", "losses"),
        case=case,
    )
    want_params, want_losses = protocol_by_autograd(tokens, params, 7, 2, 3, 0.03, 0.5)
    check_tensor(qualname, losses, case=case, shape=(7,), dtype=T64, what="losses")
    check_close(qualname, losses, want_losses, case=case, what="losses")
    for key, value in want_params.items():
        check_close(qualname, params_out[key], value, case=case, what=f"params_out[{key!r}]")


@checks("rnn.sample_chars")
def test_sample_chars_draws_with_the_generator():
    qualname, case = "rnn.sample_chars", "a flat model: every distribution uniform over V=4"
    params = random_params(torch.Generator().manual_seed(0), 4, 3, 4, T64)
    params = {**params, "W_hy": torch.zeros(4, 3, dtype=T64), "b_y": torch.zeros(4, dtype=T64)}
    start = torch.tensor([1, 3])
    tokens = call(qualname, rnn.sample_chars, params, start, 3, generator=torch.Generator().manual_seed(7), case=case)
    check_tensor(qualname, tokens, case=case, shape=(2, 3), dtype=torch.int64, what="tokens")
    g = torch.Generator().manual_seed(7)
    uniform = torch.full((2, 4), 0.25, dtype=T64)
    want = torch.stack([torch.multinomial(uniform, 1, generator=g)[:, 0] for _ in range(3)], dim=1)
    check_close(qualname, tokens, want, case=case, what="tokens (one multinomial call per step)")


@checks("rnn.sample_chars")
def test_sample_chars_temperature_divides_the_logits():
    qualname, case = "rnn.sample_chars", "one step, V=2, logits [0, log 3], temperature 0.5: p = [0.1, 0.9]"
    params = {
        "W_xh": torch.zeros(1, 2, dtype=T64),
        "W_hh": torch.zeros(1, 1, dtype=T64),
        "b_h": torch.zeros(1, dtype=T64),
        "W_hy": torch.zeros(2, 1, dtype=T64),
        "b_y": t([0.0, math.log(3.0)]),
    }
    start = torch.zeros(2000, dtype=torch.int64)
    gen = torch.Generator().manual_seed(11)
    tokens = call(qualname, rnn.sample_chars, params, start, 1, temperature=0.5, generator=gen, case=case)
    share = float(tokens.to(T64).mean())
    # softmax([0, log 3] / 0.5) = [1, 9] / 10; applied after the softmax the temperature gives 0.75
    check_close(qualname, t(share), t(0.9), case=case, what="share of token 1 in 2000 draws", atol=0.03, rtol=0.0)


@checks("rnn.train_char_rnn")
@lab_test("rnn.train_char_rnn")
def test_train_char_rnn_moves_every_tensor_by_your_adam():
    """The grader counts your adam's calls during the lab's run: one per tensor of params per
    step, at the lab's lr with adam's default betas and eps, and params_out is what the last
    step's calls returned (a loop that moves its weights another way, even late in a run where
    the losses still look right, trains nothing for the lab). Here the same count, 4 steps."""
    check_adam_steps("rnn.train_char_rnn", rnn.train_char_rnn)


@checks("rnn.train_char_rnn")
@lab_test("rnn.train_char_rnn")
@pytest.mark.skipif(BUDGETS_OFF, reason="LAB_BUDGETS=off")
def test_train_char_rnn_trains_within_its_cpu_budget():
    """Once at the grading sizes (the docstring's), on your core measured as the grader measures
    its own: the lab's CPU budget, refused in the grader's words. A few seconds."""
    check_budget("rnn.train_char_rnn", rnn.train_char_rnn)


# --- autograd through it, as the labs use it (_autograd.py) --------------------------------------


@checks("rnn.softmax_cross_entropy")
def test_softmax_cross_entropy_supports_autograd():
    gen = torch.Generator().manual_seed(5)
    logits, targets = randn(gen, 6, 4, scale=2.0), torch.tensor([0, 3, 1, 2, 3, 0])
    check_autograd(
        "rnn.softmax_cross_entropy",
        rnn.softmax_cross_entropy,
        (logits, targets),
        {},
        ("logits",),
        case="N=6, C=4",
    )
