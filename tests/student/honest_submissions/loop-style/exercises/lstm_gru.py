# Exercises: lstm_gru. Fill in every `raise NotImplementedError()` below; keep the signatures.
# Public tests: test_lstm_gru.py (run `pytest -k lstm_gru`).
"""Gated recurrent cells: LSTM and GRU, written with plain tensor operations.

Notes: L5 §7 (LSTM, §7.1-§7.5 the gates), L5 §8 (GRU), L5 §9 (LSTM vs GRU), and L7-8 (Lecture 7)
§五 (gates and the additive cell path that lets gradients flow back in time).

Conventions that matter here (they are PyTorch's, so the results agree with ``nn.LSTMCell``,
``nn.LSTM``, ``nn.GRUCell`` and ``nn.GRU`` when their weights are copied in):

- Weights are stacked gate by gate along the first axis and applied as ``x @ W.T``:
  LSTM ``W_ih (4H, D)``, ``W_hh (4H, H)``, ``b_ih (4H,)``, ``b_hh (4H,)`` with the blocks in the
  order input ``i``, forget ``f``, cell candidate ``g``, output ``o``;
  GRU ``W_ih (3H, D)``, ``W_hh (3H, H)``, ``b_ih (3H,)``, ``b_hh (3H,)`` with the blocks in the
  order reset ``r``, update ``z``, new ``n``.
- Two biases (``b_ih`` and ``b_hh``) as in PyTorch; for the LSTM only their sum matters, for the
  GRU they differ in the new-gate block because ``r`` multiplies ``W_hn h + b_hn``.
- Sequences are batch-first: ``x (B, T, D)``.
- PyTorch's own recurrent kernels (``torch.lstm_cell``, ``torch.gru_cell``, ``torch.lstm``,
  ``torch.gru``, ``torch._VF``, the ``nn`` recurrent modules) are forbidden here. The README's
  patterns ``*lstm*`` and ``*gru*`` match those PyTorch names only, never your own functions:
  ``lstm_forward`` and ``gru_forward`` may call your ``lstm_cell`` and ``gru_cell``, and the
  labs below run your ``lstm_forward`` and ``gru_forward``, as their docstrings say.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

# The labs import other topics' functions inside themselves, not here: a topic that fails to
# load then costs the lab that uses it, not every function of this module.


def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    r"""One LSTM step.

    .. math::
        \begin{aligned}
        i &= \sigma(W_{ii} x + b_{ii} + W_{hi} h + b_{hi}) \\
        f &= \sigma(W_{if} x + b_{if} + W_{hf} h + b_{hf}) \\
        g &= \tanh(W_{ig} x + b_{ig} + W_{hg} h + b_{hg}) \\
        o &= \sigma(W_{io} x + b_{io} + W_{ho} h + b_{ho}) \\
        c' &= f \odot c + i \odot g \\
        h' &= o \odot \tanh(c')
        \end{aligned}

    The cell update :math:`c' = f \odot c + i \odot g` is the additive path of the notes: the
    gradient reaches :math:`c` through an elementwise product, not a matrix product.

    Args:
        x (Tensor): (B, D) float32/float64, the input at this step.
        h_prev (Tensor): (B, H), the previous hidden state.
        c_prev (Tensor): (B, H), the previous cell state.
        W_ih (Tensor): (4H, D), input-to-gate weights, blocks ``[i; f; g; o]``.
        W_hh (Tensor): (4H, H), hidden-to-gate weights, same block order.
        b_ih (Tensor): (4H,), input-side bias.
        b_hh (Tensor): (4H,), hidden-side bias.

    Returns:
        (h, c): two new (B, H) tensors, the next hidden and cell states.

    Notes: L5 §7.1-§7.5; L7-8 (Lecture 7) §五.

    Agrees with ``torch.nn.LSTMCell`` (``weight_ih = W_ih``, ``weight_hh = W_hh``,
    ``bias_ih = b_ih``, ``bias_hh = b_hh``).
    """
    H = h_prev.shape[1]
    gates = x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    i = torch.sigmoid(gates[:, 0:H])
    f = torch.sigmoid(gates[:, H:2 * H])
    g = torch.tanh(gates[:, 2 * H:3 * H])
    o = torch.sigmoid(gates[:, 3 * H:4 * H])
    c = f * c_prev + i * g
    h = o * torch.tanh(c)
    return h, c


def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    r"""Run an LSTM over a whole sequence.

    .. math::
        (h_t, c_t) = \mathrm{lstm\_cell}(x_t, h_{t-1}, c_{t-1}), \quad t = 1, \dots, T

    with the same weights at every step (weight sharing, L5 §2).

    Args:
        x (Tensor): (B, T, D) float32/float64, batch-first, T >= 1.
        h0 (Tensor): (B, H), the initial hidden state.
        c0 (Tensor): (B, H), the initial cell state.
        W_ih (Tensor): (4H, D); W_hh (Tensor): (4H, H); b_ih, b_hh (Tensor): (4H,); as in
            :func:`lstm_cell`.

    Returns:
        (hs, (h_T, c_T)): ``hs`` (B, T, H) holds every hidden state ``h_1 ... h_T``;
        ``h_T`` and ``c_T`` (B, H) are the last hidden and cell states.

    Notes: L5 §7; L7-8 (Lecture 7) §五.

    Agrees with ``torch.nn.LSTM(D, H, batch_first=True)`` (one layer, unidirectional), called as
    ``lstm(x, (h0[None], c0[None]))``: ``hs`` is its output and ``(h_T, c_T)`` its ``(h_n, c_n)``
    without the leading layer axis.
    """
    T = x.shape[1]
    h = h0
    c = c0
    hs = []
    for t in range(T):
        h, c = lstm_cell(x[:, t, :], h, c, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    if T == 0:
        B = x.shape[0]
        H = h0.shape[1]
        empty = torch.zeros(B, 0, H, dtype=torch.result_type(x, h0), device=x.device)
        return empty, (h0.clone(), c0.clone())
    return torch.stack(hs, dim=1), (h, c)


def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    r"""One GRU step, in PyTorch's form.

    .. math::
        \begin{aligned}
        r &= \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr}) \\
        z &= \sigma(W_{iz} x + b_{iz} + W_{hz} h + b_{hz}) \\
        n &= \tanh(W_{in} x + b_{in} + r \odot (W_{hn} h + b_{hn})) \\
        h' &= (1 - z) \odot n + z \odot h
        \end{aligned}

    Careful, this differs from the notes (L5 §8, Cho et al. 2014), where the reset gate is applied
    *before* the matrix product: :math:`n = \tanh(W_{in} x + W_{hn} (r \odot h) + b)`. Here ``r``
    multiplies the already projected :math:`W_{hn} h + b_{hn}` (Cho et al.'s alternative form, the
    one cuDNN and PyTorch use). The two are different functions of the same weights; this package
    uses PyTorch's. The role of the gates is the same: ``r`` near 0 makes the candidate ignore the
    past (L5 §8.1); ``z`` near 1 keeps the old state, near 0 takes the candidate (L5 §8.2).

    Args:
        x (Tensor): (B, D) float32/float64, the input at this step.
        h_prev (Tensor): (B, H), the previous hidden state.
        W_ih (Tensor): (3H, D), input-to-gate weights, blocks ``[r; z; n]``.
        W_hh (Tensor): (3H, H), hidden-to-gate weights, same block order.
        b_ih (Tensor): (3H,), input-side bias.
        b_hh (Tensor): (3H,), hidden-side bias (its ``n`` block sits inside ``r * (...)``).

    Returns:
        h (Tensor): (B, H), a new tensor, the next hidden state.

    Notes: L5 §8, §8.1, §8.2, §9.

    Agrees with ``torch.nn.GRUCell`` (``weight_ih = W_ih``, ``weight_hh = W_hh``,
    ``bias_ih = b_ih``, ``bias_hh = b_hh``).
    """
    H = h_prev.shape[1]
    gi = x @ W_ih.T + b_ih
    gh = h_prev @ W_hh.T + b_hh
    r = torch.sigmoid(gi[:, 0:H] + gh[:, 0:H])
    z = torch.sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
    n = torch.tanh(gi[:, 2 * H:3 * H] + r * gh[:, 2 * H:3 * H])
    h = (1 - z) * n + z * h_prev
    return h


def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    r"""Run a GRU over a whole sequence.

    .. math::
        h_t = \mathrm{gru\_cell}(x_t, h_{t-1}), \quad t = 1, \dots, T

    Args:
        x (Tensor): (B, T, D) float32/float64, batch-first, T >= 1.
        h0 (Tensor): (B, H), the initial hidden state.
        W_ih (Tensor): (3H, D); W_hh (Tensor): (3H, H); b_ih, b_hh (Tensor): (3H,); as in
            :func:`gru_cell`.

    Returns:
        (hs, h_T): ``hs`` (B, T, H) holds every hidden state ``h_1 ... h_T``; ``h_T`` (B, H) is the
        last one.

    Notes: L5 §8.

    Agrees with ``torch.nn.GRU(D, H, batch_first=True)`` (one layer, unidirectional), called as
    ``gru(x, h0[None])``: ``hs`` is its output and ``h_T`` its ``h_n`` without the layer axis.
    """
    T = x.shape[1]
    h = h0
    hs = []
    for t in range(T):
        h = gru_cell(x[:, t, :], h, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    if T == 0:
        B = x.shape[0]
        H = h0.shape[1]
        empty = torch.zeros(B, 0, H, dtype=torch.result_type(x, h0), device=x.device)
        return empty, h0.clone()
    return torch.stack(hs, dim=1), h


# --- the lab: why gates --------------------------------------------------------------------------


def input_gradient_norms(kind, x, h0, params):
    r"""How strongly the last hidden state depends on each input: the vanishing gradient, measured.

    .. math::
        n_t = \Big\lVert \frac{\partial \sum h_T}{\partial x_t} \Big\rVert_2,
        \qquad t = 1, \dots, T

    the norm taken over the batch and the features of :math:`x_t` together. For the plain RNN
    the Jacobian :math:`\partial h_T / \partial x_t` is a product of :math:`T - t` factors
    :math:`\mathrm{diag}(1 - h_k^2) W_{hh}`, so :math:`n_t` decays geometrically with the
    distance :math:`T - t` when those factors are contractions. The LSTM's cell path
    :math:`c_t = f_t \odot c_{t-1} + \dots` and the GRU's interpolation
    :math:`h_t = (1 - z_t) n_t + z_t h_{t-1}` are additive: with forget (update) gates near one
    the product barely shrinks, which is what the notebook's plot of :math:`n_t` against
    :math:`t` shows for the three cells on one axis.

    Args:
        kind (str): ``"rnn"``, ``"lstm"`` or ``"gru"``.
        x (Tensor): ``(B, T, D)`` float32/float64.
        h0 (Tensor): ``(B, H)`` (the LSTM's cell state starts at zeros).
        params (dict): ``"rnn"``: ``W_xh (H, D)``, ``W_hh (H, H)``, ``b_h (H,)``;
            ``"lstm"``/``"gru"``: ``W_ih``, ``W_hh``, ``b_ih``, ``b_hh`` as in
            :func:`lstm_forward` / :func:`gru_forward`. Other keys are ignored.

    Returns:
        Tensor: ``norms (T,)`` in the dtype of ``x``.

    Notes: L5 §6 (vanishing and exploding gradients, the product of Jacobians), L5 §7.5 (the
    LSTM's additive cell path), L5 §8 (the GRU). Autograd is allowed here (and only here in
    this module): it runs through your own ``rnn_forward``, ``lstm_forward`` or
    ``gru_forward``.

    Agrees with the same gradient taken through ``nn.RNN`` / ``nn.LSTM`` / ``nn.GRU`` with the
    weights copied in.
    """
    from .rnn import rnn_forward

    T = x.shape[1]
    with torch.enable_grad():
        x_leaf = x.detach().clone().requires_grad_(True)
        if kind == "rnn":
            hs = rnn_forward(x_leaf, h0, params["W_xh"], params["W_hh"], params["b_h"])
        elif kind == "lstm":
            c0 = torch.zeros_like(h0)
            hs, _ = lstm_forward(x_leaf, h0, c0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
        elif kind == "gru":
            hs, _ = gru_forward(x_leaf, h0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
        else:
            raise ValueError(f"input_gradient_norms: unknown kind {kind!r}, expected 'rnn', 'lstm' or 'gru'")
        total = hs[:, T - 1, :].sum()
        dx = torch.autograd.grad(total, x_leaf)[0]
    norms = []
    for t in range(T):
        g = dx[:, t, :]
        norms.append(torch.sqrt((g * g).sum()))
    return torch.stack(norms).detach().to(x.dtype)


# --- the lab: delayed recall ---------------------------------------------------------------------


def recall_batch(K, batch_size, lag, generator=None):
    r"""Draw delayed-recall sequences (given: the task, not an exercise).

    Each row is ``lag + 1`` tokens: the first from the ``M = K // 2`` *memory* symbols
    ``[0, M)``, then ``lag`` distractors from the other symbols ``[M, K)``. The target is the
    first token, to be read out after the last. Chance is ``1 / M``.

    Returns:
        tokens (Tensor): ``(batch_size, lag + 1)`` int64, drawn with ``generator``.
    """
    M = K // 2
    first = torch.randint(M, (batch_size, 1), generator=generator)
    rest = torch.randint(M, K, (batch_size, lag), generator=generator)
    return torch.cat([first, rest], dim=1)


def recall_logits(kind, params, x):
    r"""The recall model: run a cell over ``x`` from zero states, read out the last hidden state.

    .. math::
        \mathrm{logits} = h_T W_y^\top + b_y

    Args:
        kind (str): ``"rnn"``, ``"lstm"`` or ``"gru"``.
        x (Tensor): ``(B, T, K)`` one-hot inputs, in the dtype of ``params``.
        params (dict): the cell's weights as in :func:`input_gradient_norms` plus the readout
            ``W_y (K, H)``, ``b_y (K,)``.

    Returns:
        logits (Tensor): ``(B, K)``, from ``h_T`` (not ``h_1``, which would be trivial).
    """
    from .rnn import rnn_forward

    B = x.shape[0]
    if kind == "rnn":
        H = params["W_hh"].shape[0]
        h0 = torch.zeros(B, H, dtype=x.dtype, device=x.device)
        hs = rnn_forward(x, h0, params["W_xh"], params["W_hh"], params["b_h"])
        h_T = hs[:, -1, :]
    elif kind == "lstm":
        H = params["W_hh"].shape[1]
        h0 = torch.zeros(B, H, dtype=x.dtype, device=x.device)
        c0 = torch.zeros(B, H, dtype=x.dtype, device=x.device)
        _, (h_T, _c_T) = lstm_forward(x, h0, c0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
    elif kind == "gru":
        H = params["W_hh"].shape[1]
        h0 = torch.zeros(B, H, dtype=x.dtype, device=x.device)
        _, h_T = gru_forward(x, h0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
    else:
        raise ValueError(f"recall_logits: unknown kind {kind!r}, expected 'rnn', 'lstm' or 'gru'")
    logits = h_T @ params["W_y"].T + params["b_y"]
    return logits


def train_recall(kind, params, steps, batch_size, lag, lr=1e-2, generator=None):
    r"""Train a cell on delayed recall: remember the first token for ``lag`` steps.

    .. math::
        L = -\frac{1}{B} \sum_b \log \mathrm{softmax}(h_T W_y^\top + b_y)_{x_{b,1}}, \qquad
        \theta_k \leftarrow \mathrm{adam}(\theta_k, \nabla_{\theta_k} L, \mathrm{state}_k)

    Each step ``s`` draws a batch ``tokens``, ``recall_batch(K, batch_size, lag, generator)``
    with ``K = params["W_y"].shape[0]``, feeds ``x = one_hot(tokens, K)`` (in the dtype of
    ``params``) to :func:`recall_logits`, and takes
    ``loss = softmax_cross_entropy(logits, tokens[:, 0])``; autograd gives the gradient of every
    parameter, and each parameter takes one ``adam`` step with its own state (``lr``, default
    betas and eps). ``losses[s]`` is the loss before the update.

    Why gates (L5 §5-§8): the gradient reaching the first input is a product of ``lag``
    Jacobians. The plain RNN's shrink it geometrically, so at a lag of 20-30 it learns nothing
    and stays at chance; the LSTM's cell path (with the forget gate starting open) and the
    GRU's interpolation (update gate starting near one) carry it, and they learn the task.

    Args:
        kind (str): ``"rnn"``, ``"lstm"`` or ``"gru"``.
        params (dict): initial weights (see :func:`recall_logits`), float32/float64; not
            modified.
        steps (int): number of Adam steps.
        batch_size (int): sequences per step.
        lag (int): distractors after the token to remember (sequences of ``lag + 1``).
        lr (float): Adam's learning rate. Default: ``1e-2``.
        generator (torch.Generator, optional): draws every batch.

    Returns:
        (params_out, losses): new tensors with the keys, shapes and dtype of ``params``, and
        ``losses (steps,)`` in the dtype of ``params``.

    Notes: L5 §5-§6 (vanishing gradients), §7 (LSTM), §8 (GRU). Graded in the parent with
    ``kind="gru"``, ``K = 16``, 160 steps of 128 sequences at a lag of 24-32 drawn per
    grading: held-out recall accuracy at least 0.9 (chance is ``1 / M``), within 5 s of CPU
    on one core.
    """
    from .optimizers import adam
    from .rnn import softmax_cross_entropy

    K = params["W_y"].shape[0]
    dtype = params["W_y"].dtype
    device = params["W_y"].device
    keys = list(params.keys())
    current = {}
    opt_states = {}
    for key in keys:
        current[key] = params[key].detach().clone()
        opt_states[key] = {}
    eye = torch.eye(K, dtype=dtype, device=device)
    losses = []
    for s in range(steps):
        tokens = recall_batch(K, batch_size, lag, generator=generator).to(device)
        x = eye[tokens]
        with torch.enable_grad():
            leaves = {}
            for key in keys:
                leaves[key] = current[key].detach().requires_grad_(True)
            logits = recall_logits(kind, leaves, x)
            loss = softmax_cross_entropy(logits, tokens[:, 0])
            leaf_list = []
            for key in keys:
                leaf_list.append(leaves[key])
            grad_list = torch.autograd.grad(loss, leaf_list, allow_unused=True)
        for i in range(len(keys)):
            key = keys[i]
            g = grad_list[i]
            if g is None:
                # a key the model does not use: its gradient is zero
                g = torch.zeros_like(current[key])
            current[key], opt_states[key] = adam(current[key], g.detach(), opt_states[key], lr=lr)
        losses.append(loss.detach())
    if len(losses) == 0:
        loss_tensor = torch.zeros(0, dtype=dtype, device=device)
    else:
        loss_tensor = torch.stack(losses).to(dtype)
    return current, loss_tensor
