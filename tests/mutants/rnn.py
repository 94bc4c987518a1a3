"""Known-wrong and alternative-correct RNN functions (see tests/mutants/__init__.py)."""

from tests.mutants import Alternative, FromTable, Mutant

# A correct BPTT written out by hand, for mutants that differ from it in one place.
_BPTT_BODY = """
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
        d_a[:, t] = (dh_out[:, t] + dh_next) * (1 - hs[:, t] ** 2)
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
"""


def _bptt(replacements=(), prologue=""):
    body = _BPTT_BODY
    for old, new in replacements:
        assert old in body, old
        body = body.replace(old, new)
    return "def rnn_bptt(x, targets, h0, params):\n" + prologue + body


MUTANTS = [
    Mutant(
        "rnn.rnn_bptt",
        "backward loop stops before the first step",
        _bptt(
            [
                ("for t in reversed(range(T)):", "for t in reversed(range(1, T)):"),
                ("torch.empty_like(hs)", "torch.zeros_like(hs)"),
            ]
        ),
        wrong="x = 0",
    ),
    # --- rnn_cell
    FromTable("rnn.rnn_cell", "W_xh and W_hh swapped", "W_xh and W_hh swapped"),
    FromTable("rnn.rnn_cell", "recurrent weight not transposed", "W_hh not transposed"),
    FromTable("rnn.rnn_cell", "forgets the tanh", "no tanh"),
    Mutant(
        "rnn.rnn_cell",
        "uses torch.rnn_tanh_cell (forbidden)",
        """
def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    return torch.rnn_tanh_cell(x, h_prev, W_xh, W_hh, b_h, torch.zeros_like(b_h))
""",
    ),
    Mutant(
        "rnn.rnn_cell",
        "tanh closed after the input term",
        """
def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    return torch.tanh(x @ W_xh.T) + h_prev @ W_hh.T + b_h
""",
        hint="tanh is closed too early: it is applied to x @",
    ),
    # --- rnn_forward
    FromTable("rnn.rnn_forward", "every step restarts from h0", "hidden state not carried"),
    FromTable("rnn.rnn_forward", "returns h0 too", "includes h0"),
    Mutant(
        "rnn.rnn_forward",
        "writes the running state into h0 (in place)",
        """
def rnn_forward(x, h0, W_xh, W_hh, b_h):
    h, hs = h0, []
    for t in range(x.shape[1]):
        h[:] = rnn_cell(x[:, t], h, W_xh, W_hh, b_h)
        hs.append(h.clone())
    return torch.stack(hs, dim=1)
""",
    ),
    Mutant(
        "rnn.rnn_forward",
        "uses nn.RNN (forbidden)",
        """
def rnn_forward(x, h0, W_xh, W_hh, b_h):
    H, D = W_xh.shape
    rnn = torch.nn.RNN(D, H, batch_first=True).to(device=x.device, dtype=x.dtype)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(W_xh)
        rnn.weight_hh_l0.copy_(W_hh)
        rnn.bias_ih_l0.copy_(b_h)
        rnn.bias_hh_l0.zero_()
        return rnn(x, h0.unsqueeze(0))[0].clone()
""",
    ),
    # --- softmax_cross_entropy
    Mutant(
        "rnn.softmax_cross_entropy",
        "the maximum taken over the batch",
        """
def softmax_cross_entropy(logits, targets):
    shifted = logits - logits.max(dim=0, keepdim=True).values
    log_z = torch.log(torch.exp(shifted).sum(dim=1))
    return (log_z - shifted.gather(1, targets.unsqueeze(1)).squeeze(1)).mean()
""",
        hint="max is taken along dim 0 where dim 1 belongs",
        # with N = 1 the logits shift to 0 and the loss is the one of logits = 0: a coincidence
        wrong="logits = 0",
    ),
    FromTable(
        "rnn.softmax_cross_entropy",
        "naive exp, no max subtraction",
        "no max subtraction / log-sum-exp",
        form="log_of_sum_of_exp",
    ),
    FromTable(
        "rnn.softmax_cross_entropy",
        "log of a (stable) softmax",
        "no max subtraction / log-sum-exp",
        form="log_of_softmax",
    ),
    FromTable("rnn.softmax_cross_entropy", "sum instead of mean", "sum instead of mean"),
    Mutant(
        "rnn.softmax_cross_entropy",
        "calls F.cross_entropy (forbidden)",
        """
def softmax_cross_entropy(logits, targets):
    return F.cross_entropy(logits, targets)
""",
    ),
    # --- rnn_bptt
    FromTable(
        "rnn.rnn_bptt",
        "mean over time (loss and gradients T times too small)",
        "mean over time instead of sum (loss off by a factor T)",
    ),
    FromTable("rnn.rnn_bptt", "tanh derivative written as h_t", "tanh derivative written as h_t"),
    FromTable("rnn.rnn_bptt", "h0 gradient left at zero", "h0 gradient left at zero"),
    FromTable("rnn.rnn_bptt", "grads without the h0 key", "h0 gradient missing"),
    FromTable("rnn.rnn_bptt", "W_hh gradient from h_t", "W_hh gradient uses h_t instead of h_{t-1}"),
    Mutant(
        "rnn.rnn_bptt",
        "writes the gradients into params (grads = params)",
        _bptt(
            [
                ("    grads = {\n", "    grads = params\n    grads.update({\n"),
                ('"h0": dh_next,\n    }', '"h0": dh_next,\n    })'),
            ]
        ),
    ),
    Mutant(
        "rnn.rnn_bptt",
        "gradients by torch.autograd.grad (forbidden)",
        """
def rnn_bptt(x, targets, h0, params):
    B, T, _ = x.shape
    leaves = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    leaves["h0"] = h0.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        h, loss = leaves["h0"], 0.0
        for t in range(T):
            h = torch.tanh(x[:, t] @ leaves["W_xh"].T + h @ leaves["W_hh"].T + leaves["b_h"])
            o = h @ leaves["W_hy"].T + leaves["b_y"]
            loss = loss + F.log_softmax(o, dim=-1).gather(1, targets[:, t:t + 1]).sum() * (-1.0 / B)
        keys = list(leaves)
        grads = torch.autograd.grad(loss, [leaves[k] for k in keys])
    return loss.detach(), {k: g.detach() for k, g in zip(keys, grads)}
""",
    ),
    Mutant(
        "rnn.rnn_bptt",
        "gradients by loss.backward() (forbidden)",
        """
def rnn_bptt(x, targets, h0, params):
    B, T, _ = x.shape
    C = params["W_hy"].shape[0]
    leaves = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    leaves["h0"] = h0.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        hs = rnn_forward(x, leaves["h0"], leaves["W_xh"], leaves["W_hh"], leaves["b_h"])
        logits = hs @ leaves["W_hy"].T + leaves["b_y"]
        loss = -F.log_softmax(logits, dim=-1).gather(2, targets.unsqueeze(-1)).sum() / B
        loss.backward()
    return loss.detach(), {k: v.grad.detach() for k, v in leaves.items()}
""",
    ),
    Mutant(
        "rnn.rnn_bptt",
        "by hand, but a leftover requires_grad_() (forbidden)",
        _bptt(prologue="    x = x.detach().clone().requires_grad_()\n"),
    ),
    # --- truncated_bptt
    FromTable("rnn.truncated_bptt", "each chunk restarts from h0", "hidden state not carried across chunks"),
    FromTable("rnn.truncated_bptt", "h0 gradient summed over chunks", "h0 gradient summed over every chunk"),
    Mutant(
        "rnn.truncated_bptt",
        "drops the last, shorter chunk",
        """
def truncated_bptt(x, targets, h0, params, chunk):
    T = x.shape[1]
    n = max(T // chunk, 1)
    size = min(chunk, T)
    hs = rnn_forward(x, h0, params["W_xh"], params["W_hh"], params["b_h"])
    loss, grads = None, None
    for c in range(n):
        start = c * size
        h_start = h0 if start == 0 else hs[:, start - 1]
        loss_c, grads_c = rnn_bptt(x[:, start:start + size], targets[:, start:start + size], h_start, params)
        if grads is None:
            loss, grads = loss_c, grads_c
        else:
            loss = loss + loss_c
            grads = {k: g if k == "h0" else g + grads_c[k] for k, g in grads.items()}
    return loss, grads, hs[:, n * size - 1].clone()
""",
        hint="partial chunk",
    ),
    FromTable("rnn.truncated_bptt", "no truncation at all (full BPTT)", "gradient not cut (full BPTT)"),
    Mutant(
        "rnn.truncated_bptt",
        "autograd per chunk with detach (forbidden)",
        """
def truncated_bptt(x, targets, h0, params, chunk):
    B, T, _ = x.shape
    leaves = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    h_first = h0.detach().clone().requires_grad_(True)
    h, total = h_first, 0.0
    with torch.enable_grad():
        for start in range(0, T, chunk):
            loss_c = 0.0
            for t in range(start, min(start + chunk, T)):
                h = torch.tanh(x[:, t] @ leaves["W_xh"].T + h @ leaves["W_hh"].T + leaves["b_h"])
                o = h @ leaves["W_hy"].T + leaves["b_y"]
                loss_c = loss_c - F.log_softmax(o, dim=-1).gather(1, targets[:, t:t + 1]).sum() / B
            loss_c.backward()
            total = total + loss_c.detach()
            h = h.detach()
    grads = {k: v.grad.detach() for k, v in leaves.items()}
    grads["h0"] = h_first.grad.detach()
    return total, grads, h.clone()
""",
    ),
    # --- birnn_forward
    Mutant(
        "rnn.birnn_forward",
        "the backward direction flips the batch axis",
        """
def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    fwd = rnn_forward(x, h0_fwd, params_fwd["W_xh"], params_fwd["W_hh"], params_fwd["b_h"])
    bwd = rnn_forward(x.flip(0), h0_bwd, params_bwd["W_xh"], params_bwd["W_hh"], params_bwd["b_h"])
    return torch.cat([fwd, bwd.flip(0)], dim=-1)
""",
        hint="every flip is taken along dim 0 where dim 1 belongs",
    ),
    FromTable(
        "rnn.birnn_forward",
        "backward outputs left in reversed time",
        "backward direction not re-reversed (position misaligned)",
    ),
    FromTable("rnn.birnn_forward", "[backward, forward] order", "directions concatenated in the wrong order"),
    FromTable("rnn.birnn_forward", "backward RNN never reverses", "backward RNN reads left to right"),
    # --- greedy_decode
    FromTable("rnn.greedy_decode", "returns the start token too", "includes the start token"),
    FromTable("rnn.greedy_decode", "always feeds the start token", "generated token not fed back"),
    FromTable("rnn.greedy_decode", "feeds the hidden state as the next input", "hidden state fed as the next input"),
    Mutant(
        "rnn.greedy_decode",
        "uses nn.RNNCell (forbidden)",
        """
def greedy_decode(params, embedding, h0, start_token, steps):
    H, D = params["W_xh"].shape
    cell = torch.nn.RNNCell(D, H).to(device=h0.device, dtype=h0.dtype)
    with torch.no_grad():
        cell.weight_ih.copy_(params["W_xh"])
        cell.weight_hh.copy_(params["W_hh"])
        cell.bias_ih.copy_(params["b_h"])
        cell.bias_hh.zero_()
        tokens = torch.empty((h0.shape[0], steps), dtype=torch.int64, device=h0.device)
        h, token = h0, start_token
        for s in range(steps):
            h = cell(embedding[token], h)
            token = torch.argmax(h @ params["W_hy"].T + params["b_y"], dim=-1)
            tokens[:, s] = token
    return tokens
""",
    ),
]

ALTERNATIVES = [
    Alternative(
        "rnn.rnn_cell",
        "the terms summed in another order, the bias first",
        """
def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    return torch.tanh(b_h + h_prev @ W_hh.T + x @ W_xh.T)
""",
    ),
    Alternative(
        "rnn.rnn_cell",
        "one matmul on the concatenation [x, h]",
        """
def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    W = torch.cat([W_xh, W_hh], dim=1)
    return torch.tanh(torch.addmm(b_h, torch.cat([x, h_prev], dim=1), W.T))
""",
    ),
    Alternative(
        "rnn.rnn_forward",
        "inlined cell, input projection hoisted, preallocated output",
        """
def rnn_forward(x, h0, W_xh, W_hh, b_h):
    B, T, _ = x.shape
    xw = torch.einsum("btd,hd->bth", x, W_xh) + b_h
    hs = x.new_empty(B, T, h0.shape[1])
    h = h0
    for t in range(T):
        h = torch.tanh(xw[:, t] + h @ W_hh.T)
        hs[:, t] = h
    return hs
""",
    ),
    Alternative(
        "rnn.softmax_cross_entropy",
        "torch.logsumexp and a one-hot dot product",
        """
def softmax_cross_entropy(logits, targets):
    onehot = torch.zeros_like(logits).scatter_(1, targets.view(-1, 1), 1.0)
    return torch.mean(torch.logsumexp(logits, dim=1) - (onehot * logits).sum(dim=1))
""",
    ),
    Alternative(
        "rnn.rnn_bptt",
        "per-step loop, nothing borrowed, log_softmax, gradients accumulated",
        """
def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h = params["W_xh"], params["W_hh"], params["b_h"]
    W_hy, b_y = params["W_hy"], params["b_y"]
    B, T, _ = x.shape
    hs, log_ps = [h0], []
    for t in range(T):
        hs.append(torch.tanh(x[:, t] @ W_xh.T + hs[-1] @ W_hh.T + b_h))
        log_ps.append(F.log_softmax(hs[-1] @ W_hy.T + b_y, dim=-1))
    loss = sum(-lp.gather(1, targets[:, t:t + 1]).sum() for t, lp in enumerate(log_ps)) / B
    grads = {k: torch.zeros_like(v) for k, v in params.items()}
    dh_next = torch.zeros_like(h0)
    for t in range(T - 1, -1, -1):
        do = log_ps[t].exp()
        do[torch.arange(B, device=x.device), targets[:, t]] -= 1
        do = do / B
        grads["W_hy"] += do.T @ hs[t + 1]
        grads["b_y"] += do.sum(0)
        da = (do @ W_hy + dh_next) * (1 - hs[t + 1] * hs[t + 1])
        grads["W_xh"] += da.T @ x[:, t]
        grads["W_hh"] += da.T @ hs[t]
        grads["b_h"] += da.sum(0)
        dh_next = da @ W_hh
    grads["h0"] = dh_next
    return loss, grads
""",
    ),
    Alternative(
        "rnn.truncated_bptt",
        "carries h chunk by chunk with its own forward passes",
        """
def truncated_bptt(x, targets, h0, params, chunk):
    T = x.shape[1]
    h = h0
    total, grads = 0.0, {}
    for start in range(0, T, chunk):
        stop = min(start + chunk, T)
        loss_c, grads_c = rnn_bptt(x[:, start:stop], targets[:, start:stop], h, params)
        total = total + loss_c
        for k, g in grads_c.items():
            if k == "h0":
                grads.setdefault("h0", g)
            else:
                grads[k] = grads[k] + g if k in grads else g
        h = rnn_forward(x[:, start:stop], h, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
    return total, grads, h
""",
    ),
    Alternative(
        "rnn.birnn_forward",
        "reverse with an index tensor",
        """
def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    rev = torch.arange(x.shape[1] - 1, -1, -1, device=x.device)
    fwd = rnn_forward(x, h0_fwd, **params_fwd)
    bwd = rnn_forward(x[:, rev], h0_bwd, **params_bwd)[:, rev]
    return torch.cat((fwd, bwd), 2)
""",
    ),
    Alternative(
        "rnn.greedy_decode",
        "one-hot times embedding, tokens collected in a list",
        """
def greedy_decode(params, embedding, h0, start_token, steps):
    V = embedding.shape[0]
    h, token, out = h0, start_token, []
    for _ in range(steps):
        x = F.one_hot(token, V).to(embedding.dtype) @ embedding
        h = rnn_cell(x, h, params["W_xh"], params["W_hh"], params["b_h"])
        logits = F.linear(h, params["W_hy"], params["b_y"])
        token = logits.argmax(-1)
        out.append(token)
    return torch.stack(out, 1) if out else torch.zeros(h0.shape[0], 0, dtype=torch.long, device=h0.device)
""",
    ),
]
