"""A loop-style student: every function the four labs run, written the way a careful beginner
writes it (correct, but with a Python loop over time steps, over heads, over parameters, and
per element where the element is the natural unit), to size the labs' CPU budgets against.

Each entry is the whole replacement ``def`` of one contract function; ``make_loop_submission``
copies the reference solutions and swaps every one of them in (``seqlab.build.replace_function``).
Nothing here is vectorised cleverly, and nothing is slow on purpose either:

* recurrences loop over time and accumulate BPTT's gradients step by step (an ``(H, H)``
  product per step where the reference sums with one ``einsum``);
* ``linear_scan`` is the sequential loop ``h = a_t * h + b_t`` (it loses linear_scan's
  complexity points, not the lab's), and ``selective_scan`` reads out each step's state in the
  same loop;
* ``softmax_cross_entropy`` picks each row's target logit in a loop over the rows (one indexing
  op per row, and one more in the backward pass);
* the GRU splits its weights per gate (six products per step, not two);
* attention loops over the heads; the causal mask and the sinusoidal table are built element
  by element in Python; the embedding adds positions one time step at a time.

``benchmarks/bench_lab_budgets.py`` times these against the references in the grader; the lab
budgets' factor (seqlab/labs/__init__.py, CPU_BUDGET_S) is set from that ratio.
"""

from __future__ import annotations

from pathlib import Path

LOOP_STYLE: dict[str, str] = {
    # --- rnn ---------------------------------------------------------------------------------
    "rnn.rnn_forward": """
def rnn_forward(x, h0, W_xh, W_hh, b_h):
    h = h0
    states = []
    for t in range(x.shape[1]):
        h = rnn_cell(x[:, t, :], h, W_xh, W_hh, b_h)
        states.append(h)
    return torch.stack(states, dim=1)
""",
    "rnn.softmax_cross_entropy": """
def softmax_cross_entropy(logits, targets):
    N = logits.shape[0]
    m = logits.max(dim=1, keepdim=True).values
    log_z = m[:, 0] + torch.log(torch.exp(logits - m).sum(dim=1))
    picked = []
    for n in range(N):
        picked.append(logits[n, targets[n]])
    return (log_z - torch.stack(picked)).sum() / N
""",
    "rnn.rnn_bptt": """
def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h = params["W_xh"], params["W_hh"], params["b_h"]
    W_hy, b_y = params["W_hy"], params["b_y"]
    B, T, _ = x.shape
    C = W_hy.shape[0]
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    loss = 0.0
    d_logits = []
    for t in range(T):
        logits = hs[:, t] @ W_hy.T + b_y
        loss = loss + softmax_cross_entropy(logits, targets[:, t])
        d_logits.append((torch.softmax(logits, dim=1) - F.one_hot(targets[:, t], C).to(logits.dtype)) / B)
    grads = {k: torch.zeros_like(v) for k, v in params.items()}
    dh_next = torch.zeros_like(h0)
    for t in reversed(range(T)):
        h_t = hs[:, t]
        h_prev = h0 if t == 0 else hs[:, t - 1]
        grads["W_hy"] = grads["W_hy"] + d_logits[t].T @ h_t
        grads["b_y"] = grads["b_y"] + d_logits[t].sum(dim=0)
        d_a = (d_logits[t] @ W_hy + dh_next) * (1 - h_t * h_t)
        grads["W_xh"] = grads["W_xh"] + d_a.T @ x[:, t]
        grads["W_hh"] = grads["W_hh"] + d_a.T @ h_prev
        grads["b_h"] = grads["b_h"] + d_a.sum(dim=0)
        dh_next = d_a @ W_hh
    grads["h0"] = dh_next
    return loss, grads
""",
    "rnn.truncated_bptt": """
def truncated_bptt(x, targets, h0, params, chunk):
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    T = x.shape[1]
    loss = 0.0
    grads = None
    h = h0
    for start in range(0, T, chunk):
        stop = min(start + chunk, T)
        loss_c, grads_c = rnn_bptt(x[:, start:stop], targets[:, start:stop], h, params)
        loss = loss + loss_c
        if grads is None:
            grads = dict(grads_c)
        else:
            for k in params:
                grads[k] = grads[k] + grads_c[k]
        h = rnn_forward(x[:, start:stop], h, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
    return loss, grads, h
""",
    # --- optimizers --------------------------------------------------------------------------
    "optimizers.adam": """
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    beta1, beta2 = betas
    step = state.get("step", 0) + 1
    m = state["m"] if "m" in state else torch.zeros_like(w)
    v = state["v"] if "v" in state else torch.zeros_like(w)
    m = beta1 * m + (1 - beta1) * dw
    v = beta2 * v + (1 - beta2) * dw * dw
    m_hat = m / (1 - beta1**step)
    denom = torch.sqrt(v) / math.sqrt(1 - beta2**step) + eps
    return w - lr * m_hat / denom, {"step": step, "m": m, "v": v}
""",
    "optimizers.clip_grad_norm": """
def clip_grad_norm(grads, max_norm):
    if len(grads) == 0:
        return [], torch.tensor(0.0)
    total = 0.0
    for g in grads:
        total = total + (g.double() * g.double()).sum()
    total_norm = torch.sqrt(total).to(grads[0].dtype)
    scale = max_norm / (total_norm + 1e-6)
    if scale > 1.0:
        scale = torch.ones_like(total_norm)
    clipped = []
    for g in grads:
        clipped.append(g * scale)
    return clipped, total_norm
""",
    # --- lstm_gru ----------------------------------------------------------------------------
    "lstm_gru.gru_cell": """
def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    r = torch.sigmoid(x @ W_ih[0:H].T + b_ih[0:H] + h_prev @ W_hh[0:H].T + b_hh[0:H])
    z = torch.sigmoid(x @ W_ih[H : 2 * H].T + b_ih[H : 2 * H] + h_prev @ W_hh[H : 2 * H].T + b_hh[H : 2 * H])
    n = torch.tanh(x @ W_ih[2 * H :].T + b_ih[2 * H :] + r * (h_prev @ W_hh[2 * H :].T + b_hh[2 * H :]))
    return (1 - z) * n + z * h_prev
""",
    "lstm_gru.gru_forward": """
def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h = h0
    states = []
    for t in range(x.shape[1]):
        h = gru_cell(x[:, t, :], h, W_ih, W_hh, b_ih, b_hh)
        states.append(h)
    return torch.stack(states, dim=1), h
""",
    # --- attention ---------------------------------------------------------------------------
    "attention.scaled_dot_product_attention": """
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    top = scores.max(dim=-1, keepdim=True).values
    top = torch.where(torch.isinf(top), torch.zeros_like(top), top)
    e = torch.exp(scores - top)
    total = e.sum(dim=-1, keepdim=True)
    weights = torch.where(total > 0, e / torch.where(total > 0, total, torch.ones_like(total)), torch.zeros_like(e))
    return weights @ v, weights
""",
    "attention.causal_mask": """
def causal_mask(T, device=None):
    rows = []
    for i in range(T):
        row = []
        for j in range(T):
            row.append(j <= i)
        rows.append(row)
    return torch.tensor(rows, dtype=torch.bool, device=device).reshape(T, T)
""",
    "attention.multi_head_attention": """
def multi_head_attention(query, key, value, params, num_heads, mask=None):
    B, L, E = query.shape
    if E % num_heads != 0:
        raise ValueError(f"embedding size {E} is not divisible by num_heads={num_heads}")
    dh = E // num_heads
    q = query @ params["W_q"].T + params["b_q"]
    k = key @ params["W_k"].T + params["b_k"]
    v = value @ params["W_v"].T + params["b_v"]
    if mask is not None and mask.dim() == 3:
        mask = mask
    heads, weights = [], []
    for i in range(num_heads):
        part = slice(i * dh, (i + 1) * dh)
        out, w = scaled_dot_product_attention(q[..., part], k[..., part], v[..., part], mask)
        heads.append(out)
        weights.append(w)
    concat = torch.cat(heads, dim=-1)
    return concat @ params["W_o"].T + params["b_o"], torch.stack(weights, dim=1)
""",
    # --- positional --------------------------------------------------------------------------
    "positional.sinusoidal_encoding": """
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    rows = []
    for pos in range(num_positions):
        row = []
        for i in range(d_model):
            angle = pos / 10000.0 ** ((i - i % 2) / d_model)
            row.append(math.sin(angle) if i % 2 == 0 else math.cos(angle))
        rows.append(row)
    table = torch.tensor(rows, dtype=torch.float64, device=device).reshape(num_positions, d_model)
    return table.to(dtype)
""",
    "positional.embed_tokens": """
def embed_tokens(tokens, embedding, pe):
    scale = math.sqrt(embedding.shape[-1])
    steps = []
    for t in range(tokens.shape[-1]):
        steps.append(embedding[tokens[..., t]] * scale + pe[t])
    return torch.stack(steps, dim=-2)
""",
    # --- transformer -------------------------------------------------------------------------
    "transformer.layer_norm": """
def layer_norm(x, weight, bias, eps=1e-5):
    E = x.shape[-1]
    mean = x.sum(dim=-1, keepdim=True) / E
    var = ((x - mean) ** 2).sum(dim=-1, keepdim=True) / E
    return (x - mean) / torch.sqrt(var + eps) * weight + bias
""",
    # --- selective_scan ----------------------------------------------------------------------
    "selective_scan.linear_scan": """
def linear_scan(a, b, h0=None):
    dtype = torch.promote_types(a.dtype, b.dtype)
    if h0 is not None:
        dtype = torch.promote_types(dtype, h0.dtype)
    h = torch.zeros_like(b[:, 0], dtype=dtype) if h0 is None else h0.to(dtype)
    states = []
    for t in range(b.shape[1]):
        h = a[:, t].to(dtype) * h + b[:, t].to(dtype)
        states.append(h)
    return torch.stack(states, dim=1)
""",
    "selective_scan.selective_scan": """
def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    dtype = u.dtype
    for x in (delta, A, B, C, D, z, delta_bias):
        if x is not None:
            dtype = torch.promote_types(dtype, x.dtype)
    u, delta, A, B, C = u.to(dtype), delta.to(dtype), A.to(dtype), B.to(dtype), C.to(dtype)
    if delta_bias is not None:
        delta = delta + delta_bias
    if delta_softplus:
        delta = F.softplus(delta)
    A_bar, B_bar = discretize(delta, A, B)
    h = linear_scan(A_bar, B_bar * u[..., None])
    ys = []
    for t in range(u.shape[1]):
        ys.append((h[:, t] * C[:, t, None, :]).sum(dim=-1))
    y = torch.stack(ys, dim=1)
    if D is not None:
        y = y + D * u
    if z is not None:
        y = y * F.silu(z)
    if return_last_state:
        return y, h[:, -1].clone()
    return y
""",
}


# A loopier student still: the whole cross-entropy row by row (its max, its log-sum-exp and its
# target, one row at a time), the most Python-heavy way an honest student is likely to write the
# one function that every lab runs on every step. The budgets are checked against it too.
ROW_BY_ROW: dict[str, str] = {
    **LOOP_STYLE,
    "rnn.softmax_cross_entropy": """
def softmax_cross_entropy(logits, targets):
    N = logits.shape[0]
    total = 0.0
    for n in range(N):
        row = logits[n]
        m = row.max()
        total = total + m + torch.log(torch.exp(row - m).sum()) - row[targets[n]]
    return total / N
""",
}

# What the budget must still stop: the loop style with the GRU's cell computed one hidden unit at
# a time (a loop over the H = 48 units inside every time step: ~H times the cell's operations).
# (A forward recomputed from the first step at every step, the other accidental loop, runs the
# recall lab out of the child's memory before its time, and costs the character lab, whose
# backward pass is by hand, 5.8x the reference: within its budget.)
PER_UNIT: dict[str, str] = {
    **LOOP_STYLE,
    "lstm_gru.gru_cell": """
def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    units = []
    for j in range(H):
        r = torch.sigmoid(x @ W_ih[j] + b_ih[j] + h_prev @ W_hh[j] + b_hh[j])
        z = torch.sigmoid(x @ W_ih[H + j] + b_ih[H + j] + h_prev @ W_hh[H + j] + b_hh[H + j])
        n = torch.tanh(x @ W_ih[2 * H + j] + b_ih[2 * H + j] + r * (h_prev @ W_hh[2 * H + j] + b_hh[2 * H + j]))
        units.append((1 - z) * n + z * h_prev[:, j])
    return torch.stack(units, dim=1)
""",
}

STYLES = {"loop style": LOOP_STYLE, "row by row": ROW_BY_ROW}  # honest: must fit, with margin
OVER = {"per unit": PER_UNIT}  # must be refused by the recall lab


def make_loop_submission(target: Path, solutions: Path | None = None, style: dict[str, str] = LOOP_STYLE) -> Path:
    """A submission folder at ``target``: the reference solutions with every function of
    ``style`` swapped in (``import math`` added where a module lacks it)."""
    from seqlab.build import replace_function

    root = Path(__file__).resolve().parents[1]
    solutions = solutions or root / "solutions"
    exercises = target / "exercises"
    exercises.mkdir(parents=True, exist_ok=True)
    texts = {path.stem: path.read_text(encoding="utf-8") for path in solutions.glob("*.py")}
    for qualname, source in style.items():
        module, name = qualname.split(".")
        texts[module] = replace_function(texts[module], name, source)
    for module, text in texts.items():
        if module != "__init__" and "\nimport math\n" not in text:
            text = text.replace("\nimport torch\n", "\nimport math\n\nimport torch\n", 1)
        (exercises / f"{module}.py").write_text(text, encoding="utf-8")
    return target
