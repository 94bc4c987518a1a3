# Exercises: rnn. Fill in every `raise NotImplementedError()` below; keep the signatures.
# Public tests: test_rnn.py (run `pytest -k rnn`).
"""Vanilla (Elman) RNN: the cell, the unrolled forward pass, the many-to-many language-model
loss, backpropagation through time by hand (full and truncated), the bidirectional RNN and
greedy character-level generation.

Notes: L5 §2-4 and §10 (RNN, sequence NLL, the BPTT derivation, teacher forcing, BiRNN),
L7-8 (Lecture 7) §一-§三 (forward equations, BPTT, truncated BPTT, embedding lookup), W8 §3-4
(many-to-many, character-level LM). The lab at the end (``train_char_rnn``, ``sample_chars``)
puts them together: L5 §4 (the language model and sampling) and §6-8 (why training a plain RNN
needs truncation and clipping, which the gated cells of the next topic make less necessary).

Conventions that matter here:

- Batch-first: ``x (B, T, D)``, hidden states ``(B, T, H)``, logits ``(B, T, C)``.
- PyTorch's weight layout: ``W (out, in)`` is applied as ``x @ W.T``. Name map to L5:
  ``U = W_xh``, ``W = W_hh``, ``V = W_hy``, ``b = b_h``, ``c = b_y``.
- One hidden bias ``b_h``; PyTorch's RNN modules have two (``bias_ih + bias_hh = b_h``).
- The loss of ``rnn_bptt``/``truncated_bptt`` is summed over time and averaged over the batch.
- Functions call each other by name (``rnn_forward`` -> ``rnn_cell``, ``birnn_forward`` ->
  ``rnn_forward``, ``truncated_bptt`` -> ``rnn_bptt``, ...): the grader swaps in correct callees,
  so a bug is charged once. No autograd, no ``torch.nn`` modules.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import torch
import torch.nn.functional as F

Tensor = torch.Tensor
Params = Mapping[str, Tensor]

CELL_KEYS = ("W_xh", "W_hh", "b_h")


def _cell_weights(params: Params) -> tuple[Tensor, Tensor, Tensor]:
    """The three recurrent weights of an RNN params dict, in rnn_cell's argument order."""
    match params:
        case {"W_xh": W_xh, "W_hh": W_hh, "b_h": b_h}:
            return W_xh, W_hh, b_h
        case _:
            raise KeyError(f"an RNN params dict needs {CELL_KEYS}, got {sorted(params)}")


def _readout(h: Tensor, params: Params) -> Tensor:
    """The output layer o = h W_hy^T + b_y (any leading axes)."""
    return h @ params["W_hy"].T + params["b_y"]


def _stack_tokens(tokens: list[Tensor], like: Tensor) -> Tensor:
    """(B, steps) int64 from a list of (B,) tokens; steps=0 gives an empty (B, 0) tensor."""
    if tokens:
        return torch.stack(tokens, dim=1)
    return torch.empty((like.shape[0], 0), dtype=torch.long, device=like.device)


@dataclass(frozen=True)
class _StreamLayout:
    """How train_char_rnn reads its text: B parallel streams of L tokens, read in W windows of S."""

    batch_size: int
    stream_len: int
    seq_len: int

    @classmethod
    def of(cls, tokens: Tensor, batch_size: int, seq_len: int) -> _StreamLayout:
        return cls(batch_size=batch_size, stream_len=tokens.shape[0] // batch_size, seq_len=seq_len)

    @property
    def windows(self) -> int:
        if (count := (self.stream_len - 1) // self.seq_len) < 1:
            raise ValueError(f"streams of {self.stream_len} tokens hold no window of {self.seq_len} + 1")
        return count

    def streams(self, tokens: Tensor) -> Tensor:
        """(B, L): row b is tokens[b * L:(b + 1) * L]."""
        return tokens[: self.batch_size * self.stream_len].reshape(self.batch_size, self.stream_len)

    def window(self, streams: Tensor, w: int) -> tuple[Tensor, Tensor]:
        """Inputs and next-token targets of window w, both (B, S)."""
        start, stop = w * self.seq_len, (w + 1) * self.seq_len
        return streams[:, start:stop], streams[:, start + 1 : stop + 1]


# The labs import other topics' functions inside themselves, not here: a topic that fails to
# load then costs the lab that uses it, not every function of this module.


def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    r"""One step of the Elman RNN.

    .. math::
        h_t = \tanh(x_t W_{xh}^\top + h_{t-1} W_{hh}^\top + b_h)

    Args:
        x (Tensor): input :math:`x_t`, ``(B, D)`` float32/float64.
        h_prev (Tensor): previous hidden state :math:`h_{t-1}`, ``(B, H)``, same dtype.
        W_xh (Tensor): input-to-hidden weight, ``(H, D)``.
        W_hh (Tensor): hidden-to-hidden weight, ``(H, H)``.
        b_h (Tensor): hidden bias, ``(H,)``.

    Returns:
        Tensor: the new hidden state :math:`h_t`, ``(B, H)``.

    Notes: L5 §2.1, L7-8 (Lecture 7) §一.2 (the same parameters are shared by every time step).

    Agrees with ``nn.RNNCell(D, H, nonlinearity="tanh")`` with ``weight_ih = W_xh``,
    ``weight_hh = W_hh`` and ``bias_ih + bias_hh = b_h``.
    """
    return torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h)


def rnn_forward(x, h0, W_xh, W_hh, b_h):
    r"""Unroll the RNN over a sequence and return every hidden state.

    .. math::
        h_t = \tanh(x_t W_{xh}^\top + h_{t-1} W_{hh}^\top + b_h), \quad t = 1, \dots, T

    Args:
        x (Tensor): inputs, ``(B, T, D)`` float32/float64, batch-first.
        h0 (Tensor): initial hidden state :math:`h_0`, ``(B, H)``.
        W_xh (Tensor): ``(H, D)``.
        W_hh (Tensor): ``(H, H)``.
        b_h (Tensor): ``(H,)``.

    Returns:
        Tensor: ``hs (B, T, H)``, ``hs[:, t-1]`` is :math:`h_t` (so ``h0`` is not included and
        ``hs[:, -1]`` is the final state).

    Notes: L5 §3.1 (the unrolled graph), L7-8 (Lecture 7) §一.2. Calls ``rnn_cell`` at every
    step.

    Agrees with ``nn.RNN(D, H, batch_first=True)`` (its ``output``; ``h_n`` is ``hs[:, -1]``),
    given ``h0.unsqueeze(0)`` and ``bias_ih_l0 + bias_hh_l0 = b_h``.
    """
    step = lambda h, x_t: rnn_cell(x_t, h, W_xh, W_hh, b_h)
    _, *states = itertools.accumulate(x.unbind(dim=1), step, initial=h0)
    if not states:  # T = 0: no hidden state to return
        return x.new_empty((x.shape[0], 0, W_hh.shape[0]))
    return torch.stack(states, dim=1)


def softmax_cross_entropy(logits, targets):
    r"""Mean cross-entropy of a softmax classifier, computed stably with log-sum-exp.

    .. math::
        \mathrm{CE} = \frac{1}{N} \sum_{n=1}^{N} \Big( \log \sum_{c} e^{o_{n,c}} - o_{n,y_n} \Big),
        \qquad \log \sum_c e^{o_c} = m + \log \sum_c e^{o_c - m},\ m = \max_c o_c

    Subtracting the row maximum keeps every exponent :math:`\le 0`, so logits of magnitude
    1e4 neither overflow (``exp(1e4) = inf``) nor lose the target's log-probability.

    Args:
        logits (Tensor): unnormalised scores :math:`o`, ``(N, C)`` float32/float64.
        targets (Tensor): class indices :math:`y \in [0, C)`, ``(N,)`` int64.

    Returns:
        Tensor: the mean negative log-likelihood, a 0-dim tensor in the dtype of ``logits``.

    Notes: L5 §2.2 (sequence NLL), L5 §3.2 (softmax + cross-entropy).

    Agrees with ``F.cross_entropy(logits, targets)`` (``reduction="mean"``, no weights, no
    label smoothing), which it must not call (nor ``F.nll_loss``).
    """
    shifted = logits - logits.amax(dim=1, keepdim=True)  # every exponent <= 0
    log_norm = shifted.exp().sum(dim=1).log()
    picked = shifted.gather(1, targets.unsqueeze(1)).squeeze(1)
    return (log_norm - picked).mean()


def rnn_bptt(x, targets, h0, params):
    r"""Loss and gradients of the many-to-many RNN language model, by backpropagation through time.

    Forward (teacher forcing: ``x`` holds the true inputs at every step):

    .. math::
        h_t = \tanh(a_t),\ a_t = x_t W_{xh}^\top + h_{t-1} W_{hh}^\top + b_h, \qquad
        o_t = h_t W_{hy}^\top + b_y, \qquad
        L = \frac{1}{B} \sum_{b=1}^{B} \sum_{t=1}^{T} \mathrm{CE}(o_{b,t}, y_{b,t})

    Backward (L5 §3.2-3.5), with :math:`p_t = \mathrm{softmax}(o_t)`:

    .. math::
        \frac{\partial L}{\partial o_t} &= \tfrac{1}{B} (p_t - \mathrm{onehot}(y_t)) \\
        \frac{\partial L}{\partial h_t} &= \frac{\partial L}{\partial o_t} W_{hy}
            + \frac{\partial L}{\partial a_{t+1}} W_{hh}, \qquad
            \frac{\partial L}{\partial a_{T+1}} = 0 \\
        \frac{\partial L}{\partial a_t} &= \frac{\partial L}{\partial h_t} \odot (1 - h_t^2) \\
        \nabla W_{hy} &= \sum_t \Big(\frac{\partial L}{\partial o_t}\Big)^{\!\top} h_t, \quad
        \nabla b_y = \sum_t \frac{\partial L}{\partial o_t}, \quad
        \nabla W_{hh} = \sum_t \Big(\frac{\partial L}{\partial a_t}\Big)^{\!\top} h_{t-1}, \\
        \nabla W_{xh} &= \sum_t \Big(\frac{\partial L}{\partial a_t}\Big)^{\!\top} x_t, \quad
        \nabla b_h = \sum_t \frac{\partial L}{\partial a_t}, \quad
        \nabla h_0 = \frac{\partial L}{\partial a_1} W_{hh}

    (sums over :math:`t` also run over the batch).

    Args:
        x (Tensor): inputs, ``(B, T, D)`` float32/float64.
        targets (Tensor): next-token class indices, ``(B, T)`` int64, each in ``[0, C)``.
        h0 (Tensor): initial hidden state, ``(B, H)``.
        params (dict): ``W_xh (H, D)``, ``W_hh (H, H)``, ``b_h (H,)``, ``W_hy (C, H)``,
            ``b_y (C,)``.

    Returns:
        (loss, grads): ``loss`` a 0-dim tensor; ``grads`` a new dict with keys ``W_xh``,
        ``W_hh``, ``b_h``, ``W_hy``, ``b_y`` and ``h0``, each shaped like its parameter.

    The loss is summed over time and averaged over the batch, not averaged over all
    :math:`B \cdot T` positions. :func:`softmax_cross_entropy`, which you may call here, is a
    mean over every row it is given: on the ``B * T`` rows of all time steps at once it gives
    :math:`L / T`, so that mean is not yet the loss asked for. The gradients carry the same
    :math:`1/B` and no :math:`1/T` (:math:`\partial L / \partial o_t` above).

    Notes: L5 §3 (full derivation), L5 §4 (teacher forcing), L7-8 (Lecture 7) §二.1-2.
    No autograd (``backward``, ``torch.autograd``, ``torch.func``) anywhere.

    Agrees with autograd on the same forward pass: ``loss.backward()`` of
    ``F.cross_entropy(o.reshape(-1, C), y.reshape(-1), reduction="sum") / B``.
    """
    W_xh, W_hh, b_h = _cell_weights(params)
    batch, steps, _ = x.shape
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    logits = _readout(hs, params)
    classes = logits.shape[-1]
    # the mean over all B*T rows is L / T: scale it back to "summed over time, mean over batch"
    loss = softmax_cross_entropy(logits.reshape(-1, classes), targets.reshape(-1)) * steps

    d_logits = (torch.softmax(logits, dim=-1) - F.one_hot(targets, classes).to(logits.dtype)) / batch
    d_from_output = d_logits @ params["W_hy"]  # (B, T, H)
    d_pre_reversed = []
    d_pre_next = torch.zeros_like(d_from_output[:, 0])  # dL/da_{T+1} = 0
    for d_out_t, h_t in zip(reversed(d_from_output.unbind(1)), reversed(hs.unbind(1)), strict=True):
        d_pre_next = (d_out_t + d_pre_next @ W_hh) * (1 - h_t * h_t)
        d_pre_reversed.append(d_pre_next)
    d_pre = torch.stack(d_pre_reversed[::-1], dim=1)  # (B, T, H), dL/da_t
    h_prev = torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1)

    grads = {
        "W_xh": torch.einsum("bth,btd->hd", d_pre, x),
        "W_hh": torch.einsum("bth,btk->hk", d_pre, h_prev),
        "b_h": d_pre.sum(dim=(0, 1)),
        "W_hy": torch.einsum("btc,bth->ch", d_logits, hs),
        "b_y": d_logits.sum(dim=(0, 1)),
        "h0": d_pre[:, 0] @ W_hh,
    }
    return loss, grads


def truncated_bptt(x, targets, h0, params, chunk):
    r"""The loss of ``rnn_bptt`` with gradients from truncated BPTT.

    Time is cut into consecutive chunks of ``chunk`` steps (the last may be shorter). The hidden
    state flows across a cut (chunk :math:`k` starts from the last state of chunk :math:`k-1`),
    the gradient does not: it is as if :math:`h` were detached at every cut. Per chunk
    :math:`c` covering steps :math:`s \le t < e`,

    .. math::
        L_c = \frac{1}{B} \sum_b \sum_{t=s}^{e-1} \mathrm{CE}(o_{b,t}, y_{b,t}), \qquad
        L = \sum_c L_c, \qquad
        \mathrm{grads} = \sum_c \nabla_\theta L_c \big|_{h_{s-1}\ \text{fixed}}

    and ``grads["h0"]`` is the gradient of the first chunk's loss only (later chunks start from
    a detached state). With ``chunk >= T`` this is exactly ``rnn_bptt``.

    Args:
        x (Tensor): inputs, ``(B, T, D)`` float32/float64.
        targets (Tensor): ``(B, T)`` int64.
        h0 (Tensor): initial hidden state, ``(B, H)``.
        params (dict): ``W_xh (H, D)``, ``W_hh (H, H)``, ``b_h (H,)``, ``W_hy (C, H)``,
            ``b_y (C,)``.
        chunk (int): steps per chunk, ``>= 1``.

    Returns:
        (loss, grads, h_last): ``loss`` 0-dim (the full loss, the same value as ``rnn_bptt``);
        ``grads`` a new dict with the keys of ``rnn_bptt``; ``h_last (B, H)`` the hidden state
        after the last step (what the next call would start from).

    Notes: L7-8 (Lecture 7) §二.3 (truncated BPTT: the forward pass carries :math:`h` across
    chunks, the backward pass stays inside a chunk). Calls ``rnn_forward`` and ``rnn_bptt``.
    No autograd.

    Agrees with autograd where the state is detached at each cut:
    ``h = h.detach()`` between chunks, ``loss_c.backward()`` per chunk, gradients accumulated.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    W_xh, W_hh, b_h = _cell_weights(params)
    steps = x.shape[1]
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)  # the state flows across every cut
    starts = range(0, steps, chunk)
    h_starts = [h0, *(hs[:, start - 1] for start in starts[1:])]
    results = [
        rnn_bptt(x[:, start : start + chunk], targets[:, start : start + chunk], h_start, params)
        for start, h_start in zip(starts, h_starts, strict=True)
    ]
    losses, chunk_grads = zip(*results, strict=True)
    grads = {key: sum(g[key] for g in chunk_grads) for key in PARAM_KEYS}
    grads["h0"] = chunk_grads[0]["h0"]  # later chunks start from a detached state
    return sum(losses), grads, hs[:, -1]


def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    r"""Bidirectional RNN: one RNN reads left to right, another right to left.

    .. math::
        \overrightarrow{h}_t = \tanh(x_t \overrightarrow{W}_{xh}^\top
            + \overrightarrow{h}_{t-1} \overrightarrow{W}_{hh}^\top + \overrightarrow{b}_h), \quad
        \overleftarrow{h}_t = \tanh(x_t \overleftarrow{W}_{xh}^\top
            + \overleftarrow{h}_{t+1} \overleftarrow{W}_{hh}^\top + \overleftarrow{b}_h), \quad
        h_t = [\overrightarrow{h}_t ; \overleftarrow{h}_t]

    with :math:`\overrightarrow{h}_0 =` ``h0_fwd`` and :math:`\overleftarrow{h}_{T+1} =`
    ``h0_bwd``. Position-aligned: ``hs[:, t]`` holds both directions' states *at* position ``t``
    (the backward one has read ``x[:, t:]``).

    Args:
        x (Tensor): inputs, ``(B, T, D)`` float32/float64.
        h0_fwd (Tensor): initial state of the forward RNN, ``(B, H)``.
        h0_bwd (Tensor): initial state of the backward RNN, ``(B, H)``.
        params_fwd (dict): ``W_xh (H, D)``, ``W_hh (H, H)``, ``b_h (H,)`` of the forward RNN.
        params_bwd (dict): the same keys for the backward RNN.

    Returns:
        Tensor: ``hs (B, T, 2H)``, ``[forward, backward]`` concatenated on the last axis.

    Notes: L5 §10 (BiRNN: for tagging and encoding, not for online generation). Calls
    ``rnn_forward`` for both directions.

    Agrees with ``nn.RNN(D, H, bidirectional=True, batch_first=True)`` given
    ``h0 = stack([h0_fwd, h0_bwd])`` (the ``_l0`` weights forward, ``_l0_reverse`` backward).
    """
    forward = rnn_forward(x, h0_fwd, *_cell_weights(params_fwd))
    backward = rnn_forward(x.flip(1), h0_bwd, *_cell_weights(params_bwd)).flip(1)
    return torch.cat([forward, backward], dim=-1)


def greedy_decode(params, embedding, h0, start_token, steps):
    r"""Greedy character-level generation: feed the most likely token back as the next input.

    .. math::
        x_s = E[y_{s-1}], \quad h_s = \tanh(x_s W_{xh}^\top + h_{s-1} W_{hh}^\top + b_h), \quad
        y_s = \arg\max_c \, (h_s W_{hy}^\top + b_y)_c, \qquad s = 1, \dots, \mathrm{steps}

    with :math:`y_0 =` ``start_token``. Ties go to the lowest index (``torch.argmax``).
    Test-time counterpart of teacher forcing: the model now sees its own outputs.

    Args:
        params (dict): ``W_xh (H, D)``, ``W_hh (H, H)``, ``b_h (H,)``, ``W_hy (V, H)``,
            ``b_y (V,)``.
        embedding (Tensor): the lookup table :math:`E`, ``(V, D)`` float32/float64.
        h0 (Tensor): initial hidden state, ``(B, H)``.
        start_token (Tensor): the first input token of every sequence, ``(B,)`` int64.
        steps (int): how many tokens to generate, ``>= 0``.

    Returns:
        Tensor: ``tokens (B, steps)`` int64, the generated tokens without the start token.
        ``steps=0`` gives an empty ``(B, 0)`` int64 tensor (``torch.stack`` of an empty list
        raises instead, so that case needs its own answer).

    Notes: W8 §4 (character-level LM: sample and feed back; greedy is the argmax variant),
    L5 §4 (teacher forcing vs generation, exposure bias), L7-8 (Lecture 7) §三 (embedding as a
    lookup). Calls ``rnn_cell`` at every step.

    Agrees with a loop over ``nn.RNNCell`` + ``nn.Linear`` + ``torch.argmax`` with the same
    weights.
    """
    W_xh, W_hh, b_h = _cell_weights(params)
    token, h, generated = start_token, h0, []
    for _ in range(steps):
        h = rnn_cell(embedding[token], h, W_xh, W_hh, b_h)
        token = _readout(h, params).argmax(dim=-1)
        generated.append(token)
    return _stack_tokens(generated, start_token)


# --- the lab: a character-level language model, trained by hand --------------------------------

PARAM_KEYS = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")  # the order gradients are clipped and stepped in


def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    r"""Train the RNN language model on a token stream with truncated BPTT, clipping and Adam.

    The stream is cut into ``batch_size`` contiguous streams of :math:`L = \lfloor N / B
    \rfloor` tokens, ``stream[b] = tokens[b * L:(b + 1) * L]``, read in :math:`W = \lfloor (L -
    1) / \mathrm{seq\_len} \rfloor` windows. Step :math:`s` uses window :math:`w = s \bmod W`:

    .. math::
        x = \mathrm{onehot}(\mathrm{stream}[:, w S:(w + 1) S]), \quad
        y = \mathrm{stream}[:, w S + 1:(w + 1) S + 1], \quad S = \mathrm{seq\_len}

    and

    .. math::
        (L_s, g, h) = \mathrm{truncated\_bptt}(x, y, h, \theta, S), \quad
        g \leftarrow \mathrm{clip}(g, \mathrm{clip}), \quad
        \theta_k \leftarrow \mathrm{adam}(\theta_k, g_k, \mathrm{state}_k), \quad
        \mathrm{losses}[s] = L_s / S

    The hidden state starts at zeros, is carried from one window to the next (``h_last`` of
    the previous step, computed with the parameters *before* that step's update: the stream
    continues where the last window stopped) and is reset to zeros when :math:`w = 0` (the
    stream starts again). The gradient never flows across windows: that is what makes the
    training truncated, and it is why only the state, not the graph, is carried.

    The five gradients are clipped *together* (one global norm, ``clip_grad_norm``), before the
    update; each parameter then takes one Adam step with *its own* state (``lr``, default betas
    and eps), so ``m`` and ``v`` are never shared between parameters of different shapes.

    Args:
        tokens (Tensor): ``(N,)`` int64 in ``[0, V)``, the training text as token ids.
        params (dict): the RNN dict ``W_xh (H, V)``, ``W_hh (H, H)``, ``b_h (H,)``,
            ``W_hy (V, H)``, ``b_y (V,)`` (``D = C = V``: inputs are one-hot), float32/float64.
        steps (int): number of updates, ``>= 0``.
        batch_size (int): number of parallel streams ``B``.
        seq_len (int): window length ``S`` (also the truncation length).
        lr (float): Adam's learning rate.
        clip (float): the global gradient-norm bound.

    Returns:
        (params_out, losses): a new dict with the five keys (the trained parameters) and
        ``losses (steps,)``, each step's training loss in nats per character, measured before
        that step's update, in the dtype of ``params``.

    Notes: L5 §4 (the character-level language model, trained with teacher forcing), L5 §6
    (exploding and vanishing gradients: why clip, why truncate), L7-8 (Lecture 7) §二.3
    (truncated BPTT: the state flows on, the gradient stops). Calls ``truncated_bptt``,
    ``clip_grad_norm`` and ``adam``. No autograd.

    Agrees with the same loop written with ``torch.optim.Adam``, autograd on a detached state
    per window and ``torch.nn.utils.clip_grad_norm_`` over the five parameters.
    """
    from .optimizers import adam, clip_grad_norm

    layout = _StreamLayout.of(tokens, batch_size, seq_len)
    W_xh, *_ = _cell_weights(params)
    (hidden, vocab), dtype, device = W_xh.shape, W_xh.dtype, W_xh.device
    streams = layout.streams(tokens).to(device)

    current = {key: params[key].clone() for key in PARAM_KEYS}
    adam_states: dict[str, dict] = {key: {} for key in PARAM_KEYS}
    h = torch.zeros(batch_size, hidden, dtype=dtype, device=device)
    losses = []
    for step in range(steps):
        if (window := step % layout.windows) == 0:
            h = torch.zeros(batch_size, hidden, dtype=dtype, device=device)  # the streams restart
        inputs, targets = layout.window(streams, window)
        x = F.one_hot(inputs, vocab).to(dtype)
        loss, grads, h = truncated_bptt(x, targets, h, current, chunk=seq_len)
        clipped, _ = clip_grad_norm([grads[key] for key in PARAM_KEYS], max_norm=clip)
        for key, grad in zip(PARAM_KEYS, clipped, strict=True):
            current[key], adam_states[key] = adam(current[key], grad, adam_states[key], lr=lr)
        losses.append(loss / seq_len)
    per_char = torch.stack(losses).to(dtype) if losses else torch.zeros(0, dtype=dtype, device=device)
    return current, per_char


def sample_chars(params, start_token, steps, temperature=1.0, generator=None):
    r"""Sample text from the trained language model, one character at a time.

    .. math::
        x_s = \mathrm{onehot}(y_{s-1}), \quad
        h_s = \tanh(x_s W_{xh}^\top + h_{s-1} W_{hh}^\top + b_h), \quad
        p_s = \mathrm{softmax}\big((h_s W_{hy}^\top + b_y) / \tau\big), \quad
        y_s \sim p_s

    with :math:`h_0 = 0`, :math:`y_0 =` ``start_token`` and :math:`\tau =` ``temperature``.
    The temperature divides the *logits*: :math:`\tau < 1` sharpens the distribution towards
    greedy decoding, :math:`\tau > 1` flattens it towards uniform. (Dividing the probabilities
    instead changes nothing once they are renormalised.) Each draw is
    ``torch.multinomial(p, 1, generator=generator)[:, 0]``, one call per step, so the same
    generator gives the same text.

    Args:
        params (dict): ``W_xh (H, V)``, ``W_hh (H, H)``, ``b_h (H,)``, ``W_hy (V, H)``, ``b_y (V,)``.
        start_token (Tensor): ``(B,)`` int64, the first input of every sequence.
        steps (int): how many tokens to draw, ``>= 0``.
        temperature (float): :math:`\tau > 0`.
        generator (torch.Generator, optional): the source of randomness of every draw.

    Returns:
        Tensor: ``tokens (B, steps)`` int64, without the start token. ``steps=0`` gives an
        empty ``(B, 0)`` int64 tensor (``torch.stack`` of an empty list raises instead, so that
        case needs its own answer).

    Notes: L5 §4 (generation: sample and feed back; exposure bias), W8 §4 (the character-level
    LM and its temperature). Calls ``rnn_cell`` at every step.

    Agrees with a loop over ``nn.RNNCell`` + ``nn.Linear`` + ``torch.multinomial`` with the
    same weights and generator.
    """
    W_xh, W_hh, b_h = _cell_weights(params)
    vocab, dtype = W_xh.shape[1], W_xh.dtype
    h = torch.zeros(start_token.shape[0], W_hh.shape[0], dtype=dtype, device=W_xh.device)
    token, drawn = start_token, []
    for _ in range(steps):
        h = rnn_cell(F.one_hot(token, vocab).to(dtype), h, W_xh, W_hh, b_h)
        probs = torch.softmax(_readout(h, params) / temperature, dim=-1)
        token = torch.multinomial(probs, 1, generator=generator)[:, 0]
        drawn.append(token)
    return _stack_tokens(drawn, start_token)
