"""The bugs of the example student that `seqlab demo` grades.

The example submission is assembled on the fly: the reference solutions (as a student would
hand them in, without the solution markers) with these six functions swapped in, so it can
never drift from the course. Each is a mistake students really make; the mutant bank
(tests/mutants) counts them among its known-wrong variants, and tests/grading/test_demo.py checks
that the demo loses points exactly here, with the mistake named.
"""

# (function, what is wrong, a word the feedback's "looks like" hint contains, the wrong def)
BUGS = [
    (
        "optimizers.adam",
        "no bias correction",
        "bias correction",
        """
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    b1, b2 = betas
    t = state.get("step", 0) + 1
    m = b1 * state.get("m", torch.zeros_like(w)) + (1 - b1) * dw
    v = b2 * state.get("v", torch.zeros_like(w)) + (1 - b2) * dw * dw
    return w - lr * m / (torch.sqrt(v) + eps), {"step": t, "m": m, "v": v}
""",
    ),
    (
        "rnn.rnn_bptt",
        "no recursion through W_hh",
        "W_hh",
        """
def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h, W_hy, b_y = (params[k] for k in ("W_xh", "W_hh", "b_h", "W_hy", "b_y"))
    B, T, _ = x.shape
    C = W_hy.shape[0]
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    logits = hs @ W_hy.T + b_y
    loss = softmax_cross_entropy(logits.reshape(B * T, C), targets.reshape(B * T)) * T
    d_logits = (torch.softmax(logits, dim=-1) - F.one_hot(targets, C).to(logits.dtype)) / B
    dh_out = d_logits @ W_hy
    h_prev = torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1)
    d_a = torch.empty_like(hs)
    dh_next = torch.zeros_like(h0)
    for t in reversed(range(T)):
        d_a[:, t] = dh_out[:, t] * (1 - hs[:, t] ** 2)
        dh_next = d_a[:, t] @ W_hh
    grads = {
        "W_xh": torch.einsum("bth,btd->hd", d_a, x),
        "W_hh": torch.einsum("bth,btk->hk", d_a, h_prev),
        "b_h": d_a.sum(dim=(0, 1)),
        "W_hy": torch.einsum("btc,bth->ch", d_logits, hs),
        "b_y": d_logits.sum(dim=(0, 1)),
        "h0": dh_next,
    }
    return loss, grads
""",
    ),
    (
        "lstm_gru.gru_cell",
        "the notes' form: r before W_hn",
        "notes",
        """
def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[-1]
    i_r, i_z, i_n = (x @ W_ih.T + b_ih).chunk(3, dim=-1)
    h_r, h_z, _ = (h_prev @ W_hh.T + b_hh).chunk(3, dim=-1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + (r * h_prev) @ W_hh[2 * H:].T + b_hh[2 * H:])
    return (1 - z) * n + z * h_prev
""",
    ),
    (
        "attention.scaled_dot_product_attention",
        "scales by d instead of sqrt(d)",
        "instead of sqrt(d)",
        """
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = weights.masked_fill(scores.amax(dim=-1, keepdim=True) == float("-inf"), 0.0)
    return weights @ v, weights
""",
    ),
    (
        "positional.sinusoidal_encoding",
        "sin and cos swapped",
        "swapped",
        """
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    pos = torch.arange(num_positions, device=device, dtype=torch.float64)[:, None]
    angle = pos / 10000.0 ** (torch.arange(0, d_model, 2, device=device, dtype=torch.float64) / d_model)
    pe = torch.zeros(num_positions, d_model, device=device, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(angle)
    pe[:, 1::2] = torch.sin(angle[:, : d_model // 2])
    return pe.to(dtype)
""",
    ),
    (
        "selective_scan.linear_scan",
        "correct sequential loop over time (loses only the complexity points)",
        "sequential loop",
        """
def linear_scan(a, b, h0=None):
    h = torch.zeros_like(b[:, 0]) if h0 is None else h0 * torch.ones_like(b[:, 0])
    out = []
    for t in range(a.shape[1]):
        h = a[:, t] * h + b[:, t]
        out.append(h)
    return torch.stack(out, dim=1)
""",
    ),
]
