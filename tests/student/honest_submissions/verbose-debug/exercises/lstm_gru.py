"""LSTM and GRU cells with plain tensor ops (L5 §7-§9)."""

from __future__ import annotations

import logging
import sys

import torch

DEBUG = False
log = logging.getLogger(__name__)


def _debug(*args):
    if DEBUG:
        print("[lstm_gru]", *args, file=sys.stderr)


def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    """One LSTM step, gates in the order i, f, g, o (PyTorch)."""
    H = h_prev.shape[-1]
    assert W_ih.shape[0] == 4 * H, f"W_ih should have 4H={4 * H} rows, got {W_ih.shape[0]}"
    gates = x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh  # (B, 4H)
    i_gate = torch.sigmoid(gates[:, 0 * H:1 * H])
    f_gate = torch.sigmoid(gates[:, 1 * H:2 * H])
    g_cand = torch.tanh(gates[:, 2 * H:3 * H])
    o_gate = torch.sigmoid(gates[:, 3 * H:4 * H])
    c = f_gate * c_prev + i_gate * g_cand  # the additive path
    h = o_gate * torch.tanh(c)
    _debug(f"lstm_cell: mean forget gate {f_gate.mean().item():.3f}")
    return h, c


def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    """Loop lstm_cell over time."""
    assert x.dim() == 3, "lstm_forward: x must be (B, T, D)"
    h, c = h0, c0
    outputs = []
    for t in range(x.shape[1]):
        h, c = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)
        outputs.append(h)
    return torch.stack(outputs, dim=1), (h, c)


def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    """PyTorch's GRU: r multiplies (W_hn h + b_hn), NOT h before the matmul (differs from the notes)."""
    H = h_prev.shape[-1]
    assert W_ih.shape[0] == 3 * H, f"W_ih should have 3H={3 * H} rows"
    gi = x @ W_ih.T + b_ih
    gh = h_prev @ W_hh.T + b_hh
    r = torch.sigmoid(gi[:, :H] + gh[:, :H])
    z = torch.sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
    n = torch.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    h = (1.0 - z) * n + z * h_prev
    return h


def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    """Loop gru_cell over time."""
    h = h0
    outputs = []
    for t in range(x.shape[1]):
        h = gru_cell(x[:, t], h, W_ih, W_hh, b_ih, b_hh)
        outputs.append(h)
    log.debug("gru_forward done, T=%d", x.shape[1])
    return torch.stack(outputs, dim=1), h
