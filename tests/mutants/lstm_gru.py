"""Known-wrong and alternative-correct LSTM/GRU functions (see tests/mutants/__init__.py)."""

from tests.mutants import Alternative, FromTable, Mutant

MUTANTS = [
    FromTable("lstm_gru.lstm_cell", "gate order i, f, o, g", "gate order i, f, o, g"),
    FromTable("lstm_gru.lstm_cell", "forget gate without its bias", "forget-gate bias dropped"),
    FromTable("lstm_gru.lstm_cell", "tanh on the cell sum, then again for h", "tanh applied to the cell state twice"),
    FromTable("lstm_gru.lstm_cell", "h = o * c", "h = o * c (tanh missing)"),
    Mutant(
        "lstm_gru.lstm_cell",
        "updates c_prev in place",
        """
def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = (x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c = c_prev.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))
    return torch.sigmoid(o) * torch.tanh(c), c.clone()
""",
    ),
    Mutant(
        "lstm_gru.lstm_forward",
        "steps with torch.lstm_cell (forbidden)",
        """
def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    h, c = h0, c0
    hs = []
    for t in range(x.shape[1]):
        h, c = torch.lstm_cell(x[:, t], (h, c), W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, dim=1), (h, c)
""",
    ),
    FromTable("lstm_gru.lstm_forward", "starts from zeros instead of h0, c0", "initial state ignored (zeros)"),
    Mutant(
        "lstm_gru.lstm_forward",
        "returns (hs, h_T, c_T) flat",
        """
def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    h, c = h0, c0
    hs = []
    for t in range(x.shape[1]):
        h, c = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, dim=1), h, c
""",
    ),
    FromTable("lstm_gru.lstm_forward", "stores h before the step", "hs shifted by one step (h_0 ... h_{T-1})"),
    FromTable("lstm_gru.gru_cell", "update convention flipped", "update convention flipped (h = z*n + (1-z)*h_prev)"),
    FromTable("lstm_gru.gru_cell", "biases summed first (b_hn outside r)", "b_hn outside the reset gate"),
    Mutant(
        "lstm_gru.gru_forward",
        "steps with torch.gru_cell (forbidden)",
        """
def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h = h0
    hs = []
    for t in range(x.shape[1]):
        h = torch.gru_cell(x[:, t], h, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, dim=1), h
""",
    ),
    FromTable("lstm_gru.gru_forward", "h_T is the first hidden state", "h_T taken from the first step"),
    Mutant(
        "lstm_gru.gru_forward",
        "updates h0 in place",
        """
def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    hs = []
    for t in range(x.shape[1]):
        h0.copy_(gru_cell(x[:, t], h0, W_ih, W_hh, b_ih, b_hh))
        hs.append(h0.clone())
    return torch.stack(hs, dim=1), h0.clone()
""",
    ),
    FromTable(
        "lstm_gru.gru_forward",
        "inlined cell in the notes' form",
        "reset gate applied before W_hn (the notes' form) (in the step)",
    ),
]

ALTERNATIVES = [
    Alternative(
        "lstm_gru.lstm_cell",
        "gate by gate with split weights and einsum",
        """
def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    pre = [torch.einsum("bd,hd->bh", x, Wx) + torch.einsum("bk,hk->bh", h_prev, Wh) + bx + bh
           for Wx, Wh, bx, bh in zip(W_ih.split(H), W_hh.split(H), b_ih.split(H), b_hh.split(H))]
    i, f, o = torch.sigmoid(pre[0]), torch.sigmoid(pre[1]), torch.sigmoid(pre[3])
    c = torch.addcmul(f * c_prev, i, torch.tanh(pre[2]))
    return o * torch.tanh(c), c
""",
    ),
    Alternative(
        "lstm_gru.lstm_forward",
        "preallocated output, input projection hoisted out of the loop",
        """
def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    B, T, _ = x.shape
    H = h0.shape[-1]
    xw = x @ W_ih.T + (b_ih + b_hh)          # (B, T, 4H): every input projection at once
    hs = x.new_empty(B, T, H)
    h, c = h0, c0
    for t in range(T):
        i, f, g, o = (xw[:, t] + h @ W_hh.T).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        hs[:, t] = h
    return hs, (h.clone(), c.clone())
""",
    ),
    Alternative(
        "lstm_gru.gru_cell",
        "torch.lerp for the update and addmm projections",
        """
def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    gi = torch.addmm(b_ih, x, W_ih.T)
    gh = torch.addmm(b_hh, h_prev, W_hh.T)
    H = h_prev.shape[-1]
    r = torch.sigmoid(gi[:, :H] + gh[:, :H])
    z = torch.sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
    n = torch.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    return torch.lerp(n, h_prev, z)
""",
    ),
    Alternative(
        "lstm_gru.gru_forward",
        "iterates over x.unbind(1), h_T sliced from hs",
        """
def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h, out = h0, []
    for x_t in x.unbind(dim=1):
        h = gru_cell(x_t, h, W_ih, W_hh, b_ih, b_hh)
        out.append(h)
    hs = torch.stack(out, dim=1)
    return hs, hs[:, -1].clone()
""",
    ),
]
