"""Public tests of exercises/selective_scan.py: discretization, the linear scan and the selective scan.

With one channel and a state of size one (D = N = 1) the recurrence is a sequence of numbers, and
the expected values below follow step by step.
"""

from __future__ import annotations

import math

import pytest
import torch
from _autograd import check_autograd
from _check import call, check_batch_first, check_close, check_tensor, randn, unpack
from _labs import BUDGETS_OFF, check_adam_steps, check_budget, lab_test
from torch.overrides import TorchFunctionMode

from exercises import selective_scan as ss

checks = pytest.mark.checks
FLOATS = pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
T64 = torch.float64


def t(values, dtype=T64):
    return torch.tensor(values, dtype=dtype)


def sigmoid(z):
    return 1 / (1 + math.exp(-z))


# --- discretize ----------------------------------------------------------------------------------


@checks("selective_scan.discretize")
def test_discretize_worked_example():
    # A_bar[d, n] = exp(delta[d] * A[d, n]) = [exp(0.5 * -1), exp(2 * -0.5)] = [e^-0.5, e^-1]
    # B_bar[d, n] = delta[d] * B[n]         = [0.5 * 3, 2 * 3]               = [1.5, 6]
    case = "B=1, T=1, D=2, N=1, delta=[0.5, 2], A=[[-1], [-0.5]], B=[3]"
    out = call(
        "selective_scan.discretize", ss.discretize, t([[[0.5, 2.0]]]), t([[-1.0], [-0.5]]), t([[[3.0]]]), case=case
    )
    A_bar, B_bar = unpack("selective_scan.discretize", out, ("A_bar", "B_bar"), case=case)
    check_close("selective_scan.discretize", A_bar, [[[[math.exp(-0.5)], [math.exp(-1.0)]]]], case=case, what="A_bar")
    check_close("selective_scan.discretize", B_bar, [[[[1.5], [6.0]]]], case=case, what="B_bar")


@checks("selective_scan.discretize")
@FLOATS
def test_discretize_shapes_and_dtype(dtype):
    gen = torch.Generator().manual_seed(0)
    case = f"B=2, T=3, D=4, N=5, {str(dtype)[6:]}"
    out = call(
        "selective_scan.discretize",
        ss.discretize,
        randn(gen, 2, 3, 4, dtype=dtype).abs(),
        -randn(gen, 4, 5, dtype=dtype).abs(),
        randn(gen, 2, 3, 5, dtype=dtype),
        case=case,
    )
    A_bar, B_bar = unpack("selective_scan.discretize", out, ("A_bar", "B_bar"), case=case)
    check_tensor("selective_scan.discretize", A_bar, case=case, shape=(2, 3, 4, 5), dtype=dtype, what="A_bar")
    check_tensor("selective_scan.discretize", B_bar, case=case, shape=(2, 3, 4, 5), dtype=dtype, what="B_bar")


# --- linear_scan ---------------------------------------------------------------------------------


@checks("selective_scan.linear_scan")
def test_linear_scan_worked_example():
    # h_t = a_t h_{t-1} + b_t with a = [2, 3, 0.5, -1, 0], b = 1:
    #   from h0 = 1:    h = [2*1+1, 3*3+1, 0.5*10+1, -1*6+1, 0*(-5)+1] = [3, 10, 6, -5, 1]
    #   from h0 = None: h = [1, 4, 3, -2, 1]   (h0 = 0)
    a = t([[[2.0], [3.0], [0.5], [-1.0], [0.0]]])
    b = torch.ones(1, 5, 1, dtype=T64)
    case = "B=1, T=5, one channel, a=[2, 3, 0.5, -1, 0], b=1, h0=1"
    h = call("selective_scan.linear_scan", ss.linear_scan, a, b, t([[1.0]]), case=case)
    check_close("selective_scan.linear_scan", h, [[[3.0], [10.0], [6.0], [-5.0], [1.0]]], case=case, what="h")
    case = "B=1, T=5, one channel, a=[2, 3, 0.5, -1, 0], b=1, h0=None"
    h = call("selective_scan.linear_scan", ss.linear_scan, a, b, case=case)
    check_close("selective_scan.linear_scan", h, [[[1.0], [4.0], [3.0], [-2.0], [1.0]]], case=case, what="h")


@checks("selective_scan.linear_scan")
@FLOATS
@pytest.mark.parametrize("T", [1, 7, 8])
def test_linear_scan_shapes_and_dtype(dtype, T):
    gen = torch.Generator().manual_seed(T)
    case = f"a, b (2, {T}, 3, 4), h0 (2, 3, 4), {str(dtype)[6:]}"
    h = call(
        "selective_scan.linear_scan",
        ss.linear_scan,
        randn(gen, 2, T, 3, 4, dtype=dtype),
        randn(gen, 2, T, 3, 4, dtype=dtype),
        randn(gen, 2, 3, 4, dtype=dtype),
        case=case,
    )
    check_tensor("selective_scan.linear_scan", h, case=case, shape=(2, T, 3, 4), dtype=dtype, what="h")


class CountOps(TorchFunctionMode):
    """Counts the torch operations a call executes (what the hidden tests' complexity rule counts too)."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


@checks("selective_scan.linear_scan")
def test_linear_scan_takes_logarithmically_many_steps():
    # O(log T) sequential steps: going from T=64 to T=1024 (16 times longer) may add a few levels
    # (log2: 6 -> 10), but a Python loop over time would execute about 16 times as many operations.
    counts = {}
    for T in (64, 1024):
        a, b = torch.full((1, T, 2), 0.9, dtype=T64), torch.ones(1, T, 2, dtype=T64)
        with CountOps() as mode:
            call("selective_scan.linear_scan", ss.linear_scan, a, b, case=f"T={T}")
        counts[T] = mode.count
    if counts[1024] > 4 * counts[64]:
        pytest.fail(
            f"selective_scan.linear_scan: {counts[64]} torch operations at T=64 but {counts[1024]} at T=1024 "
            f"({counts[1024] / counts[64]:.1f}x for 16x the length); it must run in O(log T) steps, without "
            f"a Python loop over time",
            pytrace=False,
        )


# --- selective_scan ------------------------------------------------------------------------------


def scan_by_hand(delta, u, A, B, C):
    """One channel, N = 1: h_t = exp(delta_t A) h_{t-1} + delta_t B_t u_t, y_t = C_t h_t (h_0 = 0)."""
    h, ys = 0.0, []
    for d, x, b, c in zip(delta, u, B, C):
        h = math.exp(d * A) * h + d * b * x
        ys.append(c * h)
    return ys, h


def ssm_inputs(delta=(0.5, 0.5)):
    # u (1, 2, 1), delta (1, 2, 1), A (1, 1), B and C (1, 2, 1)
    return t([[[1.0], [2.0]]]), t([[[delta[0]], [delta[1]]]]), t([[-1.0]]), t([[[1.0], [1.0]]]), t([[[1.0], [2.0]]])


@checks("selective_scan.selective_scan")
def test_selective_scan_worked_example():
    # h1 = e^-0.5 * 0 + 0.5 * 1 * 1 = 0.5,  y1 = 1 * h1
    # h2 = e^-0.5 * 0.5 + 0.5 * 1 * 2,       y2 = 2 * h2
    case = "B=1, T=2, D=1, N=1, u=[1, 2], delta=0.5, A=-1, B=1, C=[1, 2]"
    y = call("selective_scan.selective_scan", ss.selective_scan, *ssm_inputs(), case=case)
    ys, _ = scan_by_hand([0.5, 0.5], [1.0, 2.0], -1.0, [1.0, 1.0], [1.0, 2.0])
    check_tensor("selective_scan.selective_scan", y, case=case, shape=(1, 2, 1), dtype=T64, what="y")
    check_close("selective_scan.selective_scan", y, [[[ys[0]], [ys[1]]]], case=case, what="y")


@checks("selective_scan.selective_scan")
def test_selective_scan_options_worked_example():
    # delta_bias = 0.5 on delta = 0 then softplus: every step size is log(1 + e^0.5).
    # D = 0.1 adds 0.1 * u_t; z = [1, -1] multiplies by silu(z) = z * sigmoid(z); the last state is h2.
    case = (
        "B=1, T=2, D=1, N=1, u=[1, 2], delta=0, delta_bias=0.5, delta_softplus, A=-1, B=1, C=[1, 2], "
        "D=0.1, z=[1, -1], return_last_state"
    )
    step = math.log(1 + math.exp(0.5))
    ys, h_last = scan_by_hand([step, step], [1.0, 2.0], -1.0, [1.0, 1.0], [1.0, 2.0])
    want = [(ys[0] + 0.1 * 1.0) * 1 * sigmoid(1), (ys[1] + 0.1 * 2.0) * -1 * sigmoid(-1)]
    out = call(
        "selective_scan.selective_scan",
        ss.selective_scan,
        *ssm_inputs((0.0, 0.0)),
        D=t([0.1]),
        z=t([[[1.0], [-1.0]]]),
        delta_bias=t([0.5]),
        delta_softplus=True,
        return_last_state=True,
        case=case,
    )
    y, h_T = unpack("selective_scan.selective_scan", out, ("y", "h_T"), case=case)
    check_close("selective_scan.selective_scan", y, [[[want[0]], [want[1]]]], case=case, what="y")
    check_close("selective_scan.selective_scan", h_T, [[[h_last]]], case=case, what="h_T (B, D, N)")


@checks("selective_scan.selective_scan")
def test_selective_scan_keeps_batch_and_time_apart():
    # D = N = 1, delta = 0.5, A = -1, B = C = 1: each row is the scan by hand of its own inputs.
    # B = 2 and T = 3 with a different input at every (b, t): outputs stacked time-major (T, B, D)
    # and then reshaped to (B, T, D) instead of transposed land in the wrong places.
    case = "B=2, T=3, D=N=1, delta=0.5, A=-1, B=C=1, u[b, t] = 1, 2, 3 / 4, 5, 6"
    u = t([[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]]])
    ones = torch.ones(2, 3, 1, dtype=T64)
    y = call(
        "selective_scan.selective_scan", ss.selective_scan, u, ones * 0.5, t([[-1.0]]), ones, ones.clone(), case=case
    )
    want = [[[v] for v in scan_by_hand([0.5] * 3, row, -1.0, [1.0] * 3, [1.0] * 3)[0]] for row in u[:, :, 0].tolist()]
    check_batch_first("selective_scan.selective_scan", y, want, case=case, what="y", step="output")


@checks("selective_scan.selective_scan")
@FLOATS
def test_selective_scan_shapes_and_dtype(dtype):
    gen = torch.Generator().manual_seed(1)
    case = f"B=2, T=5, D=3, N=4, with D, z and return_last_state, {str(dtype)[6:]}"
    out = call(
        "selective_scan.selective_scan",
        ss.selective_scan,
        randn(gen, 2, 5, 3, dtype=dtype),
        randn(gen, 2, 5, 3, dtype=dtype),
        -randn(gen, 3, 4, dtype=dtype).abs(),
        randn(gen, 2, 5, 4, dtype=dtype),
        randn(gen, 2, 5, 4, dtype=dtype),
        D=randn(gen, 3, dtype=dtype),
        z=randn(gen, 2, 5, 3, dtype=dtype),
        delta_softplus=True,
        return_last_state=True,
        case=case,
    )
    y, h_T = unpack("selective_scan.selective_scan", out, ("y", "h_T"), case=case)
    check_tensor("selective_scan.selective_scan", y, case=case, shape=(2, 5, 3), dtype=dtype, what="y")
    check_tensor("selective_scan.selective_scan", h_T, case=case, shape=(2, 3, 4), dtype=dtype, what="h_T")


# --- the lab: train_selective_copy --------------------------------------------------------------------


def _copy_params(seed=0, M=8, D=16, N=8):
    gen = torch.Generator().manual_seed(seed)
    return {
        "embedding": randn(gen, M + 1 + ss.COPY_COUNT, D, dtype=torch.float32),
        "W_delta": randn(gen, D, D, dtype=torch.float32, scale=D**-0.5),
        "b_delta": torch.full((D,), -3.0),
        "W_B": randn(gen, N, D, dtype=torch.float32, scale=D**-0.5),
        "b_B": torch.zeros(N),
        "W_C": randn(gen, N, D, dtype=torch.float32, scale=D**-0.5),
        "b_C": torch.zeros(N),
        "A_log": torch.log(torch.arange(1, N + 1, dtype=torch.float32)).repeat(D, 1),
        "D": torch.ones(D),
        "W_out": randn(gen, M, D, dtype=torch.float32, scale=D**-0.5),
        "b_out": torch.zeros(M),
    }


@checks("selective_scan.train_selective_copy")
@lab_test("selective_scan.train_selective_copy")
def test_train_selective_copy_returns_new_parameters_and_a_loss_per_step():
    qualname, case = "selective_scan.train_selective_copy", "M=8, D=16, N=8, 3 steps of 4 sequences"
    params = _copy_params()
    out = call(
        qualname, ss.train_selective_copy, params, 3, 4, lr=1e-2, generator=torch.Generator().manual_seed(1), case=case
    )
    trained, losses = unpack(qualname, out, ("params_out", "losses"), case=case)
    check_tensor(qualname, losses, case=case, shape=(3,), dtype=torch.float32, what="losses")
    for key, value in params.items():
        check_tensor(qualname, trained[key], case=case, shape=tuple(value.shape), dtype=torch.float32, what=key)


@checks("selective_scan.train_selective_copy")
@lab_test("selective_scan.train_selective_copy")
def test_train_selective_copy_time_invariant_does_not_use_the_selective_weights():
    """The grader also trains your function with selective=False (a few steps, against the
    protocol): the time-invariant model's delta, B and C are the constants b_delta, b_B, b_C, so
    W_delta, W_B and W_C change no loss and come back unchanged."""
    qualname, case = "selective_scan.train_selective_copy", "selective=False, M=8, D=16, N=8, 3 steps of 4 sequences"
    runs = []
    for seed in (0, 1):  # the same model but for W_delta, W_B, W_C
        params = {
            **_copy_params(),
            **{k: v for k, v in _copy_params(seed + 7).items() if k in ("W_delta", "W_B", "W_C")},
        }
        out = call(
            qualname,
            ss.train_selective_copy,
            params,
            3,
            4,
            False,
            lr=1e-2,
            generator=torch.Generator().manual_seed(1),
            case=case,
        )
        trained, losses = unpack(qualname, out, ("params_out", "losses"), case=case)
        for key in ("W_delta", "W_B", "W_C"):
            if not torch.equal(trained[key], params[key]):
                pytest.fail(
                    f"{qualname}, case {case}: {key} changed, but selective=False does not use it", pytrace=False
                )
        runs.append(losses)
    if not torch.allclose(runs[0], runs[1], rtol=1e-5, atol=1e-6):
        pytest.fail(
            f"{qualname}, case {case}: the losses change with W_delta, W_B and W_C ({runs[0].tolist()} against "
            f"{runs[1].tolist()}), so the time-invariant model still computes delta, B or C from the input",
            pytrace=False,
        )


def protocol_by_autograd(params, steps, batch_size, selective, lr, generator):
    """The lab's protocol (train_selective_copy's and copy_logits' docstrings) written with
    torch.nn.functional and autograd: each step draws a batch with copy_batch and the generator,
    embeds it, makes delta, B and C (from the input, or the constants b_delta, b_B, b_C), runs the
    recurrence of selective_scan one step at a time (softplus on delta, A = -exp(A_log), the
    skip D), reads out the last COPY_COUNT positions, takes F.cross_entropy and moves every
    parameter the model uses by Adam (spelled out, as in test_rnn.py: torch.optim.Adam would load
    PyTorch's compiler). What your loop must agree with, step by step."""
    F = torch.nn.functional
    M = len(params["b_out"])  # the classes: data tokens 1 ... M, targets 0 ... M - 1
    leaves = {k: v.clone().requires_grad_() for k, v in params.items()}
    moments = {k: (torch.zeros_like(v), torch.zeros_like(v)) for k, v in leaves.items()}
    p, out = leaves, []
    for step in range(steps):
        tokens, targets = ss.copy_batch(M, batch_size, generator)
        u = F.embedding(tokens, p["embedding"])  # (B, T, D)
        if selective:
            delta, B, C = (F.linear(u, p[f"W_{k}"], p[f"b_{k}"]) for k in ("delta", "B", "C"))
        else:
            delta, B, C = (p[k].expand(*u.shape[:2], -1) for k in ("b_delta", "b_B", "b_C"))
        delta, A = F.softplus(delta), -torch.exp(p["A_log"])
        h, ys = torch.zeros(u.shape[0], *A.shape, dtype=T64), []
        for k in range(u.shape[1]):  # h (B, D, N): exp(delta A) h + delta B u, y = h C + D u
            h = torch.exp(delta[:, k, :, None] * A) * h + delta[:, k, :, None] * B[:, k, None, :] * u[:, k, :, None]
            ys.append((h * C[:, k, None, :]).sum(-1) + p["D"] * u[:, k])
        logits = F.linear(torch.stack(ys, dim=1)[:, -ss.COPY_COUNT :], p["W_out"], p["b_out"])
        loss = F.cross_entropy(logits.reshape(-1, M), targets.reshape(-1))
        for v in leaves.values():
            v.grad = None
        loss.backward()
        with torch.no_grad():
            for k, v in leaves.items():
                if v.grad is None:  # W_delta, W_B, W_C of the time-invariant model: not used, not moved
                    continue
                m, sq = moments[k]
                m.mul_(0.9).add_(v.grad, alpha=0.1)
                sq.mul_(0.999).addcmul_(v.grad, v.grad, value=0.001)
                m_hat, s_hat = m / (1 - 0.9 ** (step + 1)), sq / (1 - 0.999 ** (step + 1))
                v.sub_(lr * m_hat / (s_hat.sqrt() + 1e-8))
        out.append(loss.item())
    return {k: v.detach() for k, v in leaves.items()}, torch.tensor(out, dtype=T64)


@checks("selective_scan.train_selective_copy")
@lab_test("selective_scan.train_selective_copy")
@pytest.mark.parametrize("selective", [True, False], ids=["selective", "time-invariant"])
def test_train_selective_copy_follows_the_protocol(selective):
    """The grader replays the protocol in float64 from your initial parameters and generator and
    compares your losses at every step; here the same rule, small: 6 steps, every loss and the
    returned parameters against torch.nn.functional, autograd and Adam."""
    qualname = "selective_scan.train_selective_copy"
    case = f"selective={selective}, M=3, D=4, N=2, 6 steps of 3 sequences, lr=0.05, float64"
    params = {k: v.to(T64) for k, v in _copy_params(seed=2, M=3, D=4, N=2).items()}
    params["b_delta"] = torch.full((4,), -1.0, dtype=T64)  # delta near softplus(-1) = 0.31: a state that moves
    out = call(
        qualname,
        ss.train_selective_copy,
        params,
        6,
        3,
        selective,
        lr=0.05,
        generator=torch.Generator().manual_seed(3),
        case=case,
    )
    params_out, losses = unpack(qualname, out, ("params_out", "losses"), case=case)
    want_params, want_losses = protocol_by_autograd(params, 6, 3, selective, 0.05, torch.Generator().manual_seed(3))
    check_tensor(qualname, losses, case=case, shape=(6,), dtype=T64, what="losses")
    check_close(qualname, losses, want_losses, case=case, what="losses")
    for key, value in want_params.items():
        check_close(qualname, params_out.get(key), value, case=case, what=f"params_out[{key!r}]")


@checks("selective_scan.train_selective_copy")
@lab_test("selective_scan.train_selective_copy")
def test_train_selective_copy_moves_every_tensor_by_your_adam():
    """The grader counts your adam's calls during the lab's run: one per tensor of params per
    step, at the lab's lr with adam's default betas and eps, and params_out is what the last
    step's calls returned (a loop that moves its weights another way, even late in a run where
    the losses still look right, trains nothing for the lab). Here the same count, 4 steps."""
    check_adam_steps("selective_scan.train_selective_copy", ss.train_selective_copy)


@checks("selective_scan.train_selective_copy")
@lab_test("selective_scan.train_selective_copy")
@pytest.mark.skipif(BUDGETS_OFF, reason="LAB_BUDGETS=off")
def test_train_selective_copy_trains_within_its_cpu_budget():
    """Once at the grading sizes (the docstring's), on your core measured as the grader measures
    its own: the lab's CPU budget, refused in the grader's words. A few seconds."""
    check_budget("selective_scan.train_selective_copy", ss.train_selective_copy)


# --- autograd through it, as the labs use it (_autograd.py) --------------------------------------


@checks("selective_scan.discretize")
def test_discretize_supports_autograd():
    gen = torch.Generator().manual_seed(15)
    delta = 0.1 + randn(gen, 2, 3, 4).abs()
    A, B = -(0.5 + randn(gen, 4, 2).abs()), randn(gen, 2, 3, 2)
    check_autograd(
        "selective_scan.discretize",
        ss.discretize,
        (delta, A, B),
        {},
        ("delta", "A", "B"),
        case="B=2, T=3, D=4, N=2",
    )


@checks("selective_scan.linear_scan")
@pytest.mark.parametrize("T", [1, 5, 8], ids=["T=1", "T=5", "T=8"])
@pytest.mark.parametrize("with_h0", [False, True], ids=["h0=None", "h0 given"])
def test_linear_scan_supports_autograd(T, with_h0):
    """A scan that writes in place into a tensor autograd saved passes its value tests and then
    breaks the selective-copy lab's training: its docstring asks for a path without such writes
    where an input requires grad, and this is that path's test."""
    gen = torch.Generator().manual_seed(16 + T)
    a, b = 0.9 * torch.rand(2, T, 3, generator=gen, dtype=torch.float64), randn(gen, 2, T, 3)
    h0 = randn(gen, 2, 3) if with_h0 else None
    check_autograd(
        "selective_scan.linear_scan",
        ss.linear_scan,
        (a, b, h0),
        {},
        ("a", "b", "h0") if with_h0 else ("a", "b"),
        case=f"a, b (2, {T}, 3){', h0 (2, 3)' if with_h0 else ''}",
    )


@checks("selective_scan.selective_scan")
def test_selective_scan_supports_autograd():
    gen = torch.Generator().manual_seed(17)
    u, delta, z = randn(gen, 2, 4, 3), randn(gen, 2, 4, 3, scale=0.5), randn(gen, 2, 4, 3)
    A, B, C = -(0.5 + randn(gen, 3, 2).abs()), randn(gen, 2, 4, 2), randn(gen, 2, 4, 2)
    D, delta_bias = randn(gen, 3), randn(gen, 3, scale=0.3)
    check_autograd(
        "selective_scan.selective_scan",
        ss.selective_scan,
        (u, delta, A, B, C, D, z, delta_bias, True),
        {},
        ("u", "delta", "A", "B", "C", "D", "z", "delta_bias"),
        case="B=2, T=4, D=3, N=2, with D, z, delta_bias and softplus",
    )
