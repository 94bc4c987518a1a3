"""RNN in a functional style: scans written as folds, generators for chunks."""

from __future__ import annotations

import itertools
from functools import partial, reduce

import torch
import torch.nn.functional as F

_KEYS = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")
_cell_params = lambda p: (p["W_xh"], p["W_hh"], p["b_h"])


def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    return torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h)


def _accumulate_states(step, h0, xs):
    """Like itertools.accumulate, but over tensors; returns every state after h0."""
    return list(itertools.accumulate(xs, step, initial=h0))[1:]


def rnn_forward(x, h0, W_xh, W_hh, b_h):
    step = lambda h, x_t: rnn_cell(x_t, h, W_xh, W_hh, b_h)
    return torch.stack(_accumulate_states(step, h0, x.unbind(1)), dim=1)


def softmax_cross_entropy(logits, targets):
    m = logits.amax(-1, keepdim=True)
    lse = m.squeeze(-1) + (logits - m).exp().sum(-1).log()
    return (lse - logits[torch.arange(len(targets), device=logits.device), targets]).mean()


def _add_dicts(d1, d2):
    return {k: d1[k] + d2[k] for k in d1}


def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h, W_hy, b_y = map(params.__getitem__, _KEYS)
    B, T, _ = x.shape
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    o = hs @ W_hy.T + b_y
    C = o.shape[-1]
    loss = softmax_cross_entropy(o.flatten(0, 1), targets.flatten()) * T
    dO = (o.softmax(-1) - F.one_hot(targets, C).to(o.dtype)) / B
    h_prev = torch.cat([h0[:, None], hs[:, :-1]], 1)

    def back(carry, t):
        da_next, _ = carry
        da = (dO[:, t] @ W_hy + da_next @ W_hh) * (1 - hs[:, t] ** 2)
        return da, da

    das = list(itertools.accumulate(reversed(range(T)), back, initial=(torch.zeros_like(h0), None)))[1:]
    dA = torch.stack([d for _, d in reversed(das)], 1)
    da1 = das[-1][0]
    outer = lambda g, v: torch.einsum("bti,btj->ij", g, v)
    grads = {"W_xh": outer(dA, x), "W_hh": outer(dA, h_prev), "b_h": dA.sum((0, 1)),
             "W_hy": outer(dO, hs), "b_y": dO.sum((0, 1)), "h0": da1 @ W_hh}
    return loss, grads


def _chunks(T, chunk):
    yield from ((s, min(s + chunk, T)) for s in range(0, T, chunk))


def truncated_bptt(x, targets, h0, params, chunk):
    def fold(acc, span):
        loss, grads, h = acc
        s, e = span
        l, g = rnn_bptt(x[:, s:e], targets[:, s:e], h, params)
        h_next = rnn_forward(x[:, s:e], h, *_cell_params(params))[:, -1]
        if grads is None:
            return l, dict(g), h_next
        merged = {k: (grads[k] if k == "h0" else grads[k] + g[k]) for k in grads}
        return loss + l, merged, h_next

    return reduce(fold, _chunks(x.shape[1], chunk), (None, None, h0))


def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    rev = partial(torch.flip, dims=(1,))
    fwd = rnn_forward(x, h0_fwd, *_cell_params(params_fwd))
    bwd = rev(rnn_forward(rev(x), h0_bwd, *_cell_params(params_bwd)))
    return torch.cat((fwd, bwd), -1)


def _generate(params, embedding, h, tok):
    while True:
        h = rnn_cell(embedding[tok], h, *_cell_params(params))
        tok = (h @ params["W_hy"].T + params["b_y"]).argmax(-1)
        yield tok


def greedy_decode(params, embedding, h0, start_token, steps):
    toks = list(itertools.islice(_generate(params, embedding, h0, start_token), steps))
    return torch.stack(toks, 1) if toks else start_token.new_zeros((h0.shape[0], 0))


# --- the lab: a character-level language model ------------------------------------------------


def _streams(tokens, batch_size):
    """tokens (N,) -> (batch_size, L) contiguous streams, L = N // batch_size."""
    L = tokens.shape[0] // batch_size
    return tokens[: batch_size * L].reshape(batch_size, L)


def _adam_all(adam, lr, theta, grads, states):
    """One adam step per key, each with its own state: new (theta, states)."""
    stepped = {k: adam(theta[k], grads[k], states[k], lr=lr) for k in theta}
    return {k: w for k, (w, _) in stepped.items()}, {k: s for k, (_, s) in stepped.items()}


def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import adam, clip_grad_norm

    V, H = params["W_hy"].shape
    dtype, device = params["W_xh"].dtype, params["W_xh"].device
    streams = _streams(tokens.to(device), batch_size)
    n_windows = (streams.shape[1] - 1) // seq_len
    zeros = partial(torch.zeros, batch_size, H, dtype=dtype, device=device)

    def step(carry, s):
        theta, states, h, losses = carry
        w = s % n_windows
        window = streams[:, w * seq_len:(w + 1) * seq_len + 1]  # inputs and targets, one longer
        h = zeros() if w == 0 else h
        x = F.one_hot(window[:, :-1], V).to(dtype)
        loss, grads, h_last = truncated_bptt(x, window[:, 1:], h, theta, seq_len)
        clipped, _ = clip_grad_norm([grads[k] for k in _KEYS], clip)
        theta, states = _adam_all(adam, lr, theta, dict(zip(_KEYS, clipped)), states)
        return theta, states, h_last, losses + (loss / seq_len,)

    init = ({k: params[k].clone() for k in _KEYS}, {k: {} for k in _KEYS}, zeros(), ())
    theta, _, _, losses = reduce(step, range(steps), init)
    losses = torch.stack(losses).to(dtype) if losses else torch.zeros(0, dtype=dtype, device=device)
    return theta, losses


def _samples(params, h, tok, temperature, generator):
    """An endless stream of sampled tokens (B,), the state carried inside the generator."""
    V = params["W_hy"].shape[0]
    while True:
        h = rnn_cell(F.one_hot(tok, V).to(h.dtype), h, *_cell_params(params))
        p = ((h @ params["W_hy"].T + params["b_y"]) / temperature).softmax(-1)
        tok = torch.multinomial(p, 1, generator=generator)[:, 0]
        yield tok


def sample_chars(params, start_token, steps, temperature=1.0, generator=None):
    W_hh = params["W_hh"]
    h0 = torch.zeros(start_token.shape[0], W_hh.shape[0], dtype=W_hh.dtype, device=W_hh.device)
    toks = list(itertools.islice(_samples(params, h0, start_token.to(W_hh.device), temperature, generator), steps))
    return torch.stack(toks, 1) if toks else start_token.new_zeros((start_token.shape[0], 0))
