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

import torch
import torch.nn.functional as F

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
    a = x @ W_xh.T + h_prev @ W_hh.T + b_h
    h = torch.tanh(a)
    return h


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
    B = x.shape[0]
    T = x.shape[1]
    if T == 0:
        H = W_hh.shape[0]
        dtype = torch.result_type(x, h0)
        return torch.zeros(B, 0, H, dtype=dtype, device=x.device)
    h = h0
    hs = []
    for t in range(T):
        h = rnn_cell(x[:, t, :], h, W_xh, W_hh, b_h)
        hs.append(h)
    return torch.stack(hs, dim=1)


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
    N = logits.shape[0]
    # shift every row by its maximum so that every exponent is <= 0
    row_max = logits.max(dim=1, keepdim=True).values
    shifted = logits - row_max
    log_sum = torch.log(torch.exp(shifted).sum(dim=1))
    rows = torch.arange(N, device=logits.device)
    target_score = shifted[rows, targets]
    per_row = log_sum - target_score
    return per_row.sum() / N


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
    W_xh = params["W_xh"]
    W_hh = params["W_hh"]
    b_h = params["b_h"]
    W_hy = params["W_hy"]
    b_y = params["b_y"]
    B = x.shape[0]
    T = x.shape[1]
    C = W_hy.shape[0]

    # forward pass: every hidden state, then the logits and the loss step by step
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    loss = torch.zeros((), dtype=hs.dtype, device=hs.device)
    probs = []
    for t in range(T):
        o_t = hs[:, t, :] @ W_hy.T + b_y
        # softmax_cross_entropy is the mean over the batch: summed over t it is the loss
        loss = loss + softmax_cross_entropy(o_t, targets[:, t])
        probs.append(torch.softmax(o_t, dim=1))

    # backward pass, from the last step to the first
    dW_xh = torch.zeros_like(W_xh)
    dW_hh = torch.zeros_like(W_hh)
    db_h = torch.zeros_like(b_h)
    dW_hy = torch.zeros_like(W_hy)
    db_y = torch.zeros_like(b_y)
    da_next = torch.zeros_like(hs[:, 0, :]) if T > 0 else None
    rows = torch.arange(B, device=x.device)
    for t in range(T - 1, -1, -1):
        h_t = hs[:, t, :]
        if t > 0:
            h_before = hs[:, t - 1, :]
        else:
            h_before = h0
        onehot = torch.zeros(B, C, dtype=probs[t].dtype, device=probs[t].device)
        onehot[rows, targets[:, t]] = 1.0
        do_t = (probs[t] - onehot) / B
        dW_hy = dW_hy + do_t.T @ h_t
        db_y = db_y + do_t.sum(dim=0)
        dh_t = do_t @ W_hy + da_next @ W_hh
        da_t = dh_t * (1 - h_t * h_t)
        dW_xh = dW_xh + da_t.T @ x[:, t, :]
        dW_hh = dW_hh + da_t.T @ h_before
        db_h = db_h + da_t.sum(dim=0)
        da_next = da_t
    if T > 0:
        dh0 = da_next @ W_hh
    else:
        dh0 = torch.zeros_like(h0)
    grads = {"W_xh": dW_xh, "W_hh": dW_hh, "b_h": db_h, "W_hy": dW_hy, "b_y": db_y, "h0": dh0}
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
    W_xh = params["W_xh"]
    W_hh = params["W_hh"]
    b_h = params["b_h"]
    T = x.shape[1]
    if T == 0:
        return rnn_bptt(x, targets, h0, params) + (h0.clone(),)
    # the hidden states of the whole sequence: chunk k starts from the last state of chunk k-1
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    loss = None
    grads = None
    start = 0
    while start < T:
        end = min(start + chunk, T)
        if start == 0:
            h_start = h0
        else:
            h_start = hs[:, start - 1, :]
        loss_c, grads_c = rnn_bptt(x[:, start:end, :], targets[:, start:end], h_start, params)
        if loss is None:
            loss = loss_c
            grads = {}
            for key in grads_c:
                grads[key] = grads_c[key]
        else:
            loss = loss + loss_c
            for key in ("W_xh", "W_hh", "b_h", "W_hy", "b_y"):
                grads[key] = grads[key] + grads_c[key]
            # "h0" keeps the first chunk's gradient only
        start = end
    h_last = hs[:, T - 1, :].clone()
    return loss, grads, h_last


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
    T = x.shape[1]
    hs_fwd = rnn_forward(x, h0_fwd, params_fwd["W_xh"], params_fwd["W_hh"], params_fwd["b_h"])
    # the backward RNN reads the sequence from the end: reverse it, run, and reverse back
    backwards = list(range(T - 1, -1, -1))
    x_rev = x[:, backwards, :]
    hs_bwd_rev = rnn_forward(x_rev, h0_bwd, params_bwd["W_xh"], params_bwd["W_hh"], params_bwd["b_h"])
    hs_bwd = hs_bwd_rev[:, backwards, :]
    return torch.cat([hs_fwd, hs_bwd], dim=2)


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
    W_xh = params["W_xh"]
    W_hh = params["W_hh"]
    b_h = params["b_h"]
    W_hy = params["W_hy"]
    b_y = params["b_y"]
    B = start_token.shape[0]
    if steps == 0:
        return torch.zeros(B, 0, dtype=torch.int64, device=start_token.device)
    h = h0
    token = start_token
    out = []
    for s in range(steps):
        x = embedding[token]
        h = rnn_cell(x, h, W_xh, W_hh, b_h)
        logits = h @ W_hy.T + b_y
        token = torch.argmax(logits, dim=1)
        out.append(token)
    return torch.stack(out, dim=1)


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

    B = batch_size
    S = seq_len
    N = tokens.shape[0]
    L = N // B
    W = (L - 1) // S
    if steps > 0 and W < 1:
        raise ValueError(f"train_char_rnn: each of the {B} streams has {L} tokens, too few for one window of {S}")
    dtype = params["W_xh"].dtype
    device = params["W_xh"].device
    V = params["W_hy"].shape[0]
    H = params["W_hh"].shape[0]
    eye = torch.eye(V, dtype=dtype, device=device)

    # cut the token stream into B contiguous streams
    stream_rows = []
    for b in range(B):
        stream_rows.append(tokens[b * L:(b + 1) * L])
    stream = torch.stack(stream_rows, dim=0).to(device)

    current = {}
    opt_states = {}
    for key in PARAM_KEYS:
        current[key] = params[key].clone()
        opt_states[key] = {}

    h = torch.zeros(B, H, dtype=dtype, device=device)
    losses = []
    for s in range(steps):
        w = s % W
        if w == 0:
            h = torch.zeros(B, H, dtype=dtype, device=device)
        inputs = stream[:, w * S:(w + 1) * S]
        targets = stream[:, w * S + 1:(w + 1) * S + 1]
        x = eye[inputs]
        loss, grads, h_last = truncated_bptt(x, targets, h, current, S)
        grad_list = []
        for key in PARAM_KEYS:
            grad_list.append(grads[key])
        clipped, _ = clip_grad_norm(grad_list, clip)
        for i in range(len(PARAM_KEYS)):
            key = PARAM_KEYS[i]
            current[key], opt_states[key] = adam(current[key], clipped[i], opt_states[key], lr=lr)
        losses.append(loss / S)
        h = h_last
    if len(losses) == 0:
        loss_tensor = torch.zeros(0, dtype=dtype, device=device)
    else:
        loss_tensor = torch.stack(losses).to(dtype)
    return current, loss_tensor


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
    W_xh = params["W_xh"]
    W_hh = params["W_hh"]
    b_h = params["b_h"]
    W_hy = params["W_hy"]
    b_y = params["b_y"]
    B = start_token.shape[0]
    V = W_xh.shape[1]
    H = W_hh.shape[0]
    if steps == 0:
        return torch.zeros(B, 0, dtype=torch.int64, device=start_token.device)
    eye = torch.eye(V, dtype=W_xh.dtype, device=W_xh.device)
    h = torch.zeros(B, H, dtype=W_xh.dtype, device=W_xh.device)
    token = start_token
    out = []
    for s in range(steps):
        x = eye[token]
        h = rnn_cell(x, h, W_xh, W_hh, b_h)
        logits = h @ W_hy.T + b_y
        p = torch.softmax(logits / temperature, dim=1)
        token = torch.multinomial(p, 1, generator=generator)[:, 0]
        out.append(token)
    return torch.stack(out, dim=1)
