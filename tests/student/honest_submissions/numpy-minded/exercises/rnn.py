"""Vanilla RNN like the numpy min-char-rnn, but batched and in torch.

Shapes: x (B, T, D), h (B, H), logits (B, T, C). Weights (out, in), applied as x @ W.T.
"""

from __future__ import annotations

import numpy as np
import torch

PARAM_NAMES = ["W_xh", "W_hh", "b_h", "W_hy", "b_y"]


def softmax_rows(z):
    """Shared with other modules: row-wise softmax, max-shifted like in numpy."""
    z = z - z.max(dim=-1, keepdim=True).values
    e = torch.exp(z)
    return e / e.sum(dim=-1, keepdim=True)


def sigmoid(z):
    """1 / (1 + exp(-z)), written out (used by lstm_gru too)."""
    return 1.0 / (1.0 + torch.exp(-z))


def linear(x, W, b=None):
    """x @ W.T + b, the numpy way."""
    out = torch.matmul(x, W.T)
    return out if b is None else out + b


def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    return torch.tanh(linear(x, W_xh) + linear(h_prev, W_hh) + b_h)


def rnn_forward(x, h0, W_xh, W_hh, b_h):
    B, T, D = x.shape
    H = h0.shape[1]
    hs = torch.zeros((B, T, H), dtype=torch.result_type(x, h0), device=x.device)
    h = h0
    for t in range(T):
        h = rnn_cell(x[:, t, :], h, W_xh, W_hh, b_h)
        hs[:, t, :] = h
    return hs


def softmax_cross_entropy(logits, targets):
    N, C = logits.shape
    shifted = logits - logits.max(dim=1, keepdim=True).values
    log_z = torch.log(torch.sum(torch.exp(shifted), dim=1))  # (N,)
    correct = shifted[torch.arange(N, device=logits.device), targets]  # (N,)
    return torch.sum(log_z - correct) / N


def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h, W_hy, b_y = [params[k] for k in PARAM_NAMES]
    B, T, D = x.shape
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)  # (B, T, H)
    ys = linear(hs, W_hy, b_y)  # (B, T, C)
    C = ys.shape[2]
    loss = softmax_cross_entropy(ys.reshape(B * T, C), targets.reshape(B * T)) * T

    dW_xh = torch.zeros_like(W_xh)
    dW_hh = torch.zeros_like(W_hh)
    db_h = torch.zeros_like(b_h)
    dW_hy = torch.zeros_like(W_hy)
    db_y = torch.zeros_like(b_y)
    dh_next = torch.zeros_like(h0)
    rows = torch.arange(B, device=x.device)
    for t in reversed(range(T)):
        dy = softmax_rows(ys[:, t, :])  # (B, C)
        dy[rows, targets[:, t]] -= 1.0  # dy is a fresh tensor from softmax_rows
        dy = dy / B
        h_t = hs[:, t, :]
        h_prev = hs[:, t - 1, :] if t > 0 else h0
        dW_hy = dW_hy + dy.T @ h_t
        db_y = db_y + dy.sum(axis=0)
        dh = dy @ W_hy + dh_next  # (B, H)
        draw = (1 - h_t * h_t) * dh  # backprop through tanh
        db_h = db_h + draw.sum(axis=0)
        dW_xh = dW_xh + draw.T @ x[:, t, :]
        dW_hh = dW_hh + draw.T @ h_prev
        dh_next = draw @ W_hh
    grads = {"W_xh": dW_xh, "W_hh": dW_hh, "b_h": db_h, "W_hy": dW_hy, "b_y": db_y, "h0": dh_next}
    return loss, grads


def truncated_bptt(x, targets, h0, params, chunk):
    B, T, D = x.shape
    n_chunks = int(np.ceil(T / chunk))
    total_loss = 0.0
    grads = {k: torch.zeros_like(params[k]) for k in PARAM_NAMES}
    grads["h0"] = None
    h = h0
    for c in range(n_chunks):
        s, e = c * chunk, min((c + 1) * chunk, T)
        loss_c, g = rnn_bptt(x[:, s:e], targets[:, s:e], h, params)
        total_loss = total_loss + loss_c
        for k in PARAM_NAMES:
            grads[k] = grads[k] + g[k]
        if c == 0:
            grads["h0"] = g["h0"]
        h = rnn_forward(x[:, s:e], h, params["W_xh"], params["W_hh"], params["b_h"])[:, -1, :]
    return total_loss, grads, h


def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    B, T, D = x.shape
    f = rnn_forward(x, h0_fwd, params_fwd["W_xh"], params_fwd["W_hh"], params_fwd["b_h"])
    rev = torch.arange(T - 1, -1, -1, device=x.device)  # like x[:, ::-1] in numpy
    b = rnn_forward(x[:, rev], h0_bwd, params_bwd["W_xh"], params_bwd["W_hh"], params_bwd["b_h"])[:, rev]
    return torch.cat([f, b], dim=2)


def greedy_decode(params, embedding, h0, start_token, steps):
    B = h0.shape[0]
    out = torch.zeros((B, steps), dtype=torch.int64, device=h0.device)
    h, ix = h0, start_token
    for s in range(steps):
        h = rnn_cell(embedding[ix], h, params["W_xh"], params["W_hh"], params["b_h"])
        ix = torch.argmax(linear(h, params["W_hy"], params["b_y"]), dim=1)
        out[:, s] = ix
    return out


def one_hot(ix, V, dtype):
    """np.eye(V)[ix]: each index becomes a row of the identity (used by lstm_gru too)."""
    return torch.eye(V, dtype=dtype, device=ix.device)[ix]


# --- the lab: a character-level language model, like min-char-rnn ----------------------------------


def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import adam, clip_grad_norm

    V, H = params["W_hy"].shape
    dtype, device = params["W_xh"].dtype, params["W_xh"].device
    L = tokens.shape[0] // batch_size
    data = tokens[: batch_size * L].reshape(batch_size, L).to(device)  # row b = stream b
    n_windows = (L - 1) // seq_len
    theta = {k: params[k].clone() for k in PARAM_NAMES}
    mem = {k: {} for k in PARAM_NAMES}  # one Adam state per parameter
    losses = torch.zeros(steps, dtype=dtype, device=device)
    h = torch.zeros((batch_size, H), dtype=dtype, device=device)
    for s in range(steps):
        w = s % n_windows
        if w == 0:
            h = torch.zeros((batch_size, H), dtype=dtype, device=device)  # the streams start again
        p = w * seq_len
        inputs = one_hot(data[:, p:p + seq_len], V, dtype)  # (B, S, V)
        targets = data[:, p + 1:p + seq_len + 1]  # (B, S), shifted by one
        loss, grads, h = truncated_bptt(inputs, targets, h, theta, seq_len)
        clipped, _ = clip_grad_norm([grads[k] for k in PARAM_NAMES], clip)
        for k, dk in zip(PARAM_NAMES, clipped):
            theta[k], mem[k] = adam(theta[k], dk, mem[k], lr=lr)
        losses[s] = loss / seq_len
    return theta, losses


def sample_chars(params, start_token, steps, temperature=1.0, generator=None):
    B = start_token.shape[0]
    V, H = params["W_hy"].shape
    dtype, device = params["W_hh"].dtype, params["W_hh"].device
    out = torch.zeros((B, steps), dtype=torch.int64, device=device)
    h = torch.zeros((B, H), dtype=dtype, device=device)
    ix = start_token.to(device)
    for s in range(steps):
        h = rnn_cell(one_hot(ix, V, dtype), h, params["W_xh"], params["W_hh"], params["b_h"])
        p = softmax_rows(linear(h, params["W_hy"], params["b_y"]) / temperature)  # (B, V)
        ix = torch.multinomial(p, 1, generator=generator)[:, 0]
        out[:, s] = ix
    return out


if __name__ == "__main__":
    import os

    torch.manual_seed(0)
    B, T, D, H, C = 2, 5, 3, 4, 6
    p = {"W_xh": torch.randn(H, D, dtype=torch.float64), "W_hh": torch.randn(H, H, dtype=torch.float64) * 0.5,
         "b_h": torch.randn(H, dtype=torch.float64), "W_hy": torch.randn(C, H, dtype=torch.float64),
         "b_y": torch.randn(C, dtype=torch.float64)}
    x = torch.randn(B, T, D, dtype=torch.float64)
    y = torch.randint(0, C, (B, T))
    h0 = torch.zeros(B, H, dtype=torch.float64)
    loss, g = rnn_bptt(x, y, h0, p)
    # numerical gradient check on one entry, as in cs231n
    eps = 1e-6
    pp = {k: v.clone() for k, v in p.items()}
    pp["W_hh"][0, 1] += eps
    lp, _ = rnn_bptt(x, y, h0, pp)
    pp["W_hh"][0, 1] -= 2 * eps
    lm, _ = rnn_bptt(x, y, h0, pp)
    print(os.path.basename(__file__), "grad check:", g["W_hh"][0, 1].item(), ((lp - lm) / (2 * eps)).item())
