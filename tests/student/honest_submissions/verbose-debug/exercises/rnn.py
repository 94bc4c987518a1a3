"""Vanilla RNN, BPTT by hand, BiRNN and greedy decoding (L5 §2-4, §10; L7 §一-§三)."""

from __future__ import annotations

import logging
import sys
import time

import torch
import torch.nn.functional as F

DEBUG = False
log = logging.getLogger(__name__)

_PARAM_KEYS = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")


def _debug(*args):
    if DEBUG:
        print("[rnn]", *args, file=sys.stderr)


def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    """h_t = tanh(x W_xh^T + h_{t-1} W_hh^T + b_h)."""
    assert x.dim() == 2, f"rnn_cell: x should be (B, D), got {tuple(x.shape)}"
    assert h_prev.shape[-1] == W_hh.shape[0], "rnn_cell: hidden size mismatch"
    pre_activation = x @ W_xh.T + h_prev @ W_hh.T + b_h
    return torch.tanh(pre_activation)


def rnn_forward(x, h0, W_xh, W_hh, b_h):
    """Unroll over time; returns hs (B, T, H) without h0."""
    assert x.dim() == 3, f"rnn_forward: x should be (B, T, D), got {tuple(x.shape)}"
    t0 = time.perf_counter()
    B, T, D = x.shape
    hidden_states = []
    h = h0
    for t in range(T):
        h = rnn_cell(x[:, t, :], h, W_xh, W_hh, b_h)
        hidden_states.append(h)
    hs = torch.stack(hidden_states, dim=1)
    _debug(f"rnn_forward: B={B} T={T} D={D} in {time.perf_counter() - t0:.4f}s")
    return hs


def softmax_cross_entropy(logits, targets):
    """Stable mean CE: log-sum-exp minus the target logit."""
    assert logits.dim() == 2, "softmax_cross_entropy: logits should be (N, C)"
    assert targets.dtype == torch.int64, f"targets should be int64, got {targets.dtype}"
    row_max = logits.max(dim=1, keepdim=True).values  # m, so exponents are <= 0
    shifted = logits - row_max
    log_sum_exp = torch.log(torch.exp(shifted).sum(dim=1))  # log sum exp(o - m)
    target_shifted = shifted[torch.arange(logits.shape[0], device=logits.device), targets]
    nll = log_sum_exp - target_shifted
    return nll.mean()


def rnn_bptt(x, targets, h0, params):
    """Full BPTT, written from L5 §3.2-3.5 (no autograd)."""
    for key in _PARAM_KEYS:
        assert key in params, f"rnn_bptt: params is missing {key!r}"
    W_xh, W_hh, b_h = params["W_xh"], params["W_hh"], params["b_h"]
    W_hy, b_y = params["W_hy"], params["b_y"]
    B, T, D = x.shape
    t_start = time.perf_counter()

    # ---- forward ----
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)  # (B, T, H)
    logits = hs @ W_hy.T + b_y  # (B, T, C)
    C = logits.shape[-1]
    # loss is summed over time and averaged over batch = mean over B*T times T
    loss = softmax_cross_entropy(logits.reshape(B * T, C), targets.reshape(B * T)) * T

    # ---- backward ----
    probs = torch.softmax(logits, dim=-1)
    onehot = torch.zeros_like(probs)
    onehot.scatter_(-1, targets.unsqueeze(-1), 1.0)  # onehot is my own new tensor
    dlogits = (probs - onehot) / B  # dL/do_t

    grads = {
        "W_xh": torch.zeros_like(W_xh),
        "W_hh": torch.zeros_like(W_hh),
        "b_h": torch.zeros_like(b_h),
        "W_hy": torch.zeros_like(W_hy),
        "b_y": torch.zeros_like(b_y),
    }
    da_next = torch.zeros_like(h0)  # dL/da_{T+1} = 0
    for t in range(T - 1, -1, -1):
        h_t = hs[:, t]
        h_prev = hs[:, t - 1] if t > 0 else h0
        do_t = dlogits[:, t]
        grads["W_hy"] = grads["W_hy"] + do_t.T @ h_t
        grads["b_y"] = grads["b_y"] + do_t.sum(dim=0)
        dh = do_t @ W_hy + da_next @ W_hh
        da = dh * (1.0 - h_t * h_t)  # tanh'
        grads["W_hh"] = grads["W_hh"] + da.T @ h_prev
        grads["W_xh"] = grads["W_xh"] + da.T @ x[:, t]
        grads["b_h"] = grads["b_h"] + da.sum(dim=0)
        da_next = da
    grads["h0"] = da_next @ W_hh
    _debug(f"rnn_bptt: loss={loss.item():.4f} in {time.perf_counter() - t_start:.4f}s")
    log.debug("rnn_bptt grad norms: %s", {k: round(float(v.norm()), 4) for k, v in grads.items()})
    return loss, grads


def truncated_bptt(x, targets, h0, params, chunk):
    """Truncated BPTT: state flows across the cuts, gradient does not (L7 §二.3)."""
    assert isinstance(chunk, int) and chunk >= 1, f"chunk must be a positive int, got {chunk!r}"
    T = x.shape[1]
    h = h0
    total_loss = None
    total_grads = None
    for start in range(0, T, chunk):
        end = min(start + chunk, T)
        loss_c, grads_c = rnn_bptt(x[:, start:end], targets[:, start:end], h, params)
        if total_grads is None:
            total_loss = loss_c
            total_grads = dict(grads_c)  # keeps "h0" from the first chunk only
        else:
            total_loss = total_loss + loss_c
            for key in _PARAM_KEYS:
                total_grads[key] = total_grads[key] + grads_c[key]
        # carry the state forward (treated as a constant by the next chunk)
        h = rnn_forward(x[:, start:end], h, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
        _debug(f"chunk [{start}, {end}) loss={loss_c.item():.4f}")
    return total_loss, total_grads, h


def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    """Two RNNs, one reading reversed time; outputs aligned by position."""
    hs_fwd = rnn_forward(x, h0_fwd, params_fwd["W_xh"], params_fwd["W_hh"], params_fwd["b_h"])
    x_rev = torch.flip(x, dims=[1])
    hs_bwd_rev = rnn_forward(x_rev, h0_bwd, params_bwd["W_xh"], params_bwd["W_hh"], params_bwd["b_h"])
    hs_bwd = torch.flip(hs_bwd_rev, dims=[1])  # realign: position t holds the state after reading x[t:]
    out = torch.cat([hs_fwd, hs_bwd], dim=-1)
    assert out.shape[-1] == 2 * h0_fwd.shape[-1], "birnn_forward: wrong output width"
    return out


def greedy_decode(params, embedding, h0, start_token, steps):
    """Feed the argmax back in (W8 §4)."""
    assert steps >= 0, "steps must be >= 0"
    B = h0.shape[0]
    tokens = torch.empty(B, steps, dtype=torch.long, device=h0.device)
    h = h0
    token = start_token
    for s in range(steps):
        x_s = embedding[token]  # embedding lookup = row indexing
        h = rnn_cell(x_s, h, params["W_xh"], params["W_hh"], params["b_h"])
        logits = h @ params["W_hy"].T + params["b_y"]
        token = torch.argmax(logits, dim=-1)  # ties -> lowest index
        tokens[:, s] = token
        _debug(f"step {s}: tokens {token.tolist()}")
    return tokens
