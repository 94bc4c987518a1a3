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


# --- the lab: a character-level language model, trained by hand --------------------------------

PARAM_KEYS = _PARAM_KEYS  # the order gradients are clipped and stepped in (the stub's name)


def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    """Truncated BPTT over contiguous streams, global-norm clipping, one Adam state per parameter.

    My reading of the protocol (curriculum "Labs"):
    - B streams of L = N // B tokens, W = (L - 1) // seq_len windows, step s uses window s % W
    - h starts at 0, carries over to the next window (computed BEFORE the update), reset when w == 0
    - losses[s] = loss / seq_len (nats per character), measured before the update
    """
    from .optimizers import adam, clip_grad_norm

    for key in PARAM_KEYS:
        assert key in params, f"train_char_rnn: params is missing {key!r}"
    assert tokens.dim() == 1, f"tokens should be (N,), got {tuple(tokens.shape)}"
    W_xh = params["W_xh"]
    dtype, device = W_xh.dtype, W_xh.device
    H, V = W_xh.shape
    assert params["W_hy"].shape == (V, H), f"W_hy should be (V, H) = {(V, H)}, got {tuple(params['W_hy'].shape)}"
    L = tokens.shape[0] // batch_size
    n_windows = (L - 1) // seq_len
    assert steps == 0 or n_windows >= 1, f"stream of {L} tokens per row is too short for seq_len={seq_len}"
    streams = tokens[: batch_size * L].reshape(batch_size, L).to(device)
    _debug(f"train_char_rnn: N={tokens.shape[0]} B={batch_size} L={L} windows={n_windows} V={V} H={H}")

    current = {k: params[k] for k in PARAM_KEYS}  # adam returns new tensors, so params is never touched
    adam_states = {k: {} for k in PARAM_KEYS}  # one state per parameter: m, v never shared
    h = torch.zeros(batch_size, H, dtype=dtype, device=device)
    losses = []
    t0 = time.perf_counter()
    for s in range(steps):
        w = s % n_windows
        if w == 0:
            h = torch.zeros(batch_size, H, dtype=dtype, device=device)  # the stream starts again
        window = streams[:, w * seq_len:(w + 1) * seq_len + 1]  # seq_len inputs + 1 for the last target
        x = F.one_hot(window[:, :-1], V).to(dtype)  # (B, S, V)
        targets = window[:, 1:]  # (B, S)
        assert x.shape == (batch_size, seq_len, V), f"window x has shape {tuple(x.shape)}"
        loss, grads, h = truncated_bptt(x, targets, h, current, seq_len)  # h: state after this window
        clipped, total_norm = clip_grad_norm([grads[k] for k in PARAM_KEYS], clip)
        for key, g in zip(PARAM_KEYS, clipped):
            current[key], adam_states[key] = adam(current[key], g, adam_states[key], lr=lr)
        losses.append(loss / seq_len)
        if s % 100 == 0:
            _debug(f"step {s}: window {w}, loss/char {float(loss) / seq_len:.4f}, grad norm {float(total_norm):.3f}")
    log.debug("train_char_rnn: %d steps in %.3fs", steps, time.perf_counter() - t0)
    if losses:
        losses_out = torch.stack(losses)
    else:
        losses_out = torch.zeros(0, dtype=dtype, device=device)
    assert losses_out.shape == (steps,), f"losses should be ({steps},), got {tuple(losses_out.shape)}"
    return {k: v.clone() for k, v in current.items()}, losses_out


def sample_chars(params, start_token, steps, temperature=1.0, generator=None):
    """Sample and feed back; the temperature divides the LOGITS (W8 §4), one multinomial per step."""
    assert steps >= 0, "steps must be >= 0"
    assert temperature > 0, f"temperature must be > 0, got {temperature}"
    assert start_token.dim() == 1, f"start_token should be (B,), got {tuple(start_token.shape)}"
    W_xh, W_hh, b_h = params["W_xh"], params["W_hh"], params["b_h"]
    V = W_xh.shape[1]
    B = start_token.shape[0]
    h = torch.zeros(B, W_hh.shape[0], dtype=W_xh.dtype, device=W_xh.device)  # h_0 = 0
    tokens = torch.empty(B, steps, dtype=torch.long, device=start_token.device)
    token = start_token
    for s in range(steps):
        x_s = F.one_hot(token, V).to(W_xh.dtype)  # one-hot input, D = V
        h = rnn_cell(x_s, h, W_xh, W_hh, b_h)
        logits = h @ params["W_hy"].T + params["b_y"]
        probs = torch.softmax(logits / temperature, dim=-1)
        token = torch.multinomial(probs, 1, generator=generator)[:, 0]
        tokens[:, s] = token
        _debug(f"sample step {s}: {token.tolist()}")
    return tokens
