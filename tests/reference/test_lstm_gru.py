"""solutions/lstm_gru.py against nn.LSTMCell, nn.LSTM, nn.GRUCell and nn.GRU with copied weights."""

from __future__ import annotations

from fnmatch import fnmatch

import pytest
import torch
from torch import nn

from solutions import lstm_gru
from tests._helpers import assert_close, call_pure, check_out, ops_called, randn

RECURRENT_KERNELS = ("*lstm*", "*gru*", "*rnn_tanh*", "*rnn_relu*", "*_vf*")


# --- helpers (purity, op recording) -------------------------------------------------------------


@pytest.fixture
def ieee_rnn(device, monkeypatch):
    """cuDNN runs float32 RNNs in TF32 by default (~1e-3 error); the comparison needs IEEE float32."""
    if device.type == "cuda":
        monkeypatch.setattr(torch.backends.cudnn.rnn, "fp32_precision", "ieee")


def weights(gen, gates, D, H, device, dtype):
    s = H**-0.5
    return (
        randn(gen, gates * H, D, device=device, dtype=dtype, scale=s),
        randn(gen, gates * H, H, device=device, dtype=dtype, scale=s),
        randn(gen, gates * H, device=device, dtype=dtype, scale=s),
        randn(gen, gates * H, device=device, dtype=dtype, scale=s),
    )


def load(module, W_ih, W_hh, b_ih, b_hh, suffix=""):
    with torch.no_grad():
        getattr(module, "weight_ih" + suffix).copy_(W_ih)
        getattr(module, "weight_hh" + suffix).copy_(W_hh)
        getattr(module, "bias_ih" + suffix).copy_(b_ih)
        getattr(module, "bias_hh" + suffix).copy_(b_hh)
    return module


CELL_SHAPES = [(1, 1, 1), (1, 3, 4), (5, 2, 3)]  # (B, D, H)
SEQ_SHAPES = [(1, 1, 3, 4), (2, 1, 1, 2), (3, 7, 2, 5)]  # (B, T, D, H)


# --- LSTM ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("B,D,H", CELL_SHAPES)
def test_lstm_cell_matches_nn_lstmcell(device, dtype, gen, ieee_rnn, B, D, H):
    W = weights(gen, 4, D, H, device, dtype)
    x, h0, c0 = (randn(gen, B, n, device=device, dtype=dtype) for n in (D, H, H))
    h, c = call_pure(lstm_gru.lstm_cell, x, h0, c0, *W)
    cell = load(nn.LSTMCell(D, H).to(device=device, dtype=dtype), *W)
    with torch.no_grad():
        h_ref, c_ref = cell(x, (h0, c0))
    check_out(h, device, dtype, (B, H))
    check_out(c, device, dtype, (B, H))
    assert_close(h, h_ref)
    assert_close(c, c_ref)


@pytest.mark.parametrize("B,T,D,H", SEQ_SHAPES)
def test_lstm_forward_matches_nn_lstm(device, dtype, gen, ieee_rnn, B, T, D, H):
    W = weights(gen, 4, D, H, device, dtype)
    x = randn(gen, B, T, D, device=device, dtype=dtype)
    h0, c0 = (randn(gen, B, H, device=device, dtype=dtype) for _ in range(2))
    hs, (h_T, c_T) = call_pure(lstm_gru.lstm_forward, x, h0, c0, *W)
    lstm = load(nn.LSTM(D, H, batch_first=True).to(device=device, dtype=dtype), *W, suffix="_l0")
    with torch.no_grad():
        hs_ref, (h_n, c_n) = lstm(x, (h0[None], c0[None]))
    check_out(hs, device, dtype, (B, T, H))
    check_out(h_T, device, dtype, (B, H))
    check_out(c_T, device, dtype, (B, H))
    assert_close(hs, hs_ref)
    assert_close(h_T, h_n[0])
    assert_close(c_T, c_n[0])


# --- GRU ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("B,D,H", CELL_SHAPES)
def test_gru_cell_matches_nn_grucell(device, dtype, gen, ieee_rnn, B, D, H):
    W = weights(gen, 3, D, H, device, dtype)
    x, h0 = randn(gen, B, D, device=device, dtype=dtype), randn(gen, B, H, device=device, dtype=dtype)
    h = call_pure(lstm_gru.gru_cell, x, h0, *W)
    cell = load(nn.GRUCell(D, H).to(device=device, dtype=dtype), *W)
    with torch.no_grad():
        h_ref = cell(x, h0)
    check_out(h, device, dtype, (B, H))
    assert_close(h, h_ref)


@pytest.mark.parametrize("B,T,D,H", SEQ_SHAPES)
def test_gru_forward_matches_nn_gru(device, dtype, gen, ieee_rnn, B, T, D, H):
    W = weights(gen, 3, D, H, device, dtype)
    x = randn(gen, B, T, D, device=device, dtype=dtype)
    h0 = randn(gen, B, H, device=device, dtype=dtype)
    hs, h_T = call_pure(lstm_gru.gru_forward, x, h0, *W)
    gru = load(nn.GRU(D, H, batch_first=True).to(device=device, dtype=dtype), *W, suffix="_l0")
    with torch.no_grad():
        hs_ref, h_n = gru(x, h0[None])
    check_out(hs, device, dtype, (B, T, H))
    check_out(h_T, device, dtype, (B, H))
    assert_close(hs, hs_ref)
    assert_close(h_T, h_n[0])


def test_gru_cell_is_pytorch_form_not_notes_form(gen):
    """r multiplies (W_hn h + b_hn); the notes' form W_hn (r * h) + b is a different function."""
    B, D, H = 4, 3, 5
    W_ih, W_hh, b_ih, b_hh = weights(gen, 3, D, H, "cpu", torch.float64)
    x, h0 = torch.randn(B, D, generator=gen, dtype=torch.float64), torch.randn(B, H, generator=gen, dtype=torch.float64)
    h = lstm_gru.gru_cell(x, h0, W_ih, W_hh, b_ih, b_hh)
    gi = x @ W_ih.T + b_ih
    r = torch.sigmoid(gi[:, :H] + h0 @ W_hh[:H].T + b_hh[:H])
    z = torch.sigmoid(gi[:, H : 2 * H] + h0 @ W_hh[H : 2 * H].T + b_hh[H : 2 * H])
    n_notes = torch.tanh(gi[:, 2 * H :] + (r * h0) @ W_hh[2 * H :].T + b_hh[2 * H :])
    n_torch = torch.tanh(gi[:, 2 * H :] + r * (h0 @ W_hh[2 * H :].T + b_hh[2 * H :]))
    assert_close(h, (1 - z) * n_torch + z * h0)
    assert (h - ((1 - z) * n_notes + z * h0)).abs().max() > 1e-3


# --- structure: forward calls the cell by name, no recurrent kernels ------------------------------


@pytest.mark.parametrize("forward,cell,gates", [("lstm_forward", "lstm_cell", 4), ("gru_forward", "gru_cell", 3)])
def test_forward_calls_cell_by_name(monkeypatch, gen, forward, cell, gates):
    B, T, D, H = 2, 4, 3, 2
    calls = []
    original = getattr(lstm_gru, cell)
    monkeypatch.setattr(lstm_gru, cell, lambda *a: calls.append(1) or original(*a))
    x = torch.randn(B, T, D, generator=gen, dtype=torch.float64)
    states = [torch.randn(B, H, generator=gen, dtype=torch.float64) for _ in range(2 if gates == 4 else 1)]
    getattr(lstm_gru, forward)(x, *states, *weights(gen, gates, D, H, "cpu", torch.float64))
    assert len(calls) == T


@pytest.mark.parametrize("name,gates", [("lstm_cell", 4), ("lstm_forward", 4), ("gru_cell", 3), ("gru_forward", 3)])
def test_no_recurrent_kernels(gen, name, gates):
    B, T, D, H = 2, 3, 3, 2
    x = torch.randn(B, T, D, generator=gen, dtype=torch.float64)
    if name.endswith("_cell"):
        x = x[:, 0]
    states = [torch.randn(B, H, generator=gen, dtype=torch.float64) for _ in range(2 if gates == 4 else 1)]
    names = ops_called(getattr(lstm_gru, name), x, *states, *weights(gen, gates, D, H, "cpu", torch.float64))
    assert names, "the recorder saw no torch call at all"
    bad = sorted(n for n in names if any(fnmatch(n, p) for p in RECURRENT_KERNELS))
    assert not bad, f"{name} calls PyTorch recurrent kernels: {bad}"


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_input_gradient_norms_match_autograd_through_the_torch_modules(gen, kind):
    B, T, D, H = 2, 7, 3, 4
    x = torch.randn(B, T, D, generator=gen, dtype=torch.float64)
    h0 = torch.randn(B, H, generator=gen, dtype=torch.float64)
    torch.manual_seed(0)
    net = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind](D, H, batch_first=True).double()
    w = [p.detach() for p in (net.weight_ih_l0, net.weight_hh_l0, net.bias_ih_l0, net.bias_hh_l0)]
    params = (
        {"W_xh": w[0], "W_hh": w[1], "b_h": w[2] + w[3]}
        if kind == "rnn"
        else dict(zip(("W_ih", "W_hh", "b_ih", "b_hh"), w))
    )
    xs = x.clone().requires_grad_()
    out, _ = net(xs, (h0[None], torch.zeros_like(h0)[None]) if kind == "lstm" else h0[None])
    (dx,) = torch.autograd.grad(out[:, -1].sum(), xs)
    norms = lstm_gru.input_gradient_norms(kind, x, h0, params)
    assert torch.allclose(norms, dx.pow(2).sum(dim=(0, 2)).sqrt(), rtol=1e-10, atol=1e-12)
    if kind == "rnn":  # the vanishing gradient itself: the first input matters least
        assert norms[0] < norms[-1]
