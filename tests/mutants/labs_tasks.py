"""Known-wrong and alternative-correct training loops for the recall, reverser and
selective-copy labs.

Each is the whole ``def`` of the lab's function, written as a student would (helpers of the
topic module called by name), so it can be swapped into a submission (``make_submission``) or
run in-process in the reference module's namespace (tests/labs/test_lab_tasks.py). The mutants
all learn *something* or crash the way a student's loop does; each must fail its lab's bounds,
and each names the slip (seqlab/labs/slips.py, or its task's ``SLIPS``) its failed run must be
named by, by the slip's name, or "" with the reason nothing can name it (tests/labs/test_lab_slips.py).
"""

from __future__ import annotations

from tests.mutants import Alternative, Mutant

_RECALL = """
def train_recall(kind, params, steps, batch_size, lag, lr=1e-2, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy
    K = params["W_y"].shape[0]
    params = {name: w.detach().clone() for name, w in params.items()}
    states = {name: {} for name in params}
    losses = []
    for _ in range(steps):
        tokens = recall_batch(K, batch_size, lag, generator)
        x = F.one_hot(tokens, K).to(params["W_y"].dtype)
        leaves = {name: w.requires_grad_(True) for name, w in params.items()}
        with torch.enable_grad():
            h0 = x.new_zeros(x.shape[0], leaves["W_hh"].shape[1])
            hs, h_T = gru_forward(x, h0, leaves["W_ih"], leaves["W_hh"], leaves["b_ih"], leaves["b_hh"])
            logits = h_T @ leaves["W_y"].T + leaves["b_y"]
            loss = softmax_cross_entropy(logits, tokens[:, 0])
            grads = torch.autograd.grad(loss, list(leaves.values()))
        for (name, w), dw in zip(leaves.items(), grads):
            params[name], states[name] = adam(w.detach(), dw, states[name], lr=lr)
        losses.append(loss.detach())
    return params, torch.stack(losses)
"""

_REVERSER = """
def train_reverser(params, steps, batch_size, seq_len, vocab, lr=1e-3, generator=None):
    from .optimizers import adam
    from .positional import embed_tokens, sinusoidal_encoding
    from .rnn import softmax_cross_entropy
    def leaves(tree, path=()):
        for key, value in tree.items():
            if isinstance(value, dict):
                yield from leaves(value, path + (key,))
            else:
                yield path + (key,), value

    def rebuild(flat):
        tree = {}
        for path, w in flat.items():
            node = tree
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = w
        return tree

    flat = {path: w.detach().clone() for path, w in leaves(params)}
    states = {path: {} for path in flat}
    losses = []
    for _ in range(steps):
        src, tgt_in, tgt = reverser_batch(batch_size, seq_len, vocab, generator)
        with torch.enable_grad():
            for w in flat.values():
                w.requires_grad_(True)
            p = rebuild(flat)
            table = p["embedding"]
            pe = sinusoidal_encoding(seq_len, table.shape[1], dtype=table.dtype)
            memory = encoder_block(embed_tokens(src, table, pe), p["encoder"], REVERSER_HEADS)
            y = decoder_block(embed_tokens(tgt_in, table, pe), memory, p["decoder"], REVERSER_HEADS, causal=True)
            logits = y @ p["W_out"].T + p["b_out"]
            loss = softmax_cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1))
            grads = torch.autograd.grad(loss, list(flat.values()))
        for (path, w), dw in zip(list(flat.items()), grads):
            flat[path], states[path] = adam(w.detach(), dw, states[path], lr=lr)
        losses.append(loss.detach())
    return rebuild(flat), torch.stack(losses)
"""

_COPY = """
def train_selective_copy(params, steps, batch_size, selective=True, lr=1e-3, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy
    M = params["W_out"].shape[0]
    params = {name: w.detach().clone() for name, w in params.items()}
    trained = [n for n in params if selective or n not in ("W_delta", "W_B", "W_C")]
    states = {name: {} for name in trained}
    losses = []
    for _ in range(steps):
        tokens, targets = copy_batch(M, batch_size, generator)
        with torch.enable_grad():
            p = {name: w.requires_grad_(name in trained) for name, w in params.items()}
            u = p["embedding"][tokens]
            if selective:
                delta, B, C = u @ p["W_delta"].T + p["b_delta"], u @ p["W_B"].T + p["b_B"], u @ p["W_C"].T + p["b_C"]
            else:
                delta, B, C = (p[k].expand(*u.shape[:2], -1) for k in ("b_delta", "b_B", "b_C"))
            y = selective_scan(u, delta, -torch.exp(p["A_log"]), B, C, p["D"], delta_softplus=True)
            logits = y[:, -COPY_COUNT:] @ p["W_out"].T + p["b_out"]
            loss = softmax_cross_entropy(logits.reshape(-1, M), targets.reshape(-1))
            grads = torch.autograd.grad(loss, [p[name] for name in trained])
        params = {name: w.detach() for name, w in p.items()}
        for name, dw in zip(trained, grads):
            params[name], states[name] = adam(params[name], dw, states[name], lr=lr)
        losses.append(loss.detach())
    return params, torch.stack(losses)
"""

# Written for the GRU the recall lab grades (``kind`` is not read), as a student may.
_SOURCES = {"lstm_gru.train_recall": _RECALL, "transformer.train_reverser": _REVERSER}
_SOURCES["selective_scan.train_selective_copy"] = _COPY


def _mutant(function: str, description: str, slip: str, *replacements: tuple[str, str]) -> Mutant:
    """The lab's correct loop with ``replacements`` made, named by the slip called ``slip``."""
    body = _SOURCES[function]
    for old, new in replacements:
        assert old in body, old
        body = body.replace(old, new)
    return Mutant(function, description, body, hint=slip)


TASK_MUTANTS = [
    _mutant(
        "lstm_gru.train_recall",
        "readout from h_1 instead of h_T",
        "readout from h_1, not h_T",
        ("logits = h_T @", "logits = hs[:, 0] @"),
    ),
    _mutant(
        "lstm_gru.train_recall",
        "target is the last token",
        "target is the last token, not the first",
        ("tokens[:, 0])", "tokens[:, -1])"),
    ),
    _mutant(
        "lstm_gru.train_recall",
        "Adam state shared between parameters",
        "Adam state shared between parameters",
        ("    states = {name: {} for name in params}\n", "    shared = {}\n"),
        (
            "params[name], states[name] = adam(w.detach(), dw, states[name], lr=lr)",
            "params[name], shared = adam(w.detach(), dw, shared, lr=lr)",
        ),
    ),
    _mutant(
        "lstm_gru.train_recall",
        "each update taken from the initial weights",
        "each update taken from the initial weights",
        (
            "        for (name, w), dw in zip(leaves.items(), grads):\n",
            "        for (name, w), dw in zip(leaves.items(), grads):\n            w = first[name]\n",
        ),
        (
            "    states = {name: {} for name in params}\n",
            "    states = {name: {} for name in params}\n    first = {n: w.clone() for n, w in params.items()}\n",
        ),
    ),
    _mutant(
        "lstm_gru.train_recall",
        "the state detached at every step (no gradient through time)",
        "no gradient through time",
        (
            '            hs, h_T = gru_forward(x, h0, leaves["W_ih"], leaves["W_hh"], leaves["b_ih"], leaves["b_hh"])\n',
            "            h_T = h0\n            for t in range(x.shape[1]):\n"
            '                h_T = gru_cell(x[:, t], h_T.detach(), leaves["W_ih"], leaves["W_hh"], leaves["b_ih"], leaves["b_hh"])\n',
        ),
    ),
    _mutant(
        "transformer.train_reverser",
        "causal mask missing in the decoder",
        "causal mask missing in the decoder",
        ("causal=True)", "causal=False)"),
    ),
    _mutant(
        "transformer.train_reverser",
        "no teacher-forcing shift: the decoder reads the targets",
        "no teacher-forcing shift",
        ("embed_tokens(tgt_in, table, pe), memory", "embed_tokens(tgt, table, pe), memory"),
    ),
    _mutant(
        "transformer.train_reverser",
        "no positional encoding",
        "no positional encoding",
        (
            "pe = sinusoidal_encoding(seq_len, table.shape[1], dtype=table.dtype)",
            "pe = table.new_zeros(seq_len, table.shape[1])",
        ),
    ),
    _mutant(
        "transformer.train_reverser",
        "cross-attention to the decoder's own input, not the encoder output",
        "the loss never uses a parameter",  # autograd.grad stops at the unused encoder
        ('memory, p["decoder"]', 'embed_tokens(tgt_in, table, pe), p["decoder"]'),
    ),
    _mutant(
        "transformer.train_reverser",
        "Adam state shared between parameters",
        "Adam state shared between parameters",
        ("    states = {path: {} for path in flat}\n", "    shared = {}\n"),
        (
            "flat[path], states[path] = adam(w.detach(), dw, states[path], lr=lr)",
            "flat[path], shared = adam(w.detach(), dw, shared, lr=lr)",
        ),
    ),
    _mutant(
        "selective_scan.train_selective_copy",
        "time-invariant scan used when selective=True",
        "time-invariant model trained with selective=True",
        ("            if selective:\n", "            if False:\n"),
        ("    trained = [n for n in params if selective or", "    trained = [n for n in params if"),
    ),
    _mutant(
        "selective_scan.train_selective_copy",
        "softplus missing on delta",
        "",  # its loss is NaN from the first step: refused as it comes back, and not named
        ('p["D"], delta_softplus=True)', 'p["D"])'),
    ),
    _mutant(
        "selective_scan.train_selective_copy",
        "A = exp(A_log), without the minus sign",
        "state matrix with the wrong sign",  # its first losses are finite: the replay names it
        ('-torch.exp(p["A_log"])', 'torch.exp(p["A_log"])'),
    ),
    _mutant(
        "selective_scan.train_selective_copy",
        "readout at the first positions instead of the markers",
        "readout at the wrong positions",
        ("y[:, -COPY_COUNT:]", "y[:, :COPY_COUNT]"),
    ),
    _mutant(
        "selective_scan.train_selective_copy",
        "only the output layer trained",
        "some parameters never changed",
        (
            '    trained = [n for n in params if selective or n not in ("W_delta", "W_B", "W_C")]',
            '    trained = ["W_out", "b_out"]',
        ),
    ),
]

TASK_ALTERNATIVES = [
    Alternative(
        "lstm_gru.train_recall",
        "own cell loop, one-hot by eye, F.cross_entropy and backward(), its own batches",
        """
def train_recall(kind, params, steps, batch_size, lag, lr=1e-2, generator=None):
    from .optimizers import adam
    from .rnn import rnn_cell, softmax_cross_entropy
    names = list(params)
    theta = [params[n].clone().requires_grad_() for n in names]
    opt_state = [dict() for _ in names]
    K = params["W_y"].shape[0]
    eye = torch.eye(K, dtype=params["W_y"].dtype)
    history = torch.empty(steps, dtype=params["W_y"].dtype)
    for s in range(steps):
        first = torch.randint(0, K // 2, (batch_size,), generator=generator)
        noise = torch.randint(K // 2, K, (batch_size, lag), generator=generator)
        x = eye[torch.cat([first[:, None], noise], 1)]
        p = dict(zip(names, theta))
        h = torch.zeros(batch_size, p["W_hh"].shape[1], dtype=x.dtype)
        c = torch.zeros_like(h)
        for t in range(lag + 1):
            if kind == "rnn":
                h = rnn_cell(x[:, t], h, p["W_xh"], p["W_hh"], p["b_h"])
            elif kind == "gru":
                h = gru_cell(x[:, t], h, p["W_ih"], p["W_hh"], p["b_ih"], p["b_hh"])
            else:
                h, c = lstm_cell(x[:, t], h, c, p["W_ih"], p["W_hh"], p["b_ih"], p["b_hh"])
        loss = F.cross_entropy(h @ p["W_y"].T + p["b_y"], first)
        for w in theta:
            w.grad = None
        loss.backward()
        with torch.no_grad():
            for i, w in enumerate(theta):
                new, opt_state[i] = adam(w, w.grad, opt_state[i], lr=lr)
                w.copy_(new)
        history[s] = loss.detach()
    return {n: w.detach().clone() for n, w in zip(names, theta)}, history
""",
    ),
    Alternative(
        "transformer.train_reverser",
        "the student's reverser_logits, paths as strings, backward(), its own batches",
        """
import torch.nn.functional as F


def train_reverser(params, steps, batch_size, seq_len, vocab, lr=1e-3, generator=None):
    from .optimizers import adam
    from .positional import embed_tokens, sinusoidal_encoding
    from .rnn import softmax_cross_entropy
    flat = {}
    stack = [("", params)]
    while stack:
        prefix, node = stack.pop()
        for key, value in node.items():
            if isinstance(value, dict):
                stack.append((prefix + key + "/", value))
            else:
                flat[prefix + key] = value.clone().requires_grad_()
    state = {k: {} for k in flat}

    def tree():
        out = {}
        for key, value in flat.items():
            *parents, leaf = key.split("/")
            node = out
            for name in parents:
                node = node.setdefault(name, {})
            node[leaf] = value
        return out

    losses = torch.zeros(steps, dtype=params["W_out"].dtype)
    for s in range(steps):
        src = torch.randint(0, vocab, (batch_size, seq_len), generator=generator)
        tgt = torch.flip(src, dims=[1])
        tgt_in = torch.roll(tgt, 1, dims=1)
        tgt_in[:, 0] = vocab
        logits = reverser_logits(tree(), src, tgt_in)
        loss = F.cross_entropy(logits.flatten(0, 1), tgt.flatten())
        for w in flat.values():
            w.grad = None
        loss.backward()
        with torch.no_grad():
            for k, w in flat.items():
                new, state[k] = adam(w, w.grad, state[k], lr=lr)
                w.copy_(new)
        losses[s] = loss.detach()
    result = tree()

    def detach(node):
        return {k: detach(v) if isinstance(v, dict) else v.detach().clone() for k, v in node.items()}

    return detach(result), losses
""",
    ),
    Alternative(
        "selective_scan.train_selective_copy",
        "the student's copy_logits with backward() on every parameter, its own batches",
        """
def train_selective_copy(params, steps, batch_size, selective=True, lr=1e-3, generator=None):
    from .optimizers import adam
    from .rnn import softmax_cross_entropy
    M = params["W_out"].shape[0]
    w = {k: v.clone().requires_grad_() for k, v in params.items()}
    opt = {k: {} for k in w}
    out = []
    for _ in range(steps):
        noise = torch.rand(batch_size, COPY_CONTEXT, generator=generator)
        where = noise.topk(COPY_COUNT, dim=1, largest=False).indices.sort(dim=1).values  # copy_batch's draw
        data = torch.randint(1, M + 1, (batch_size, COPY_COUNT), generator=generator)
        tokens = torch.zeros(batch_size, COPY_CONTEXT + COPY_COUNT, dtype=torch.long)
        tokens[torch.arange(batch_size)[:, None], where] = data
        tokens[:, COPY_CONTEXT:] = torch.arange(M + 1, M + 1 + COPY_COUNT)
        loss = F.cross_entropy(copy_logits(w, tokens, selective).reshape(-1, M), (data - 1).reshape(-1))
        for v in w.values():
            v.grad = None
        loss.backward()
        with torch.no_grad():
            for k, v in w.items():
                if v.grad is not None:  # the time-invariant model leaves W_delta, W_B, W_C unused
                    new, opt[k] = adam(v, v.grad, opt[k], lr=lr)
                    v.copy_(new)
        out.append(float(loss.detach()))
    return {k: v.detach().clone() for k, v in w.items()}, torch.tensor(out, dtype=params["W_out"].dtype)
""",
    ),
]

# The correct loops the mutants are cut from, checked to pass (so a mutant fails for its cut).
TASK_BASES = [
    Alternative(function, "written out, as the mutants' base", source) for function, source in _SOURCES.items()
]
