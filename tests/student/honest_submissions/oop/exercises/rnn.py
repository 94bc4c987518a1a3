"""Elman RNN with small helper classes."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class RNNParams:
    W_xh: torch.Tensor
    W_hh: torch.Tensor
    b_h: torch.Tensor

    @classmethod
    def from_dict(cls, d):
        return cls(d["W_xh"], d["W_hh"], d["b_h"])

    @property
    def hidden_size(self):
        return self.W_hh.shape[0]

    def astuple(self):
        return self.W_xh, self.W_hh, self.b_h


class _Grads:
    """Accumulator for the gradients of the five parameters (new tensors only)."""

    KEYS = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")

    def __init__(self, params):
        self._g = {k: torch.zeros_like(params[k]) for k in self.KEYS}

    def add(self, key, value):
        self._g[key] = self._g[key] + value

    def __getitem__(self, key):
        return self._g[key]

    def as_dict(self, **extra):
        out = dict(self._g)
        out.update(extra)
        return out


def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    return torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h)


def rnn_forward(x, h0, W_xh, W_hh, b_h):
    hs = []
    h = h0
    for t in range(x.shape[1]):
        h = rnn_cell(x[:, t], h, W_xh, W_hh, b_h)
        hs.append(h)
    return torch.stack(hs, dim=1)


def softmax_cross_entropy(logits, targets):
    m = logits.max(dim=-1, keepdim=True).values
    lse = m.squeeze(-1) + torch.log(torch.exp(logits - m).sum(dim=-1))
    picked = torch.gather(logits, 1, targets.unsqueeze(1)).squeeze(1)
    return (lse - picked).mean()


def rnn_bptt(x, targets, h0, params):
    p = RNNParams.from_dict(params)
    W_hy, b_y = params["W_hy"], params["b_y"]
    B, T, _ = x.shape
    hs = rnn_forward(x, h0, *p.astuple())
    o = hs @ W_hy.T + b_y
    C = o.shape[-1]
    loss = softmax_cross_entropy(o.reshape(-1, C), targets.reshape(-1)) * T
    dO = (torch.softmax(o, dim=-1) - F.one_hot(targets, num_classes=C).to(o.dtype)) / B
    g = _Grads(params)
    da_next = torch.zeros_like(h0)
    for t in reversed(range(T)):
        h_t, h_prev = hs[:, t], (hs[:, t - 1] if t else h0)
        g.add("W_hy", dO[:, t].T @ h_t)
        g.add("b_y", dO[:, t].sum(0))
        da = (dO[:, t] @ W_hy + da_next @ p.W_hh) * (1 - h_t.pow(2))
        g.add("W_hh", da.T @ h_prev)
        g.add("W_xh", da.T @ x[:, t])
        g.add("b_h", da.sum(0))
        da_next = da
    return loss, g.as_dict(h0=da_next @ p.W_hh)


class _ChunkIterator:
    """Yields (start, end) of consecutive chunks."""

    def __init__(self, T, chunk):
        self.T, self.chunk = T, chunk

    def __iter__(self):
        for s in range(0, self.T, self.chunk):
            yield s, min(s + self.chunk, self.T)

    def __len__(self):
        return -(-self.T // self.chunk)


def truncated_bptt(x, targets, h0, params, chunk):
    p = RNNParams.from_dict(params)
    acc = _Grads(params)
    h, loss, grad_h0 = h0, 0.0, None
    for s, e in _ChunkIterator(x.shape[1], chunk):
        l, g = rnn_bptt(x[:, s:e], targets[:, s:e], h, params)
        loss = loss + l
        for k in _Grads.KEYS:
            acc.add(k, g[k])
        if grad_h0 is None:
            grad_h0 = g["h0"]
        h = rnn_forward(x[:, s:e], h, *p.astuple())[:, -1]
    return loss, acc.as_dict(h0=grad_h0), h


def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    f = RNNParams.from_dict(params_fwd)
    b = RNNParams.from_dict(params_bwd)
    hf = rnn_forward(x, h0_fwd, *f.astuple())
    hb = rnn_forward(torch.flip(x, [1]), h0_bwd, *b.astuple()).flip([1])
    return torch.cat((hf, hb), dim=-1)


class _GreedyDecoder:
    def __init__(self, params, embedding):
        self._cell = RNNParams.from_dict(params)
        self._W_hy, self._b_y = params["W_hy"], params["b_y"]
        self._E = embedding

    def step(self, token, h):
        h = rnn_cell(self._E[token], h, *self._cell.astuple())
        return torch.argmax(h @ self._W_hy.T + self._b_y, dim=-1), h

    def __call__(self, h0, start_token, steps):
        tokens, tok, h = [], start_token, h0
        for _ in range(steps):
            tok, h = self.step(tok, h)
            tokens.append(tok)
        if not tokens:
            return torch.empty(h0.shape[0], 0, dtype=torch.int64, device=h0.device)
        return torch.stack(tokens, dim=1)


def greedy_decode(params, embedding, h0, start_token, steps):
    return _GreedyDecoder(params, embedding)(h0, start_token, steps)


# --- the lab: a character-level language model ------------------------------------------------


class _CharStreams:
    """The token stream cut into ``batch_size`` contiguous rows, read one window per step."""

    def __init__(self, tokens, batch_size, seq_len, device):
        L = tokens.shape[0] // batch_size
        self._rows = tokens[: batch_size * L].reshape(batch_size, L).to(device)
        self._len = seq_len
        self.n_windows = (L - 1) // seq_len

    def __len__(self):
        return self.n_windows

    def window(self, step):
        """(w, inputs, targets) of the window step ``step`` reads; targets are shifted by one."""
        w = step % self.n_windows
        chunk = self._rows[:, w * self._len:(w + 1) * self._len + 1]
        return w, chunk[:, :-1], chunk[:, 1:]


def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import AdamGroup, clip_grad_norm

    V, H = params["W_hy"].shape
    dtype, device = params["W_xh"].dtype, params["W_xh"].device
    streams = _CharStreams(tokens, batch_size, seq_len, device)
    opt = AdamGroup(_Grads.KEYS, lr)
    theta = {k: params[k].clone() for k in _Grads.KEYS}
    h, losses = None, []
    for s in range(steps):
        w, inputs, targets = streams.window(s)
        if w == 0:
            h = torch.zeros(batch_size, H, dtype=dtype, device=device)
        x = F.one_hot(inputs, num_classes=V).to(dtype)
        loss, grads, h = truncated_bptt(x, targets, h, theta, seq_len)
        clipped, _ = clip_grad_norm([grads[k] for k in _Grads.KEYS], clip)
        theta = {**theta, **opt.step(theta, dict(zip(_Grads.KEYS, clipped)))}
        losses.append(loss / seq_len)
    if not losses:
        return theta, torch.zeros(0, dtype=dtype, device=device)
    return theta, torch.stack(losses).to(dtype)


class _Sampler:
    def __init__(self, params, temperature, generator):
        self._cell = RNNParams.from_dict(params)
        self._W_hy, self._b_y = params["W_hy"], params["b_y"]
        self._tau, self._gen = temperature, generator

    @property
    def vocab_size(self):
        return self._W_hy.shape[0]

    def step(self, token, h):
        x = F.one_hot(token, num_classes=self.vocab_size).to(h.dtype)
        h = rnn_cell(x, h, *self._cell.astuple())
        p = torch.softmax((h @ self._W_hy.T + self._b_y) / self._tau, dim=-1)
        return torch.multinomial(p, 1, generator=self._gen)[:, 0], h

    def __call__(self, start_token, steps):
        W_hh = self._cell.W_hh
        tok = start_token.to(W_hh.device)
        h = torch.zeros(tok.shape[0], self._cell.hidden_size, dtype=W_hh.dtype, device=W_hh.device)
        tokens = []
        for _ in range(steps):
            tok, h = self.step(tok, h)
            tokens.append(tok)
        if not tokens:
            return torch.empty(tok.shape[0], 0, dtype=torch.int64, device=tok.device)
        return torch.stack(tokens, dim=1)


def sample_chars(params, start_token, steps, temperature=1.0, generator=None):
    return _Sampler(params, temperature, generator)(start_token, steps)
