"""LSTM and GRU, numpy style, reusing the helpers of rnn.py."""

from __future__ import annotations

import torch

try:
    from .rnn import linear, one_hot, rnn_forward, sigmoid
except ImportError:  # running this file directly: python exercises/lstm_gru.py
    from rnn import linear, one_hot, rnn_forward, sigmoid

CELL_PARAMS = {"rnn": ["W_xh", "W_hh", "b_h"], "lstm": ["W_ih", "W_hh", "b_ih", "b_hh"], "gru": ["W_ih", "W_hh", "b_ih", "b_hh"]}


def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    a = linear(x, W_ih, b_ih) + linear(h_prev, W_hh, b_hh)  # (B, 4H)
    i = sigmoid(a[:, 0:H])
    f = sigmoid(a[:, H:2 * H])
    g = torch.tanh(a[:, 2 * H:3 * H])
    o = sigmoid(a[:, 3 * H:4 * H])
    c = f * c_prev + i * g
    h = o * torch.tanh(c)
    return h, c


def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    B, T, D = x.shape
    H = h0.shape[1]
    hs = torch.zeros((B, T, H), dtype=torch.result_type(x, h0), device=x.device)
    h, c = h0, c0
    for t in range(T):
        h, c = lstm_cell(x[:, t, :], h, c, W_ih, W_hh, b_ih, b_hh)
        hs[:, t, :] = h
    return hs, (h, c)


def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    gx = linear(x, W_ih, b_ih)  # (B, 3H)
    gh = linear(h_prev, W_hh, b_hh)  # (B, 3H)
    r = sigmoid(gx[:, :H] + gh[:, :H])
    z = sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
    n = torch.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
    return (1 - z) * n + z * h_prev


def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    B, T, D = x.shape
    hs = torch.zeros((B, T, h0.shape[1]), dtype=torch.result_type(x, h0), device=x.device)
    h = h0
    for t in range(T):
        h = gru_cell(x[:, t, :], h, W_ih, W_hh, b_ih, b_hh)
        hs[:, t, :] = h
    return hs, h


# --- the lab: why gates ------------------------------------------------------------------------


def _last_hidden(kind, x, h0, params):
    """h_T (B, H) of the chosen cell run over x (B, T, D) from h0 (LSTM: c0 = 0)."""
    if kind not in CELL_PARAMS:
        raise ValueError(f"kind must be one of {sorted(CELL_PARAMS)}, not {kind!r}")
    W = [params[k] for k in CELL_PARAMS[kind]]
    if kind == "rnn":
        return rnn_forward(x, h0, *W)[:, -1, :]
    if kind == "lstm":
        _, (h_T, _) = lstm_forward(x, h0, torch.zeros_like(h0), *W)
        return h_T
    _, h_T = gru_forward(x, h0, *W)
    return h_T


def input_gradient_norms(kind, x, h0, params):
    x_var = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        h_T = _last_hidden(kind, x_var, h0, params)  # (B, H)
        (dx,) = torch.autograd.grad(h_T.sum(), x_var)  # (B, T, D)
    return torch.sqrt((dx ** 2).sum(dim=(0, 2)))  # (T,)


# --- the lab: delayed recall -------------------------------------------------------------------


def recall_batch(K, batch_size, lag, generator=None):
    M = K // 2
    first = torch.randint(M, (batch_size, 1), generator=generator)
    rest = torch.randint(M, K, (batch_size, lag), generator=generator)
    return torch.cat([first, rest], dim=1)


def recall_logits(kind, params, x):
    B = x.shape[0]
    H = params["W_hh"].shape[1]
    h0 = torch.zeros((B, H), dtype=params["W_hh"].dtype, device=x.device)
    return linear(_last_hidden(kind, x, h0, params), params["W_y"], params["b_y"])  # (B, K)


def train_recall(kind, params, steps, batch_size, lag, lr=1e-2, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    K = params["W_y"].shape[0]
    dtype, device = params["W_y"].dtype, params["W_y"].device
    names = CELL_PARAMS[kind] + ["W_y", "b_y"]  # what the model uses
    theta = {k: v.clone() for k, v in params.items()}
    mem = {k: {} for k in names}
    losses = torch.zeros(steps, dtype=dtype, device=device)
    for s in range(steps):
        tokens = recall_batch(K, batch_size, lag, generator).to(device)  # (B, lag + 1)
        x = one_hot(tokens, K, dtype)  # (B, lag + 1, K)
        leaves = {k: theta[k].detach().requires_grad_(True) for k in names}
        with torch.enable_grad():
            loss = softmax_cross_entropy(recall_logits(kind, {**theta, **leaves}, x), tokens[:, 0])
            grads = torch.autograd.grad(loss, [leaves[k] for k in names])
        for k, dk in zip(names, grads):
            theta[k], mem[k] = adam(theta[k], dk, mem[k], lr=lr)
        losses[s] = loss.detach()
    return theta, losses


if __name__ == "__main__":
    torch.manual_seed(1)
    D, H = 3, 4
    ref = torch.nn.GRUCell(D, H)
    x, h = torch.randn(2, D), torch.randn(2, H)
    with torch.no_grad():
        mine = gru_cell(x, h, ref.weight_ih, ref.weight_hh, ref.bias_ih, ref.bias_hh)
        print("gru_cell max err vs nn.GRUCell:", (mine - ref(x, h)).abs().max().item())
