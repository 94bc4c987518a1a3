"""Public tests of exercises/lstm_gru.py: shapes and dtypes, and one-unit worked examples.

With H=1 every gate is one number, so the expected values below are short formulas; distinct
biases per gate block make a wrong gate order show.
"""

from __future__ import annotations

import math

import pytest
import torch
from _autograd import check_autograd
from _check import call, check_batch_first, check_close, check_tensor, randn, unpack
from _labs import BUDGETS_OFF, check_adam_steps, check_budget, lab_test

from exercises import lstm_gru

checks = pytest.mark.checks
FLOATS = pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
T64 = torch.float64


def t(values, dtype=T64):
    return torch.tensor(values, dtype=dtype)


def sigmoid(z):
    return 1 / (1 + math.exp(-z))


def random_weights(gen, gates, D, H, dtype):
    return (
        randn(gen, gates * H, D, dtype=dtype, scale=0.5),
        randn(gen, gates * H, H, dtype=dtype, scale=0.5),
        randn(gen, gates * H, dtype=dtype, scale=0.1),
        randn(gen, gates * H, dtype=dtype, scale=0.1),
    )


# --- LSTM ----------------------------------------------------------------------------------------


@checks("lstm_gru.lstm_cell")
def test_lstm_cell_worked_example():
    # Gate blocks in PyTorch's order [i, f, g, o]; H = 1 so each block is one row.
    #   i = sigmoid(W_ii x + b_ii + b_hi) = sigmoid(1 * 0.5 + 1 + 0.5) = sigmoid(2)
    #   f = sigmoid(2),  g = tanh(3),  o = sigmoid(4 + W_ho h_prev) = sigmoid(4 - 1) = sigmoid(3)
    #   c = f * c_prev + i * g = sigmoid(2) * 0.5 + sigmoid(2) * tanh(3),  h = o * tanh(c)
    case = "B=1, D=1, H=1, x=0.5, h_prev=1, c_prev=0.5, b_ih=[1, 2, 3, 4], b_hh=[0.5, 0, 0, 0]"
    out = call(
        "lstm_gru.lstm_cell",
        lstm_gru.lstm_cell,
        t([[0.5]]),
        t([[1.0]]),
        t([[0.5]]),
        t([[1.0], [0.0], [0.0], [0.0]]),
        t([[0.0], [0.0], [0.0], [-1.0]]),
        t([1.0, 2.0, 3.0, 4.0]),
        t([0.5, 0.0, 0.0, 0.0]),
        case=case,
    )
    h, c = unpack("lstm_gru.lstm_cell", out, ("h", "c"), case=case)
    c_want = sigmoid(2) * 0.5 + sigmoid(2) * math.tanh(3)
    check_close("lstm_gru.lstm_cell", c, [[c_want]], case=case, what="c")
    check_close("lstm_gru.lstm_cell", h, [[sigmoid(3) * math.tanh(c_want)]], case=case, what="h")


def _bias_only_cell(c_prev: float, b_ih: list[float], case: str):
    """lstm_cell with every weight 0, x = 1, h_prev = 0 and b_hh = 0: only b_ih and c_prev speak."""
    zeros = torch.zeros(4, 1, dtype=T64)
    out = call(
        "lstm_gru.lstm_cell",
        lstm_gru.lstm_cell,
        t([[1.0]]),
        t([[0.0]]),
        t([[c_prev]]),
        zeros,
        zeros.clone(),
        t(b_ih),
        torch.zeros(4, dtype=T64),
        case=case,
    )
    return unpack("lstm_gru.lstm_cell", out, ("h", "c"), case=case)


@checks("lstm_gru.lstm_cell")
def test_lstm_cell_gate_blocks_in_pytorchs_order():
    # Every weight 0 and c_prev = 0, so only the biases speak; b_ih = [0, 0, 1, -1] sets the four
    # blocks in PyTorch's order [i, f, g, o]:
    #   i = f = sigmoid(0) = 0.5,  g = tanh(1),  o = sigmoid(-1)
    #   c = f * 0 + i * g = 0.5 tanh(1) = 0.3808,  h = o * tanh(c) = sigmoid(-1) tanh(0.3808) = 0.0977
    # Reading the blocks as [i, f, o, g] would give g = tanh(-1): a negative cell state.
    case = "B=1, D=1, H=1, all weights 0, x=1, h_prev=c_prev=0, b_ih=[0, 0, 1, -1], b_hh=0"
    h, c = _bias_only_cell(0.0, [0.0, 0.0, 1.0, -1.0], case)
    c_want = 0.5 * math.tanh(1)
    check_close("lstm_gru.lstm_cell", c, [[c_want]], case=case, what="c")
    check_close("lstm_gru.lstm_cell", h, [[sigmoid(-1) * math.tanh(c_want)]], case=case, what="h")


@checks("lstm_gru.lstm_cell")
def test_lstm_cell_forget_gate_scales_the_old_cell():
    # Every weight 0, c_prev = 1, b_ih = [0, 1, 1, 0]: i = sigmoid(0) = 0.5, f = sigmoid(1),
    # g = tanh(1), o = 0.5. The forget gate keeps the old cell, the input gate lets g in:
    #   c = f * c_prev + i * g = sigmoid(1) + 0.5 tanh(1),  h = 0.5 tanh(c)
    # (i * c_prev + f * g, the two roles swapped, would give 0.5 + sigmoid(1) tanh(1).)
    case = "B=1, D=1, H=1, all weights 0, x=1, h_prev=0, c_prev=1, b_ih=[0, 1, 1, 0], b_hh=0"
    h, c = _bias_only_cell(1.0, [0.0, 1.0, 1.0, 0.0], case)
    c_want = sigmoid(1) + 0.5 * math.tanh(1)
    check_close("lstm_gru.lstm_cell", c, [[c_want]], case=case, what="c")
    check_close("lstm_gru.lstm_cell", h, [[0.5 * math.tanh(c_want)]], case=case, what="h")


@checks("lstm_gru.lstm_cell")
@FLOATS
def test_lstm_cell_shapes_and_dtype(dtype):
    gen = torch.Generator().manual_seed(0)
    case = f"B=2, D=3, H=4, {str(dtype)[6:]}"
    out = call(
        "lstm_gru.lstm_cell",
        lstm_gru.lstm_cell,
        randn(gen, 2, 3, dtype=dtype),
        randn(gen, 2, 4, dtype=dtype),
        randn(gen, 2, 4, dtype=dtype),
        *random_weights(gen, 4, 3, 4, dtype),
        case=case,
    )
    h, c = unpack("lstm_gru.lstm_cell", out, ("h", "c"), case=case)
    check_tensor("lstm_gru.lstm_cell", h, case=case, shape=(2, 4), dtype=dtype, what="h")
    check_tensor("lstm_gru.lstm_cell", c, case=case, shape=(2, 4), dtype=dtype, what="c")


@checks("lstm_gru.lstm_forward")
def test_lstm_forward_worked_example():
    # All weights 0 and b_ih = [0, 0, 1, 0]: i = f = o = sigmoid(0) = 0.5 and g = tanh(1) at every step.
    #   c1 = 0.5 * c0 + 0.5 tanh 1 = 0.5 + 0.5 tanh 1,  h1 = 0.5 tanh(c1)
    #   c2 = 0.5 * c1 + 0.5 tanh 1,                      h2 = 0.5 tanh(c2)
    case = "B=1, T=2, D=1, H=1, h0=0, c0=1, zero weights, b_ih=[0, 0, 1, 0]"
    zeros = torch.zeros(4, 1, dtype=T64)
    out = call(
        "lstm_gru.lstm_forward",
        lstm_gru.lstm_forward,
        t([[[3.0], [-3.0]]]),
        t([[0.0]]),
        t([[1.0]]),
        zeros,
        zeros.clone(),
        t([0.0, 0.0, 1.0, 0.0]),
        torch.zeros(4, dtype=T64),
        case=case,
    )
    hs, last = unpack("lstm_gru.lstm_forward", out, ("hs", "(h_T, c_T)"), case=case)
    h_T, c_T = unpack("lstm_gru.lstm_forward", last, ("h_T", "c_T"), case=case)
    c1 = 0.5 + 0.5 * math.tanh(1)
    c2 = 0.5 * c1 + 0.5 * math.tanh(1)
    check_close("lstm_gru.lstm_forward", hs, [[[0.5 * math.tanh(c1)], [0.5 * math.tanh(c2)]]], case=case, what="hs")
    check_close("lstm_gru.lstm_forward", h_T, [[0.5 * math.tanh(c2)]], case=case, what="h_T")
    check_close("lstm_gru.lstm_forward", c_T, [[c2]], case=case, what="c_T")


@checks("lstm_gru.lstm_forward")
def test_lstm_forward_keeps_batch_and_time_apart():
    # All weights 0 but W_ih's g row (1), h0 = c0 = 0: i = f = o = 0.5 and g = tanh(x) at every
    # step, so c_t = 0.5 c_{t-1} + 0.5 tanh(x_t) and h_t = 0.5 tanh(c_t), row by row. B = 2 and
    # T = 3 with a different input at every (b, t): states stacked time-major (T, B, H) and then
    # reshaped to (B, T, H) instead of transposed land in the wrong places.
    case = "B=2, T=3, D=H=1, h0=c0=0, W_ih=[[0], [0], [1], [0]], W_hh=0, biases 0, x[b, t] = 1, 2, 3 / 4, 5, 6 (/4)"
    x = t([[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]]]) / 4
    zeros = torch.zeros(4, 1, dtype=T64)
    out = call(
        "lstm_gru.lstm_forward",
        lstm_gru.lstm_forward,
        x,
        torch.zeros(2, 1, dtype=T64),
        torch.zeros(2, 1, dtype=T64),
        t([[0.0], [0.0], [1.0], [0.0]]),
        zeros,
        torch.zeros(4, dtype=T64),
        torch.zeros(4, dtype=T64),
        case=case,
    )
    hs, _ = unpack("lstm_gru.lstm_forward", out, ("hs", "(h_T, c_T)"), case=case)
    want = []
    for row in x[:, :, 0].tolist():
        c, states = 0.0, []
        for x_t in row:
            c = 0.5 * c + 0.5 * math.tanh(x_t)
            states.append([0.5 * math.tanh(c)])
        want.append(states)
    check_batch_first("lstm_gru.lstm_forward", hs, want, case=case, what="hs", step="hidden state")


@checks("lstm_gru.lstm_forward")
@FLOATS
def test_lstm_forward_shapes_and_dtype(dtype):
    gen = torch.Generator().manual_seed(1)
    case = f"B=2, T=3, D=3, H=4, {str(dtype)[6:]}"
    out = call(
        "lstm_gru.lstm_forward",
        lstm_gru.lstm_forward,
        randn(gen, 2, 3, 3, dtype=dtype),
        randn(gen, 2, 4, dtype=dtype),
        randn(gen, 2, 4, dtype=dtype),
        *random_weights(gen, 4, 3, 4, dtype),
        case=case,
    )
    hs, last = unpack("lstm_gru.lstm_forward", out, ("hs", "(h_T, c_T)"), case=case)
    h_T, c_T = unpack("lstm_gru.lstm_forward", last, ("h_T", "c_T"), case=case)
    check_tensor("lstm_gru.lstm_forward", hs, case=case, shape=(2, 3, 4), dtype=dtype, what="hs")
    check_tensor("lstm_gru.lstm_forward", h_T, case=case, shape=(2, 4), dtype=dtype, what="h_T")
    check_tensor("lstm_gru.lstm_forward", c_T, case=case, shape=(2, 4), dtype=dtype, what="c_T")
    check_close("lstm_gru.lstm_forward", hs[:, -1], h_T, case=case, what="hs[:, -1] vs h_T")


# --- GRU -----------------------------------------------------------------------------------------


@checks("lstm_gru.gru_cell")
def test_gru_cell_worked_example():
    # Gate blocks in PyTorch's order [r, z, n]; only n sees x (W_in = 1) and h_prev (W_hn = 2).
    #   r = sigmoid(1),  z = sigmoid(-1)
    #   n = tanh(W_in x + b_in + r * (W_hn h_prev + b_hn)) = tanh(1 + sigmoid(1) * (2 * 0.5 + 0.5))
    #   h = (1 - z) * n + z * h_prev
    # (The notes' form tanh(W_in x + W_hn (r * h_prev) + b) would give tanh(1.5 + sigmoid(1)) instead.)
    case = "B=1, D=1, H=1, x=1, h_prev=0.5, W_ih=[0, 0, 1], W_hh=[0, 0, 2], b_ih=[1, -1, 0], b_hh=[0, 0, 0.5]"
    h = call(
        "lstm_gru.gru_cell",
        lstm_gru.gru_cell,
        t([[1.0]]),
        t([[0.5]]),
        t([[0.0], [0.0], [1.0]]),
        t([[0.0], [0.0], [2.0]]),
        t([1.0, -1.0, 0.0]),
        t([0.0, 0.0, 0.5]),
        case=case,
    )
    n = math.tanh(1 + sigmoid(1) * 1.5)
    z = sigmoid(-1)
    check_close("lstm_gru.gru_cell", h, [[(1 - z) * n + z * 0.5]], case=case)


@checks("lstm_gru.gru_cell")
def test_gru_cell_hidden_term_reaches_every_gate():
    # H = 1, every weight and b_ih 0, b_hh = [0, 2, 0] (blocks r, z, n), h_prev = 1:
    #   r = sigmoid(0) = 0.5, z = sigmoid(0 + 2) = 0.8808, n = tanh(0 + r * 0) = 0
    #   h = (1 - z) * n + z * h_prev = sigmoid(2) = 0.8808
    # A gate that leaves out its hidden term (W_hz h + b_hz) would give z = 0.5, h = 0.5.
    case = "B=1, D=H=1, all weights and b_ih 0, b_hh=[0, 2, 0], x=1, h_prev=1"
    zeros = torch.zeros(3, 1, dtype=T64)
    h = call(
        "lstm_gru.gru_cell",
        lstm_gru.gru_cell,
        t([[1.0]]),
        t([[1.0]]),
        zeros,
        zeros.clone(),
        torch.zeros(3, dtype=T64),
        t([0.0, 2.0, 0.0]),
        case=case,
    )
    check_close("lstm_gru.gru_cell", h, [[sigmoid(2)]], case=case, what="h")


@checks("lstm_gru.gru_cell")
@FLOATS
def test_gru_cell_shape_and_dtype(dtype):
    gen = torch.Generator().manual_seed(2)
    case = f"B=2, D=3, H=4, {str(dtype)[6:]}"
    h = call(
        "lstm_gru.gru_cell",
        lstm_gru.gru_cell,
        randn(gen, 2, 3, dtype=dtype),
        randn(gen, 2, 4, dtype=dtype),
        *random_weights(gen, 3, 3, 4, dtype),
        case=case,
    )
    check_tensor("lstm_gru.gru_cell", h, case=case, shape=(2, 4), dtype=dtype, what="h")


@checks("lstm_gru.gru_forward")
def test_gru_forward_worked_example():
    # All weights 0, b_ih = [0, 0, 1]: r = z = 0.5 and n = tanh(1) at every step, so
    #   h1 = 0.5 tanh 1 + 0.5 h0 = 0.5 tanh 1 + 0.5,  h2 = 0.5 tanh 1 + 0.5 h1 = 0.75 tanh 1 + 0.25
    case = "B=1, T=2, D=1, H=1, h0=1, zero weights, b_ih=[0, 0, 1]"
    zeros = torch.zeros(3, 1, dtype=T64)
    out = call(
        "lstm_gru.gru_forward",
        lstm_gru.gru_forward,
        t([[[3.0], [-3.0]]]),
        t([[1.0]]),
        zeros,
        zeros.clone(),
        t([0.0, 0.0, 1.0]),
        torch.zeros(3, dtype=T64),
        case=case,
    )
    hs, h_T = unpack("lstm_gru.gru_forward", out, ("hs", "h_T"), case=case)
    h1, h2 = 0.5 * math.tanh(1) + 0.5, 0.75 * math.tanh(1) + 0.25
    check_close("lstm_gru.gru_forward", hs, [[[h1], [h2]]], case=case, what="hs")
    check_close("lstm_gru.gru_forward", h_T, [[h2]], case=case, what="h_T")


@checks("lstm_gru.gru_forward")
def test_gru_forward_uses_pytorchs_gru_form():
    # The weights of the gru_cell example, over x = [1, -1] from h0 = 0.5: each step is
    #   n = tanh(x + sigmoid(1) * (2 h + 0.5)),  h = (1 - sigmoid(-1)) n + sigmoid(-1) h
    case = "B=1, T=2, D=1, H=1, x=[1, -1], h0=0.5, the weights of the gru_cell example"
    out = call(
        "lstm_gru.gru_forward",
        lstm_gru.gru_forward,
        t([[[1.0], [-1.0]]]),
        t([[0.5]]),
        t([[0.0], [0.0], [1.0]]),
        t([[0.0], [0.0], [2.0]]),
        t([1.0, -1.0, 0.0]),
        t([0.0, 0.0, 0.5]),
        case=case,
    )
    hs, h_T = unpack("lstm_gru.gru_forward", out, ("hs", "h_T"), case=case)
    h, want = 0.5, []
    for x in (1.0, -1.0):
        n = math.tanh(x + sigmoid(1) * (2 * h + 0.5))
        h = (1 - sigmoid(-1)) * n + sigmoid(-1) * h
        want.append([h])
    check_close("lstm_gru.gru_forward", hs, [want], case=case, what="hs")


@checks("lstm_gru.gru_forward")
def test_gru_forward_keeps_batch_and_time_apart():
    # All weights 0 but W_ih's n row (1), h0 = 0: r = z = 0.5 and n = tanh(x) at every step, so
    # h_t = 0.5 tanh(x_t) + 0.5 h_{t-1}, row by row. B = 2 and T = 3 with a different input at
    # every (b, t): states stacked time-major (T, B, H) and then reshaped to (B, T, H) instead of
    # transposed land in the wrong places.
    case = "B=2, T=3, D=H=1, h0=0, W_ih=[[0], [0], [1]], W_hh=0, biases 0, x[b, t] = 1, 2, 3 / 4, 5, 6 (/4)"
    x = t([[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]]]) / 4
    out = call(
        "lstm_gru.gru_forward",
        lstm_gru.gru_forward,
        x,
        torch.zeros(2, 1, dtype=T64),
        t([[0.0], [0.0], [1.0]]),
        torch.zeros(3, 1, dtype=T64),
        torch.zeros(3, dtype=T64),
        torch.zeros(3, dtype=T64),
        case=case,
    )
    hs, _ = unpack("lstm_gru.gru_forward", out, ("hs", "h_T"), case=case)
    want = []
    for row in x[:, :, 0].tolist():
        h, states = 0.0, []
        for x_t in row:
            h = 0.5 * math.tanh(x_t) + 0.5 * h
            states.append([h])
        want.append(states)
    check_batch_first("lstm_gru.gru_forward", hs, want, case=case, what="hs", step="hidden state")


@checks("lstm_gru.gru_forward")
@FLOATS
def test_gru_forward_shapes_and_dtype(dtype):
    gen = torch.Generator().manual_seed(3)
    case = f"B=2, T=3, D=3, H=4, {str(dtype)[6:]}"
    out = call(
        "lstm_gru.gru_forward",
        lstm_gru.gru_forward,
        randn(gen, 2, 3, 3, dtype=dtype),
        randn(gen, 2, 4, dtype=dtype),
        *random_weights(gen, 3, 3, 4, dtype),
        case=case,
    )
    hs, h_T = unpack("lstm_gru.gru_forward", out, ("hs", "h_T"), case=case)
    check_tensor("lstm_gru.gru_forward", hs, case=case, shape=(2, 3, 4), dtype=dtype, what="hs")
    check_tensor("lstm_gru.gru_forward", h_T, case=case, shape=(2, 4), dtype=dtype, what="h_T")


# --- the lab: input_gradient_norms ---------------------------------------------------------------


@checks("lstm_gru.input_gradient_norms")
@pytest.mark.parametrize("kind", ("rnn", "lstm", "gru"))
def test_input_gradient_norms_match_torch_modules(kind):
    qualname, case = "lstm_gru.input_gradient_norms", f"kind={kind!r}, B=2, T=6, D=3, H=4, weights of nn.{kind.upper()}"
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 6, 3, generator=gen, dtype=torch.float64)
    h0 = torch.randn(2, 4, generator=gen, dtype=torch.float64)
    torch.manual_seed(1)
    net = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind](3, 4, batch_first=True).double()
    w = [p.detach() for p in (net.weight_ih_l0, net.weight_hh_l0, net.bias_ih_l0, net.bias_hh_l0)]
    if kind == "rnn":
        params = {"W_xh": w[0], "W_hh": w[1], "b_h": w[2] + w[3]}
    else:
        params = dict(zip(("W_ih", "W_hh", "b_ih", "b_hh"), w))
    xs = x.clone().requires_grad_()
    out, _ = net(xs, (h0[None], torch.zeros_like(h0)[None]) if kind == "lstm" else h0[None])
    (dx,) = torch.autograd.grad(out[:, -1].sum(), xs)
    norms = call(qualname, lstm_gru.input_gradient_norms, kind, x, h0, params, case=case)
    check_tensor(qualname, norms, case=case, shape=(6,), dtype=torch.float64, what="norms")
    check_close(qualname, norms, dx.pow(2).sum(dim=(0, 2)).sqrt(), case=case, what="norms")


# --- the lab: train_recall -------------------------------------------------------------------------


@checks("lstm_gru.train_recall")
@lab_test("lstm_gru.train_recall")
def test_train_recall_returns_new_parameters_and_a_loss_per_step():
    qualname, case = "lstm_gru.train_recall", "kind='lstm', K=4, H=5, 3 steps of 8 sequences, lag 4"
    gen = torch.Generator().manual_seed(0)
    K, H = 4, 5
    params = {
        "W_ih": randn(gen, 4 * H, K, dtype=torch.float32, scale=0.3),
        "W_hh": randn(gen, 4 * H, H, dtype=torch.float32, scale=0.3),
        "b_ih": torch.zeros(4 * H),
        "b_hh": torch.zeros(4 * H),
        "W_y": randn(gen, K, H, dtype=torch.float32, scale=0.3),
        "b_y": torch.zeros(K),
    }
    out = call(
        qualname, lstm_gru.train_recall, "lstm", params, 3, 8, 4, generator=torch.Generator().manual_seed(1), case=case
    )
    trained, losses = unpack(qualname, out, ("params_out", "losses"), case=case)
    check_tensor(qualname, losses, case=case, shape=(3,), dtype=torch.float32, what="losses")
    for key, value in params.items():
        check_tensor(qualname, trained[key], case=case, shape=tuple(value.shape), dtype=torch.float32, what=key)
    assert bool(torch.isfinite(losses).all()), f"{qualname}, case {case}: losses are not finite"


def adam_by_hand(leaves, moments, step, lr):
    """One step of Adam on every leaf with a gradient, as torch.optim.Adam documents it (betas
    0.9, 0.999, eps 1e-8), spelled out: making a torch.optim.Adam loads PyTorch's compiler,
    seconds of these tests' time."""
    with torch.no_grad():
        for k, v in leaves.items():
            m, sq = moments[k]
            m.mul_(0.9).add_(v.grad, alpha=0.1)
            sq.mul_(0.999).addcmul_(v.grad, v.grad, value=0.001)
            m_hat, s_hat = m / (1 - 0.9 ** (step + 1)), sq / (1 - 0.999 ** (step + 1))
            v.sub_(lr * m_hat / (s_hat.sqrt() + 1e-8))


def protocol_by_autograd(kind, params, steps, batch_size, lag, lr, generator):
    """The lab's protocol (train_recall's docstring) written with PyTorch: each step draws a batch
    with recall_batch and the generator, runs PyTorch's own cell from zero states (the RNN's
    tanh written out), reads out h_T, takes F.cross_entropy against the first token, lets
    autograd give the gradients and moves each parameter by Adam. What your loop must agree
    with, step by step."""
    K, H = params["W_y"].shape
    leaves = {k: v.clone().requires_grad_() for k, v in params.items()}
    moments = {k: (torch.zeros_like(v), torch.zeros_like(v)) for k, v in leaves.items()}
    out = []
    for step in range(steps):
        tokens = lstm_gru.recall_batch(K, batch_size, lag, generator)
        x = torch.nn.functional.one_hot(tokens, K).to(T64)
        h = c = torch.zeros(batch_size, H, dtype=T64)
        p = leaves
        for k in range(x.shape[1]):
            if kind == "rnn":
                h = torch.tanh(x[:, k] @ p["W_xh"].T + h @ p["W_hh"].T + p["b_h"])
            elif kind == "lstm":
                h, c = torch.lstm_cell(x[:, k], (h, c), p["W_ih"], p["W_hh"], p["b_ih"], p["b_hh"])
            else:
                h = torch.gru_cell(x[:, k], h, p["W_ih"], p["W_hh"], p["b_ih"], p["b_hh"])
        loss = torch.nn.functional.cross_entropy(h @ p["W_y"].T + p["b_y"], tokens[:, 0])
        for v in leaves.values():
            v.grad = None
        loss.backward()
        adam_by_hand(leaves, moments, step, lr)
        out.append(loss.item())
    return {k: v.detach() for k, v in leaves.items()}, torch.tensor(out, dtype=T64)


def recall_params(gen, kind, K, H):
    if kind == "rnn":
        cell = {
            "W_xh": randn(gen, H, K, scale=0.5),
            "W_hh": randn(gen, H, H, scale=0.5),
            "b_h": randn(gen, H, scale=0.1),
        }
    else:
        cell = dict(zip(("W_ih", "W_hh", "b_ih", "b_hh"), random_weights(gen, 4 if kind == "lstm" else 3, K, H, T64)))
    return {**cell, "W_y": randn(gen, K, H, scale=0.5), "b_y": randn(gen, K, scale=0.1)}


@checks("lstm_gru.train_recall")
@lab_test("lstm_gru.train_recall")
@pytest.mark.parametrize("kind", ("rnn", "lstm", "gru"))
def test_train_recall_follows_the_protocol(kind):
    """The grader replays the protocol in float64 from your initial parameters and generator and
    compares your losses at every step; here the same rule, small: 6 steps, every loss and the
    returned parameters against PyTorch's cells, autograd and Adam."""
    qualname = "lstm_gru.train_recall"
    case = f"kind={kind!r}, K=4, H=3, 6 steps of 3 sequences, lag 3, lr=0.05, float64"
    params = recall_params(torch.Generator().manual_seed(8), kind, 4, 3)
    params_out, losses = unpack(
        qualname,
        call(
            qualname,
            lstm_gru.train_recall,
            kind,
            params,
            6,
            3,
            3,
            lr=0.05,
            generator=torch.Generator().manual_seed(9),
            case=case,
        ),
        ("params_out", "losses"),
        case=case,
    )
    want_params, want_losses = protocol_by_autograd(kind, params, 6, 3, 3, 0.05, torch.Generator().manual_seed(9))
    check_tensor(qualname, losses, case=case, shape=(6,), dtype=T64, what="losses")
    check_close(qualname, losses, want_losses, case=case, what="losses")
    for key, value in want_params.items():
        check_close(qualname, params_out[key], value, case=case, what=f"params_out[{key!r}]")


@checks("lstm_gru.train_recall")
@lab_test("lstm_gru.train_recall")
def test_train_recall_moves_every_tensor_by_your_adam():
    """The grader counts your adam's calls during the lab's run: one per tensor of params per
    step, at the lab's lr with adam's default betas and eps, and params_out is what the last
    step's calls returned (a loop that moves its weights another way, even late in a run where
    the losses still look right, trains nothing for the lab). Here the same count, 4 steps."""
    check_adam_steps("lstm_gru.train_recall", lstm_gru.train_recall)


@checks("lstm_gru.train_recall")
@lab_test("lstm_gru.train_recall")
@pytest.mark.skipif(BUDGETS_OFF, reason="LAB_BUDGETS=off")
def test_train_recall_trains_within_its_cpu_budget():
    """Once at the grading sizes (the docstring's), on your core measured as the grader measures
    its own: the lab's CPU budget, refused in the grader's words. A few seconds."""
    check_budget("lstm_gru.train_recall", lstm_gru.train_recall)


# --- autograd through it, as the labs use it (_autograd.py) --------------------------------------


@checks("lstm_gru.gru_cell")
def test_gru_cell_supports_autograd():
    gen = torch.Generator().manual_seed(6)
    x, h = randn(gen, 2, 3), randn(gen, 2, 4, scale=0.5)
    check_autograd(
        "lstm_gru.gru_cell",
        lstm_gru.gru_cell,
        (x, h, *random_weights(gen, 3, 3, 4, torch.float64)),
        {},
        ("x", "h_prev", "W_ih", "W_hh", "b_ih", "b_hh"),
        case="B=2, D=3, H=4",
    )


@checks("lstm_gru.gru_forward")
def test_gru_forward_supports_autograd():
    gen = torch.Generator().manual_seed(7)
    x, h0 = randn(gen, 2, 3, 3), randn(gen, 2, 4, scale=0.5)
    check_autograd(
        "lstm_gru.gru_forward",
        lstm_gru.gru_forward,
        (x, h0, *random_weights(gen, 3, 3, 4, torch.float64)),
        {},
        ("x", "h0", "W_ih", "W_hh", "b_ih", "b_hh"),
        case="B=2, T=3, D=3, H=4",
    )
