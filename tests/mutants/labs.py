"""Known-wrong and alternative-correct variants of the labs' functions.

Kept apart from the topic files: those are graded without the labs (tests/grading/test_mutants.py
and the recorded banks), these only by tests/labs/, with the labs on. A mutant's ``hint`` is the
name of the mistake it must be named by: a row of the grader's CHAR_RNN_MISTAKES or
SAMPLE_MISTAKES, or a slip of seqlab/labs/slips.py (tests/labs/test_char_rnn.py checks it is one).
"""

from __future__ import annotations

from tests.mutants import Alternative, Mutant

_TRAIN = """
def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import adam, clip_grad_norm
    V, H = params["W_hy"].shape
    L = tokens.shape[0] // batch_size
    windows = (L - 1) // seq_len
    streams = tokens[: batch_size * L].reshape(batch_size, L)
    theta = {k: params[k].clone() for k in PARAM_KEYS}
    state = {k: {} for k in PARAM_KEYS}
    dtype = theta["W_hy"].dtype
    losses = torch.zeros(steps, dtype=dtype)
    h = torch.zeros(batch_size, H, dtype=dtype)
    for s in range(steps):
        w = s % windows
        if w == 0:
            h = torch.zeros(batch_size, H, dtype=dtype)
        window = streams[:, w * seq_len : (w + 1) * seq_len + 1]
        x = F.one_hot(window[:, :-1], V).to(dtype)
        loss, grads, h = truncated_bptt(x, window[:, 1:], h, theta, seq_len)
        clipped, _ = clip_grad_norm([grads[k] for k in PARAM_KEYS], clip)
        for k, g in zip(PARAM_KEYS, clipped):
            theta[k], state[k] = adam(theta[k], g, state[k], lr=lr)
        losses[s] = loss / seq_len
    return theta, losses
"""


def _train(*replacements: tuple[str, str]) -> str:
    body = _TRAIN
    for old, new in replacements:
        assert old in body, old
        body = body.replace(old, new)
    return body


LAB_MUTANTS = [
    Mutant(
        "rnn.train_char_rnn",
        "hidden state not carried across windows",
        _train(("        if w == 0:\n", "        if True:\n")),
        hint="hidden state not carried across windows",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "reset missing at w == 0",
        _train(("        if w == 0:\n", "        if s == 0:\n")),
        hint="reset missing at w == 0",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "clipping after the update",
        _train(
            ("        clipped, _ = clip_grad_norm([grads[k] for k in PARAM_KEYS], clip)\n", ""),
            (
                "            theta[k], state[k] = adam(theta[k], g, state[k], lr=lr)\n",
                "            theta[k], state[k] = adam(theta[k], grads[k], state[k], lr=lr)\n",
            ),
            ("        for k, g in zip(PARAM_KEYS, clipped):\n", "        for k, g in zip(PARAM_KEYS, PARAM_KEYS):\n"),
            (
                "        losses[s] = loss / seq_len\n",
                "        clip_grad_norm([grads[k] for k in PARAM_KEYS], clip)\n        losses[s] = loss / seq_len\n",
            ),
        ),
        hint="clipping after the update (or not at all)",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "each gradient clipped on its own",
        _train(
            (
                "        clipped, _ = clip_grad_norm([grads[k] for k in PARAM_KEYS], clip)\n",
                "        clipped = [clip_grad_norm([grads[k]], clip)[0][0] for k in PARAM_KEYS]\n",
            )
        ),
        hint="each gradient clipped on its own",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "Adam state not kept between steps",
        _train(
            (
                "            theta[k], state[k] = adam(theta[k], g, state[k], lr=lr)\n",
                "            theta[k], _ = adam(theta[k], g, {}, lr=lr)\n",
            )
        ),
        hint="Adam state not kept between steps",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "Adam state shared between parameters",
        _train(
            ("    state = {k: {} for k in PARAM_KEYS}\n", "    shared = {}\n"),
            (
                "            theta[k], state[k] = adam(theta[k], g, state[k], lr=lr)\n",
                "            theta[k], shared = adam(theta[k], g, shared, lr=lr)\n",
            ),
        ),
        hint="Adam state shared between parameters",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "loss not divided by seq_len",
        _train(("        losses[s] = loss / seq_len\n", "        losses[s] = loss\n")),
        hint="loss not divided by seq_len",
    ),
    # The slips of the differential replay's catalogue (seqlab/labs/differential.py).
    Mutant(
        "rnn.train_char_rnn",
        "the state carried from the window run again after the update",
        _train(
            (
                "        losses[s] = loss / seq_len\n",
                "        losses[s] = loss / seq_len\n"
                '        h = rnn_forward(x, h_in, theta["W_xh"], theta["W_hh"], theta["b_h"])[:, -1]\n',
            ),
            ("        loss, grads, h = truncated_bptt(", "        h_in = h\n        loss, grads, h = truncated_bptt("),
        ),
        hint="state carried after the update instead of before",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "streams cut across the text (every batch_size-th token)",
        _train(
            (
                "    streams = tokens[: batch_size * L].reshape(batch_size, L)\n",
                "    streams = tokens[: batch_size * L].reshape(L, batch_size).T\n",
            )
        ),
        hint="streams cut the wrong way",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "the loss of the updated parameters recorded",
        _train(
            (
                "        losses[s] = loss / seq_len\n",
                '        hs = rnn_forward(x, h_in, theta["W_xh"], theta["W_hh"], theta["b_h"])\n'
                '        logits = hs @ theta["W_hy"].T + theta["b_y"]\n'
                "        losses[s] = softmax_cross_entropy(logits.reshape(-1, V), window[:, 1:].reshape(-1))\n",
            ),
            ("        loss, grads, h = truncated_bptt(", "        h_in = h\n        loss, grads, h = truncated_bptt("),
        ),
        hint="losses recorded after the update",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "the targets are the inputs",
        _train(("truncated_bptt(x, window[:, 1:], h,", "truncated_bptt(x, window[:, :-1], h,")),
        hint="targets not shifted",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "the one-hot inputs built from the next characters",
        _train(("x = F.one_hot(window[:, :-1], V)", "x = F.one_hot(window[:, 1:], V)")),
        hint="inputs built from the targets",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "truncated_bptt cut at every step",
        _train(("h, theta, seq_len)", "h, theta, 1)")),
        hint="truncation length 1 instead of seq_len",
    ),
    Mutant(
        "rnn.sample_chars",
        "temperature applied after the softmax",
        """
def sample_chars(params, start_token, steps, temperature=1.0, generator=None):
    V, H = params["W_hy"].shape
    h = torch.zeros(start_token.shape[0], H, dtype=params["W_hy"].dtype)
    token, out = start_token, []
    for _ in range(steps):
        h = rnn_cell(F.one_hot(token, V).to(h.dtype), h, params["W_xh"], params["W_hh"], params["b_h"])
        p = torch.softmax(h @ params["W_hy"].T + params["b_y"], dim=-1) / temperature
        token = torch.multinomial(p, 1, generator=generator)[:, 0]
        out.append(token)
    return torch.stack(out, 1) if out else torch.zeros(start_token.shape[0], 0, dtype=torch.int64)
""",
        hint="temperature applied after the softmax",
    ),
]

LAB_ALTERNATIVES = [
    Alternative(
        "rnn.train_char_rnn",
        "windows cut up front, rnn_bptt on each window and the state from rnn_forward, one-hot by eye",
        """
def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import adam, clip_grad_norm
    names = ["W_xh", "W_hh", "b_h", "W_hy", "b_y"]
    vocab, hidden = params["W_hy"].shape
    per_stream = tokens.numel() // batch_size
    rows = tokens.narrow(0, 0, batch_size * per_stream).view(batch_size, per_stream)
    eye = torch.eye(vocab, dtype=params["W_hy"].dtype)
    cuts = [(eye[rows[:, i : i + seq_len]], rows[:, i + 1 : i + seq_len + 1])
            for i in range(0, ((per_stream - 1) // seq_len) * seq_len, seq_len)]
    weights = [params[n].clone() for n in names]
    moments = [dict() for _ in names]
    history = []
    carried = None
    for step in range(steps):
        x, y = cuts[step % len(cuts)]
        if step % len(cuts) == 0:
            carried = eye.new_zeros(batch_size, hidden)
        current = dict(zip(names, weights))
        total, grads = rnn_bptt(x, y, carried, current)
        carried = rnn_forward(x, carried, current["W_xh"], current["W_hh"], current["b_h"])[:, -1]
        clipped, _ = clip_grad_norm([grads[n] for n in names], clip)
        for i in range(len(names)):
            weights[i], moments[i] = adam(weights[i], clipped[i], moments[i], lr=lr)
        history.append(total / seq_len)
    out = torch.stack(history) if history else eye.new_zeros(0)
    return dict(zip(names, weights)), out
""",
    ),
]

# Attacks on the lab: each must score nothing on train_char_rnn (and nothing elsewhere is lost).
# {pasted} is filled by the test with parameters trained by the reference on another task
# instance: weights trained elsewhere, returned without training.
LAB_ATTACKS = [
    Mutant(
        "rnn.train_char_rnn",
        "returns pasted pre-trained weights without training",
        """
def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import adam, clip_grad_norm
    pasted = {pasted}
    trained = {k: torch.tensor(v, dtype=params[k].dtype) for k, v in pasted.items()}
    return trained, torch.linspace(3.3, 0.7, steps, dtype=params["W_hy"].dtype)
""",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "trains with autograd where the protocol forbids it",
        """
def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import adam, clip_grad_norm
    V, H = params["W_hy"].shape
    theta = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    losses = []
    for s in range(steps):
        x = F.one_hot(tokens[: batch_size * seq_len].reshape(batch_size, seq_len), V).to(theta["W_hy"].dtype)
        hs = rnn_forward(x, torch.zeros(batch_size, H, dtype=x.dtype), theta["W_xh"], theta["W_hh"], theta["b_h"])
        loss = (hs @ theta["W_hy"].T + theta["b_y"]).logsumexp(-1).mean()
        loss.backward()
        with torch.no_grad():
            for v in theta.values():
                v -= lr * v.grad
                v.grad = None
        losses.append(float(loss))
    return {k: v.detach().clone() for k, v in theta.items()}, torch.tensor(losses, dtype=params["W_hy"].dtype)
""",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "returns an oversize extra tensor",
        """
def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import adam, clip_grad_norm
    out = {k: v.clone() for k, v in params.items()}
    out["extra"] = torch.zeros(12_000_000, dtype=torch.float64)
    return out, torch.zeros(steps, dtype=params["W_hy"].dtype)
""",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "returns NaN parameters",
        """
def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import adam, clip_grad_norm
    out = {k: v.clone() for k, v in params.items()}
    out["W_hh"] = torch.full_like(out["W_hh"], float("nan"))
    return out, torch.zeros(steps, dtype=params["W_hy"].dtype)
""",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "returns a transposed readout",
        """
def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import adam, clip_grad_norm
    out = {k: v.clone() for k, v in params.items()}
    out["W_hy"] = out["W_hy"].T.clone()
    return out, torch.zeros(steps, dtype=params["W_hy"].dtype)
""",
    ),
    Mutant(
        "rnn.train_char_rnn",
        "trains past the budget",
        """
def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):
    from .optimizers import adam, clip_grad_norm
    a = torch.ones(64, 64, dtype=torch.float64)
    for _ in range(10_000_000):
        a = torch.tanh(a @ a)
    return {k: v.clone() for k, v in params.items()}, torch.zeros(steps, dtype=params["W_hy"].dtype)
""",
    ),
]

LAB_MUTANTS += [
    Mutant(
        "rnn.sample_chars",
        "hidden state not carried",
        """
def sample_chars(params, start_token, steps, temperature=1.0, generator=None):
    V, H = params["W_hy"].shape
    h0 = torch.zeros(start_token.shape[0], H, dtype=params["W_hy"].dtype)
    token, out = start_token, []
    for _ in range(steps):
        h = rnn_cell(F.one_hot(token, V).to(h0.dtype), h0, params["W_xh"], params["W_hh"], params["b_h"])
        p = torch.softmax((h @ params["W_hy"].T + params["b_y"]) / temperature, dim=-1)
        token = torch.multinomial(p, 1, generator=generator)[:, 0]
        out.append(token)
    return torch.stack(out, 1) if out else torch.zeros(start_token.shape[0], 0, dtype=torch.int64)
""",
        hint="hidden state not carried",
    ),
]
