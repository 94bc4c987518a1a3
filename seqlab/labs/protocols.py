"""The labs' training protocols, written once more with switches for the known slips.

Each ``*_losses(child_inputs, **switches)`` is the protocol of a lab's docstring run with the
reference's functions from the initial parameters and generator state the student's process was
sent (in float64: the protocol's exact trajectory), with the slips named by ``switches`` switched
on; it yields one step's loss at a time, as the student's ``losses`` would hold it, so that a
replay that has already left the student's losses can stop there (seqlab.labs.differential).
With no switch on, each is the protocol itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F

from .tasktools import reference


def _float64(tree):
    if isinstance(tree, dict):
        return {k: _float64(v) for k, v in tree.items()}
    return tree.detach().to(torch.float64).clone() if tree.is_floating_point() else tree.clone()


def _generator(child_inputs: dict) -> torch.Generator:
    gen = torch.Generator()
    gen.set_state(child_inputs["generator"].get_state())
    return gen


def _flat(tree: dict, prefix: tuple = ()) -> dict[tuple, torch.Tensor]:
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(_flat(value, (*prefix, key)))
        else:
            out[(*prefix, key)] = value
    return out


def _tree(flat: dict[tuple, torch.Tensor]) -> dict:
    out: dict = {}
    for path, value in flat.items():
        node = out
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return out


def _adam_loop(
    params: dict,
    draw: Callable[[], object],
    loss_of: Callable[[dict, object], torch.Tensor],
    lr: float,
    after: bool = False,
    accumulate: bool = False,
    fresh_adam: bool = False,
    ascent: bool = False,
    one_batch: bool = False,
    running_mean: bool = False,
    lr_used: float = 0.0,
) -> Iterator[float]:
    """The task labs' loop: draw a batch, the loss of the parameters on it, one adam step per
    tensor with its own state. Its slips: the loss recorded that of the updated parameters on
    the same batch (``after``) or the mean of the losses so far (``running_mean``); each step's
    gradients added to the previous step's (``accumulate``: ``.grad`` never reset), negated
    (``ascent``), or given a fresh Adam state (``fresh_adam``); one batch for every step; adam
    stepped with ``lr_used`` (a default) instead of the lab's ``lr``. A step's
    loss is yielded before its backward pass, so a replay that leaves the student's losses at
    once costs one forward pass."""
    adam, lr = reference().optimizers.adam, lr_used or lr
    flat = _flat(_float64(params))
    states: dict[tuple, dict] = {path: {} for path in flat}
    summed: list[torch.Tensor] | None = None
    batch, total, step = None, 0.0, 0
    while True:
        batch = batch if one_batch and batch is not None else draw()
        leaves = {path: w.detach().requires_grad_(True) for path, w in flat.items()}
        with torch.enable_grad():
            loss = loss_of(_tree(leaves), batch)
        if not after:
            total, step = total + float(loss.detach()), step + 1
            yield total / step if running_mean else float(loss.detach())
        found = torch.autograd.grad(loss, list(leaves.values()), allow_unused=True)
        grads = [torch.zeros_like(w) if g is None else (-g if ascent else g) for w, g in zip(leaves.values(), found)]
        if accumulate:
            summed = grads if summed is None else [s + g for s, g in zip(summed, grads)]
            grads = summed
        for (path, w), g in zip(leaves.items(), grads):  # a zero gradient (a map never read) moves nothing
            flat[path], states[path] = adam(w.detach(), g, {} if fresh_adam else states[path], lr=lr)
        if after:
            with torch.no_grad():
                value = float(loss_of(_tree(flat), batch))
            total, step = total + value, step + 1
            yield total / step if running_mean else value


def recall_losses(
    child_inputs: dict,
    readout: str = "last",
    target: int = 0,
    detach: bool = False,
    probabilities: bool = False,
    drop_first: bool = False,
    lag_plus: bool = False,
    cell_state: bool = False,
    **loop: bool,
) -> Iterator[float]:
    """``train_recall`` (of ``child_inputs["kind"]``, a GRU when not given) with its slips: the
    readout of the first state or the mean of the states, the last token as target, the state
    detached at every step, the model's probabilities given to the loss as logits (a double
    softmax), the token to remember cut from the input, one distractor too many (``lag + 1``),
    the LSTM's cell state read out instead of h_T. ``loop``: ``_adam_loop``'s slips."""
    ref = reference()
    lg, gen = ref.lstm_gru, _generator(child_inputs)
    K, kind = child_inputs["params"]["W_y"].shape[0], child_inputs.get("kind", "gru")
    names = {"rnn": ("W_xh", "W_hh", "b_h"), "lstm": ("W_ih", "W_hh", "b_ih", "b_hh")}.get(kind)
    names = names or ("W_ih", "W_hh", "b_ih", "b_hh")

    def cell(x, state, w):  # one step of the kind's cell: (h, c) in, (h, c) out (c unused but by the LSTM)
        if kind == "rnn":
            return ref.rnn.rnn_cell(x, state[0], *w), state[1]
        if kind == "lstm":
            return lg.lstm_cell(x, *state, *w)
        return lg.gru_cell(x, state[0], *w), state[1]

    def draw():
        return lg.recall_batch(K, child_inputs["batch_size"], child_inputs["lag"] + lag_plus, gen)

    def loss_of(p, tokens):
        x = F.one_hot(tokens[:, 1:] if drop_first else tokens, K).to(torch.float64)
        state, w, states = (x.new_zeros(x.shape[0], p["W_hh"].shape[1]),) * 2, [p[k] for k in names], []
        for t in range(x.shape[1]):  # the cell step by step (the forward is the same sum of steps)
            state = cell(x[:, t], tuple(v.detach() for v in state) if detach else state, w)
            states.append(state[0])
        hs, h_T = torch.stack(states, 1), state[1] if cell_state else state[0]
        state = {"last": h_T, "first": hs[:, 0], "mean": hs.mean(1)}[readout]
        logits = state @ p["W_y"].T + p["b_y"]
        if probabilities:
            logits = torch.softmax(logits, -1)
        return ref.rnn.softmax_cross_entropy(logits, tokens[:, target])

    return _adam_loop(child_inputs["params"], draw, loss_of, child_inputs["lr"], **loop)


def reverser_losses(
    child_inputs: dict,
    causal: bool = True,
    shift: bool = True,
    positions: bool = True,
    swap: bool = False,
    classes_mixed: bool = False,
    shift_twice: bool = False,
    encoder_causal: bool = False,
    time_major: bool = False,
    inputs_swapped: bool = False,
    pre_ln: str = "",
    scaled_twice: bool = False,
    against_src: bool = False,
    encoder_reads_tgt: bool = False,
    start_only: bool = False,
    **loop: bool,
) -> Iterator[float]:
    """``train_reverser`` with its slips: no causal mask, the targets fed unshifted, no
    positions, the decoder's two inputs swapped (``decoder_block(memory, y, ...)``), the logits
    permuted to ``(B, vocab, T)`` before the reshape to ``(-1, vocab)`` (classes and positions
    mixed); the targets shifted once more (``logits[:, :-1]`` against ``tgt[:, 1:]``), a causal
    mask on the encoder, the logits flattened time-major against batch-major targets,
    ``reverser_logits``' two token inputs swapped (the encoder reads ``tgt_in``, the decoder
    ``src``), pre-LN blocks (``pre_ln``: "both", "encoder" or "decoder"); the table scaled by sqrt(d) before ``embed_tokens`` (which scales
    it again), the loss taken against ``src`` (trained to copy), the encoder reading ``tgt_in``
    (the decoder still too), the decoder fed start tokens only (no teacher forcing).
    ``loop``: ``_adam_loop``'s slips."""
    ref = reference()
    tr, pos, gen = ref.transformer, ref.positional, _generator(child_inputs)
    B, T, V = child_inputs["batch_size"], child_inputs["seq_len"], child_inputs["vocab"]
    heads = tr.REVERSER_HEADS

    def draw():
        return tr.reverser_batch(B, T, V, gen)

    def loss_of(p, batch):
        src, tgt_in, tgt = batch
        table = p["embedding"] * p["embedding"].shape[1] ** 0.5 if scaled_twice else p["embedding"]
        pe = pos.sinusoidal_encoding(T, table.shape[1], dtype=table.dtype)
        pe = pe if positions else torch.zeros_like(pe)
        read, fed = (tgt_in, src) if inputs_swapped else (src, tgt_in if shift else tgt)
        read = tgt_in if encoder_reads_tgt else read
        fed = torch.full_like(tgt_in, V) if start_only else fed
        tgt = src if against_src else tgt
        mask = ref.attention.causal_mask(T) if encoder_causal else None
        memory = tr.encoder_block(
            pos.embed_tokens(read, table, pe), p["encoder"], heads, mask, norm_first=pre_ln in ("both", "encoder")
        )
        y, blocks = pos.embed_tokens(fed, table, pe), p["decoder"]
        first, second = (memory, y) if swap else (y, memory)
        y = tr.decoder_block(first, second, blocks, heads, causal=causal, norm_first=pre_ln in ("both", "decoder"))
        logits = y @ p["W_out"].T + p["b_out"]
        if shift_twice:
            logits, tgt = logits[:, :-1], tgt[:, 1:]
        logits = logits.permute(0, 2, 1) if classes_mixed else logits.transpose(0, 1) if time_major else logits
        return ref.rnn.softmax_cross_entropy(logits.reshape(-1, V), tgt.reshape(-1))

    return _adam_loop(child_inputs["params"], draw, loss_of, child_inputs["lr"], **loop)


def copy_losses(
    child_inputs: dict,
    sign: bool = False,
    first: bool = False,
    invariant: bool = False,
    classes_mixed: bool = False,
    bc_swapped: bool = False,
    early: bool = False,
    bias_twice: bool = False,
    no_exp: bool = False,
    no_softplus: bool = False,
    c_is_b: bool = False,
    last_only: bool = False,
    **loop: bool,
) -> Iterator[float]:
    """``train_selective_copy`` with its slips: ``A = exp(A_log)`` (the state matrix's sign
    lost), the readout at the first positions, the time-invariant model whatever ``selective``
    says, the logits permuted before the reshape (classes and positions mixed); B and C swapped
    in the scan, the readout one position early, ``b_delta`` added twice (again as
    ``delta_bias``), ``A = -A_log``; no softplus on delta, C the same as B (built from B's
    parameters), the loss on the last output alone. ``loop``: ``_adam_loop``'s slips."""
    ref = reference()
    ss, gen = ref.selective_scan, _generator(child_inputs)
    M = child_inputs["params"]["W_out"].shape[0]
    selective = bool(child_inputs.get("selective", True)) and not invariant

    def draw():
        return ss.copy_batch(M, child_inputs["batch_size"], gen)

    def loss_of(p, batch):
        tokens, targets = batch
        u = p["embedding"][tokens]
        if selective:
            delta, B, C = (u @ p[f"W_{k}"].T + p[f"b_{k}"] for k in ("delta", "B", "C"))
        else:
            delta, B, C = (p[k].expand(*u.shape[:2], -1) for k in ("b_delta", "b_B", "b_C"))
        A = -p["A_log"] if no_exp else torch.exp(p["A_log"]) if sign else -torch.exp(p["A_log"])
        B, C = (C, B) if bc_swapped else (B, B) if c_is_b else (B, C)
        bias = p["b_delta"] if bias_twice else None
        y = ss.selective_scan(u, delta, A, B, C, p["D"], delta_bias=bias, delta_softplus=not no_softplus)
        n = ss.COPY_COUNT
        y = y[:, :n] if first else y[:, -n - 1 : -1] if early else y[:, -n:]
        logits = y @ p["W_out"].T + p["b_out"]
        logits = logits.permute(0, 2, 1) if classes_mixed else logits
        if last_only:
            return ref.rnn.softmax_cross_entropy(logits[:, -1], targets[:, -1])
        return ref.rnn.softmax_cross_entropy(logits.reshape(-1, M), targets.reshape(-1))

    return _adam_loop(child_inputs["params"], draw, loss_of, child_inputs["lr"], **loop)


def char_losses(
    child_inputs: dict,
    carry: bool = True,
    reset: bool = True,
    clipped: bool = True,
    global_clip: bool = True,
    keep_adam: bool = True,
    per_char: bool = True,
    carried_after: bool = False,
    streams_across: bool = False,
    after: bool = False,
    unshifted: bool = False,
    inputs_are_targets: bool = False,
    chunk_one: bool = False,
    streams_overlap: bool = False,
    windows_plus: bool = False,
    lr_used: float = 0.0,
    clip_used: float = 0.0,
) -> Iterator[float]:
    """``train_char_rnn`` with its slips: the state not carried or not reset, no clipping or
    each gradient clipped alone, a fresh Adam state every step, the summed loss; the state
    carried from the window run again with the updated parameters (``carried_after``), the
    streams cut across the text (``tokens.reshape(L, B).T``: stream b holds every B-th
    token), the loss recorded after the update (the updated parameters on the same window), the
    targets not shifted (the inputs themselves), the inputs built from the targets, the window
    truncated at every step (``chunk=1``); stream b starting at token b (``tokens[b:b + L]``),
    ``L // seq_len`` windows, a learning rate or clip other than the ones given (``lr_used``,
    ``clip_used``: a default)."""
    ref = reference()
    keys = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")
    tokens, B, S = child_inputs["tokens"], child_inputs["batch_size"], child_inputs["seq_len"]
    theta = {k: child_inputs["params"][k].detach().to(torch.float64).clone() for k in keys}
    V, H = theta["W_hy"].shape
    L = tokens.shape[0] // B
    windows = L // S if windows_plus else (L - 1) // S
    streams = tokens[: B * L].reshape(L, B).T if streams_across else tokens[: B * L].reshape(B, L)
    streams = torch.stack([tokens[b : b + L] for b in range(B)]) if streams_overlap else streams
    lr, max_norm = lr_used or child_inputs["lr"], clip_used or child_inputs["clip"]
    state: dict[str, dict] = {k: {} for k in keys}
    zeros = torch.zeros(B, H, dtype=torch.float64)
    h, s = zeros, 0
    while True:
        w = s % windows
        if not carry or (reset and w == 0):
            h = zeros
        window = streams[:, w * S : (w + 1) * S + 1]
        inputs, targets = window[:, :-1], window[:, 1:]
        inputs, targets = (
            (targets, targets) if inputs_are_targets else (inputs, inputs) if unshifted else (inputs, targets)
        )
        x = F.one_hot(inputs, V).to(torch.float64)
        loss, grads, h_next = ref("rnn.truncated_bptt")(x, targets, h, theta, 1 if chunk_one else S)
        g = [grads[k] for k in keys]
        if clipped:
            clip = ref("optimizers.clip_grad_norm")
            g = clip(g, max_norm)[0] if global_clip else [clip([gk], max_norm)[0][0] for gk in g]
        for k, gk in zip(keys, g):
            theta[k], kept = ref("optimizers.adam")(theta[k], gk, state[k], lr=lr)
            state[k] = kept if keep_adam else {}
        if after or carried_after:
            hs = ref("rnn.rnn_forward")(x, h, theta["W_xh"], theta["W_hh"], theta["b_h"])
            h_next = hs[:, -1] if carried_after else h_next
            if after:
                logits = hs @ theta["W_hy"].T + theta["b_y"]
                loss = ref("rnn.softmax_cross_entropy")(logits.reshape(-1, V), targets.reshape(-1)) * S
        h, s = h_next, s + 1
        yield float(loss / S if per_char else loss)
