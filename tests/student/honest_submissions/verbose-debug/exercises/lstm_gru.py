"""LSTM and GRU cells with plain tensor ops (L5 §7-§9)."""

from __future__ import annotations

import logging
import sys
import time

import torch
import torch.nn.functional as F

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


# --- the lab: why gates --------------------------------------------------------------------------

_KINDS = ("rnn", "lstm", "gru")
_CELL_KEYS = {"rnn": ("W_xh", "W_hh", "b_h"), "lstm": ("W_ih", "W_hh", "b_ih", "b_hh"), "gru": ("W_ih", "W_hh", "b_ih", "b_hh")}


def _final_hidden(kind, x, h0, params):
    """h_T of my own rnn_forward / lstm_forward (c0 = 0) / gru_forward."""
    from .rnn import rnn_forward

    assert kind in _KINDS, f"kind must be one of {_KINDS}, got {kind!r}"
    for key in _CELL_KEYS[kind]:
        assert key in params, f"kind={kind!r} needs params[{key!r}]"
    assert x.dim() == 3, f"x should be (B, T, D), got {tuple(x.shape)}"
    assert h0.shape == (x.shape[0], params["W_hh"].shape[1]), f"h0 should be (B, H), got {tuple(h0.shape)}"
    if kind == "rnn":
        hs = rnn_forward(x, h0, params["W_xh"], params["W_hh"], params["b_h"])
        return hs[:, -1]
    if kind == "lstm":
        c0 = torch.zeros_like(h0)  # the cell state starts at zeros
        hs, (h_T, c_T) = lstm_forward(x, h0, c0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
        return h_T
    hs, h_T = gru_forward(x, h0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
    return h_T


def input_gradient_norms(kind, x, h0, params):
    """norms[t] = || d(sum h_T) / d x_t ||, over batch and features, with autograd (L5 §6)."""
    x_leaf = x.detach().clone().requires_grad_(True)  # my own leaf, x itself is untouched
    with torch.enable_grad():  # works even if the caller is in no_grad mode
        h_T = _final_hidden(kind, x_leaf, h0, params)
        (dx,) = torch.autograd.grad(h_T.sum(), [x_leaf])
    assert dx.shape == x.shape, f"gradient shape {tuple(dx.shape)} != x {tuple(x.shape)}"
    norms = torch.sqrt((dx * dx).sum(dim=(0, 2)))  # (T,)
    _debug(f"input_gradient_norms[{kind}]: first {float(norms[0]):.3e}, last {float(norms[-1]):.3e}")
    return norms


# --- the lab: delayed recall ---------------------------------------------------------------------


def recall_batch(K, batch_size, lag, generator=None):
    """Draw delayed-recall sequences (given with the exercise, copied unchanged)."""
    M = K // 2
    first = torch.randint(M, (batch_size, 1), generator=generator)
    rest = torch.randint(M, K, (batch_size, lag), generator=generator)
    return torch.cat([first, rest], dim=1)


def recall_logits(kind, params, x):
    """Run the cell from zero states, read out h_T (not h_1) with W_y, b_y."""
    B = x.shape[0]
    H = params["W_hh"].shape[1]  # (H, H), (4H, H) or (3H, H): the second axis is H for all three
    h0 = torch.zeros(B, H, dtype=x.dtype, device=x.device)
    h_T = _final_hidden(kind, x, h0, params)
    logits = h_T @ params["W_y"].T + params["b_y"]
    assert logits.shape == (B, params["W_y"].shape[0]), f"logits {tuple(logits.shape)}"
    return logits


def train_recall(kind, params, steps, batch_size, lag, lr=1e-2, generator=None):
    """Delayed recall: autograd through my forward, one adam state per parameter."""
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    K = params["W_y"].shape[0]
    dtype, device = params["W_y"].dtype, params["W_y"].device
    current = {k: v.detach().clone() for k, v in params.items()}  # never touch the caller's tensors
    adam_states = {k: {} for k in current}
    losses = []
    t0 = time.perf_counter()
    for s in range(steps):
        tokens = recall_batch(K, batch_size, lag, generator).to(device)
        assert tokens.shape == (batch_size, lag + 1), f"batch {tuple(tokens.shape)}"
        x = F.one_hot(tokens, K).to(dtype)  # (B, lag + 1, K)
        leaves = {k: v.detach().requires_grad_(True) for k, v in current.items()}
        names = list(leaves)
        with torch.enable_grad():
            logits = recall_logits(kind, leaves, x)
            loss = softmax_cross_entropy(logits, tokens[:, 0])  # the target is the first token
            grads = torch.autograd.grad(loss, [leaves[k] for k in names], allow_unused=True)
        for key, g in zip(names, grads):
            if g is None:  # a key the model does not use: a zero gradient leaves it where it is
                g = torch.zeros_like(current[key])
            current[key], adam_states[key] = adam(current[key], g, adam_states[key], lr=lr)
        losses.append(loss.detach())
        if s % 20 == 0:
            _debug(f"train_recall[{kind}] step {s}: loss {float(losses[-1]):.4f}")
    log.debug("train_recall: %d steps in %.3fs", steps, time.perf_counter() - t0)
    losses_out = torch.stack(losses) if losses else torch.zeros(0, dtype=dtype, device=device)
    return current, losses_out
