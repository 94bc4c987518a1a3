"""Reference RNN functions against PyTorch: nn.RNNCell, nn.RNN (uni- and bidirectional),
F.cross_entropy, autograd (for the by-hand BPTT; autograd is used here in the test only) and a
hand-written greedy loop over nn.RNNCell. Plus purity, large logits, and the calls by name the
grader relies on when it swaps callees.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from solutions import rnn
from tests._helpers import assert_close

# (B, T, D, H, C): B=1 and T=1 included
SHAPES = [(1, 1, 3, 4, 5), (2, 5, 3, 4, 6), (3, 7, 2, 5, 4), (1, 9, 4, 3, 3)]
SHAPE_IDS = [f"B{b}T{t}D{d}H{h}C{c}" for b, t, d, h, c in SHAPES]
KEYS = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")


@pytest.fixture(autouse=True)
def _no_tf32(monkeypatch):
    # cuDNN's RNN may use TF32 for float32 on Ampere+ (~1e-3 error); compare true float32
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)


def _randn(shape, gen, device, dtype, scale=1.0):
    x = scale * torch.randn(shape, generator=gen, dtype=torch.float64)
    return x.to(device=device, dtype=dtype)


def _params(D, H, C, gen, device, dtype):
    # weights ~ 0.5/sqrt(fan_in): tanh neither saturated nor linear, gradients of order 1
    return {
        "W_xh": _randn((H, D), gen, device, dtype, 0.8 / D**0.5),
        "W_hh": _randn((H, H), gen, device, dtype, 0.8 / H**0.5),
        "b_h": _randn((H,), gen, device, dtype, 0.3),
        "W_hy": _randn((C, H), gen, device, dtype, 1.0 / H**0.5),
        "b_y": _randn((C,), gen, device, dtype, 0.3),
    }


def _problem(shape, gen, device, dtype):
    B, T, D, H, C = shape
    x = _randn((B, T, D), gen, device, dtype)
    targets = torch.randint(C, (B, T), generator=gen).to(device)
    h0 = _randn((B, H), gen, device, dtype, 0.5)
    return x, targets, h0, _params(D, H, C, gen, device, dtype)


def _split_bias(b_h, gen):
    """Two biases with bias_ih + bias_hh == b_h, as PyTorch's RNN modules hold them."""
    bias_ih = _randn(b_h.shape, gen, b_h.device, b_h.dtype)
    return bias_ih, b_h - bias_ih


def _nn_rnn(p, gen, device, dtype, bidirectional=False, p_rev=None):
    H, D = p["W_xh"].shape
    m = torch.nn.RNN(D, H, batch_first=True, bidirectional=bidirectional)
    m = m.to(device=device, dtype=dtype)
    with torch.no_grad():
        for suffix, q in [("l0", p)] + ([("l0_reverse", p_rev)] if bidirectional else []):
            bias_ih, bias_hh = _split_bias(q["b_h"], gen)
            getattr(m, f"weight_ih_{suffix}").copy_(q["W_xh"])
            getattr(m, f"weight_hh_{suffix}").copy_(q["W_hh"])
            getattr(m, f"bias_ih_{suffix}").copy_(bias_ih)
            getattr(m, f"bias_hh_{suffix}").copy_(bias_hh)
    return m


def _nn_cell(p, gen, device, dtype):
    H, D = p["W_xh"].shape
    cell = torch.nn.RNNCell(D, H).to(device=device, dtype=dtype)
    with torch.no_grad():
        bias_ih, bias_hh = _split_bias(p["b_h"], gen)
        cell.weight_ih.copy_(p["W_xh"])
        cell.weight_hh.copy_(p["W_hh"])
        cell.bias_ih.copy_(bias_ih)
        cell.bias_hh.copy_(bias_hh)
    return cell


def _autograd_tbptt(x, targets, h0, p, chunk, gen):
    """Truncated BPTT with autograd and nn.RNN: detach at each cut, accumulate per-chunk grads.
    chunk >= T is full BPTT."""
    B, T, _ = x.shape
    m = _nn_rnn(p, gen, x.device, x.dtype)
    W_hy = p["W_hy"].clone().requires_grad_(True)
    b_y = p["b_y"].clone().requires_grad_(True)
    h0_leaf = h0.clone().requires_grad_(True)
    h, total = h0_leaf, 0.0
    for s in range(0, T, chunk):
        hs, h_n = m(x[:, s : s + chunk], h.unsqueeze(0))
        logits = hs @ W_hy.T + b_y
        y = targets[:, s : s + chunk].reshape(-1)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y, reduction="sum") / B
        loss.backward()
        total = total + loss.detach()
        h = h_n[0].detach()  # the state flows on, the gradient stops here
    grads = {
        "W_xh": m.weight_ih_l0.grad,
        "W_hh": m.weight_hh_l0.grad,
        "b_h": m.bias_ih_l0.grad,
        "W_hy": W_hy.grad,
        "b_y": b_y.grad,
        "h0": h0_leaf.grad,
    }
    assert_close(m.bias_ih_l0.grad, m.bias_hh_l0.grad, x.dtype)  # b_h = bias_ih + bias_hh
    return total, grads, h


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _tensors(v)]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in _tensors(v)]
    return []


def _same_memory(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


# ----------------------------------------------------------------------------- forward pieces


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_rnn_cell_matches_nn_rnncell(shape, device, dtype, gen):
    x, _, h0, p = _problem(shape, gen, device, dtype)
    cell = _nn_cell(p, gen, device, dtype)
    h = rnn.rnn_cell(x[:, 0], h0, p["W_xh"], p["W_hh"], p["b_h"])
    with torch.no_grad():
        assert_close(h, cell(x[:, 0], h0), dtype)
    assert h.shape == h0.shape and h.dtype == dtype and h.device == x.device


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_rnn_forward_matches_nn_rnn(shape, device, dtype, gen):
    x, _, h0, p = _problem(shape, gen, device, dtype)
    hs = rnn.rnn_forward(x, h0, p["W_xh"], p["W_hh"], p["b_h"])
    with torch.no_grad():
        ref, h_n = _nn_rnn(p, gen, device, dtype)(x, h0.unsqueeze(0))
    assert hs.shape == ref.shape and hs.dtype == dtype and hs.device == x.device
    assert_close(hs, ref, dtype)
    assert_close(hs[:, -1], h_n[0], dtype)


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_birnn_forward_matches_bidirectional_nn_rnn(shape, device, dtype, gen):
    x, _, h0_fwd, p_fwd = _problem(shape, gen, device, dtype)
    B, T, D, H, C = shape
    h0_bwd = _randn((B, H), gen, device, dtype, 0.5)
    p_bwd = _params(D, H, C, gen, device, dtype)
    hs = rnn.birnn_forward(x, h0_fwd, h0_bwd, p_fwd, p_bwd)
    with torch.no_grad():
        m = _nn_rnn(p_fwd, gen, device, dtype, bidirectional=True, p_rev=p_bwd)
        ref, h_n = m(x, torch.stack([h0_fwd, h0_bwd]))
    assert hs.shape == (B, T, 2 * H) and hs.dtype == dtype and hs.device == x.device
    assert_close(hs, ref, dtype)
    assert_close(hs[:, -1, :H], h_n[0], dtype)  # forward ends at T, backward at position 0
    assert_close(hs[:, 0, H:], h_n[1], dtype)


# ----------------------------------------------------------------------------- loss


@pytest.mark.parametrize("N,C", [(1, 1), (1, 5), (6, 3), (40, 17)])
@pytest.mark.parametrize("scale", [1.0, 1e4], ids=["unit", "1e4"])
def test_softmax_cross_entropy_matches_F(N, C, scale, device, dtype, gen):
    logits = _randn((N, C), gen, device, dtype, scale)
    targets = torch.randint(C, (N,), generator=gen).to(device)
    loss = rnn.softmax_cross_entropy(logits, targets)
    ref = F.cross_entropy(logits, targets)
    assert loss.dim() == 0 and loss.dtype == dtype and loss.device == logits.device
    assert torch.isfinite(loss)
    assert_close(loss, ref, dtype, rtol=1e-10 if dtype == torch.float64 else 1e-5)


def test_softmax_cross_entropy_at_1e4_known_values(device, dtype):
    logits = torch.tensor([[1e4, 0.0, -1e4], [1e4, 1e4, 1e4], [-1e4, -1e4, 1e4]], device=device, dtype=dtype)
    targets = torch.tensor([1, 2, 2], device=device)
    # row 0: lse = 1e4 (exactly, in floating point), CE = 1e4; row 1: log 3; row 2: 0
    expected = torch.tensor((1e4 + math.log(3.0) + 0.0) / 3, dtype=dtype)
    loss = rnn.softmax_cross_entropy(logits, targets)
    assert torch.isfinite(loss)
    assert_close(loss.cpu(), expected, dtype)


# ----------------------------------------------------------------------------- BPTT


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_rnn_bptt_matches_autograd(shape, device, dtype, gen):
    x, targets, h0, p = _problem(shape, gen, device, dtype)
    loss, grads = rnn.rnn_bptt(x, targets, h0, p)
    ref_loss, ref_grads, _ = _autograd_tbptt(x, targets, h0, p, chunk=shape[1], gen=gen)
    assert loss.dim() == 0 and loss.dtype == dtype
    assert_close(loss, ref_loss, dtype)
    assert set(grads) == set(KEYS) | {"h0"}
    for k, g in grads.items():
        assert g.shape == ref_grads[k].shape and g.dtype == dtype and g.device == x.device, k
        assert_close(g, ref_grads[k], dtype, msg=lambda m, k=k: f"grad {k}: {m}")


@pytest.mark.parametrize("shape", SHAPES[:3], ids=SHAPE_IDS[:3])
@pytest.mark.parametrize("chunk_of", ["1", "2", "3", "T", "T+3"])
def test_truncated_bptt_matches_autograd_with_detach(shape, chunk_of, device, dtype, gen):
    T = shape[1]
    chunk = {"1": 1, "2": 2, "3": 3, "T": T, "T+3": T + 3}[chunk_of]  # 3 does not divide 5 or 7
    x, targets, h0, p = _problem(shape, gen, device, dtype)
    loss, grads, h_last = rnn.truncated_bptt(x, targets, h0, p, chunk)
    ref_loss, ref_grads, ref_h = _autograd_tbptt(x, targets, h0, p, chunk, gen)
    assert_close(loss, ref_loss, dtype)
    assert set(grads) == set(KEYS) | {"h0"}
    for k, g in grads.items():
        assert g.shape == ref_grads[k].shape and g.dtype == dtype and g.device == x.device, k
        assert_close(g, ref_grads[k], dtype, msg=lambda m, k=k: f"chunk {chunk} grad {k}: {m}")
    assert h_last.shape == h0.shape and h_last.dtype == dtype
    assert_close(h_last, ref_h, dtype)
    # the loss is the full loss whatever the chunking; with chunk >= T it is full BPTT
    full_loss, full_grads = rnn.rnn_bptt(x, targets, h0, p)
    assert_close(loss, full_loss, dtype)
    if chunk >= T:
        for k in full_grads:
            assert_close(grads[k], full_grads[k], dtype)


def test_truncation_really_cuts_the_gradient(gen):
    x, targets, h0, p = _problem((2, 6, 3, 4, 5), gen, "cpu", torch.float64)
    _, full = rnn.rnn_bptt(x, targets, h0, p)
    _, cut, _ = rnn.truncated_bptt(x, targets, h0, p, 2)
    assert not torch.allclose(full["W_hh"], cut["W_hh"], rtol=1e-3)
    assert not torch.allclose(full["h0"], cut["h0"], rtol=1e-3)  # h0 sees only the first chunk
    _, first, _ = rnn.truncated_bptt(x[:, :2], targets[:, :2], h0, p, 2)
    assert_close(cut["h0"], first["h0"], torch.float64)


def test_bptt_uses_no_autograd(monkeypatch, gen):
    def forbidden(*args, **kwargs):
        raise AssertionError("autograd called")

    monkeypatch.setattr(torch.Tensor, "backward", forbidden)
    monkeypatch.setattr(torch.autograd, "backward", forbidden)
    monkeypatch.setattr(torch.autograd, "grad", forbidden)
    x, targets, h0, p = _problem((2, 4, 3, 4, 5), gen, "cpu", torch.float64)
    with torch.no_grad():  # autograd-based code would find no graph here
        loss, grads = rnn.rnn_bptt(x, targets, h0, p)
        loss_t, grads_t, _ = rnn.truncated_bptt(x, targets, h0, p, 3)
    assert all(torch.isfinite(g).all() for g in [loss, loss_t, *grads.values(), *grads_t.values()])
    assert grads["W_hh"].abs().sum() > 0


# ----------------------------------------------------------------------------- generation


def _hand_greedy(p, embedding, h0, start, steps, gen):
    """The contract's loop written with nn.RNNCell and torch.argmax."""
    cell = _nn_cell(p, gen, h0.device, h0.dtype)
    out, h, tok = [], h0, start
    with torch.no_grad():
        for _ in range(steps):
            h = cell(embedding[tok], h)
            tok = torch.argmax(h @ p["W_hy"].T + p["b_y"], dim=-1)
            out.append(tok)
    return torch.stack(out, dim=1)


@pytest.mark.parametrize("B,V,D,H,steps", [(1, 5, 3, 4, 1), (3, 7, 4, 6, 12), (2, 3, 2, 3, 8)])
def test_greedy_decode_matches_hand_loop(B, V, D, H, steps, device, dtype, gen):
    p = _params(D, H, V, gen, device, dtype)
    p["W_hy"] = p["W_hy"] * 3  # well-separated logits: argmax is not decided by rounding
    embedding = _randn((V, D), gen, device, dtype)
    h0 = _randn((B, H), gen, device, dtype, 0.5)
    start = torch.randint(V, (B,), generator=gen).to(device)
    tokens = rnn.greedy_decode(p, embedding, h0, start, steps)
    assert tokens.shape == (B, steps) and tokens.dtype == torch.int64 and tokens.device == h0.device
    assert torch.equal(tokens, _hand_greedy(p, embedding, h0, start, steps, gen))


def test_greedy_decode_ties_lowest_index_and_zero_steps(device, dtype, gen):
    p = _params(3, 4, 4, gen, device, dtype)
    p["W_hy"] = torch.zeros_like(p["W_hy"])
    p["b_y"] = torch.tensor([1.0, 3.0, 3.0, 0.0], device=device, dtype=dtype)  # tie between 1 and 2
    embedding = _randn((4, 3), gen, device, dtype)
    h0 = torch.zeros(2, 4, device=device, dtype=dtype)
    start = torch.tensor([0, 3], device=device)
    tokens = rnn.greedy_decode(p, embedding, h0, start, 5)
    assert torch.equal(tokens.cpu(), torch.ones(2, 5, dtype=torch.int64))
    empty = rnn.greedy_decode(p, embedding, h0, start, 0)
    assert empty.shape == (2, 0) and empty.dtype == torch.int64


# ----------------------------------------------------------------------------- purity, calls


def _calls(x, targets, h0, p, gen):
    B, T, D = x.shape
    H, C = h0.shape[1], p["W_hy"].shape[0]
    p_bwd = _params(D, H, C, gen, x.device, x.dtype)
    h0_bwd = _randn((B, H), gen, x.device, x.dtype)
    logits = _randn((B * T, C), gen, x.device, x.dtype)
    emb = _randn((C, D), gen, x.device, x.dtype)
    start = targets[:, 0].clone()
    return {
        "rnn_cell": (x[:, 0], h0, p["W_xh"], p["W_hh"], p["b_h"]),
        "rnn_forward": (x, h0, p["W_xh"], p["W_hh"], p["b_h"]),
        "softmax_cross_entropy": (logits, targets.reshape(-1)),
        "rnn_bptt": (x, targets, h0, p),
        "truncated_bptt": (x, targets, h0, p, 2),
        "birnn_forward": (x, h0, h0_bwd, p, p_bwd),
        "greedy_decode": (p, emb, h0, start, 3),
    }


@pytest.mark.parametrize(
    "name",
    [
        "rnn_cell",
        "rnn_forward",
        "softmax_cross_entropy",
        "rnn_bptt",
        "truncated_bptt",
        "birnn_forward",
        "greedy_decode",
    ],
)
def test_pure_and_preserves_dtype_device(name, device, dtype, gen):
    x, targets, h0, p = _problem((2, 4, 3, 4, 5), gen, device, dtype)
    args = _calls(x, targets, h0, p, gen)[name]
    inputs = _tensors(args)
    snapshots = [t.clone() for t in inputs]
    out = getattr(rnn, name)(*args)
    for t, s in zip(inputs, snapshots):
        assert torch.equal(t, s), f"{name} modified an argument"
    for o in _tensors(out):
        assert o.device == x.device
        assert o.dtype == (torch.int64 if name == "greedy_decode" else dtype)
        assert not any(_same_memory(o, t) for t in inputs), f"{name} returned an argument or a view"


@pytest.mark.parametrize(
    "caller,callee,expected",
    [
        ("rnn_forward", "rnn_cell", 4),  # once per time step
        ("greedy_decode", "rnn_cell", 3),  # once per generated token
        ("birnn_forward", "rnn_forward", 2),  # once per direction
        ("truncated_bptt", "rnn_bptt", 2),  # once per chunk (T=4, chunk=2)
        ("rnn_bptt", "rnn_forward", 1),
        ("rnn_bptt", "softmax_cross_entropy", 1),
    ],
)
def test_calls_contract_functions_by_name(caller, callee, expected, monkeypatch, gen):
    """The grader swaps callees for correct ones; that only works through module-level names."""
    x, targets, h0, p = _problem((2, 4, 3, 4, 5), gen, "cpu", torch.float64)
    args = _calls(x, targets, h0, p, gen)[caller]
    original, count = getattr(rnn, callee), []

    def counted(*a, **kw):
        count.append(1)
        return original(*a, **kw)

    monkeypatch.setattr(rnn, callee, counted)
    getattr(rnn, caller)(*args)
    assert len(count) == expected


# --- the lab ---------------------------------------------------------------------------------------


def _char_params(gen, V, H):
    return {
        "W_xh": 0.5 * torch.randn(H, V, generator=gen, dtype=torch.float64),
        "W_hh": 0.5 * torch.randn(H, H, generator=gen, dtype=torch.float64),
        "b_h": 0.1 * torch.randn(H, generator=gen, dtype=torch.float64),
        "W_hy": 0.5 * torch.randn(V, H, generator=gen, dtype=torch.float64),
        "b_y": 0.1 * torch.randn(V, generator=gen, dtype=torch.float64),
    }


@pytest.mark.slow  # torch.optim's first step imports torch._dynamo: 2-4 s once per process
@pytest.mark.parametrize("clip", [0.3, 1e6], ids=["clipping", "no clipping"])
def test_train_char_rnn_matches_autograd_adam_and_clip_grad_norm(gen, clip):
    """The binding protocol, written with autograd, torch.optim.Adam and clip_grad_norm_ on a
    state detached at every window: 11 steps over 4 windows (a wrap to w = 0 included)."""
    V, H, B, S, steps = 5, 4, 3, 3, 11
    tokens = torch.randint(0, V, (B * (4 * S + 1) + 2,), generator=gen)
    params = _char_params(gen, V, H)
    trained, losses = rnn.train_char_rnn(tokens, params, steps, B, S, lr=0.03, clip=clip)
    leaves = {k: v.clone().requires_grad_() for k, v in params.items()}
    opt = torch.optim.Adam(list(leaves.values()), lr=0.03)
    L = tokens.shape[0] // B
    rows, windows = tokens[: B * L].reshape(B, L), (L - 1) // S
    h, expected = torch.zeros(B, H, dtype=torch.float64), []
    for s in range(steps):
        w = s % windows
        h = torch.zeros(B, H, dtype=torch.float64) if w == 0 else h.detach()
        loss = 0.0
        for t in range(w * S, (w + 1) * S):
            h = torch.tanh(F.one_hot(rows[:, t], V).double() @ leaves["W_xh"].T + h @ leaves["W_hh"].T + leaves["b_h"])
            loss = loss + F.cross_entropy(h @ leaves["W_hy"].T + leaves["b_y"], rows[:, t + 1], reduction="sum") / B
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(leaves.values()), clip)
        opt.step()
        expected.append(loss.item() / S)
    assert_close(losses, torch.tensor(expected, dtype=torch.float64))
    for k in params:
        assert_close(trained[k], leaves[k].detach())


def test_sample_chars_matches_a_loop_of_rnn_cell_softmax_and_multinomial(gen):
    V, H, B, steps, temperature = 6, 5, 4, 9, 0.8
    params = _char_params(gen, V, H)
    start = torch.randint(0, V, (B,), generator=gen)
    tokens = rnn.sample_chars(params, start, steps, temperature, torch.Generator().manual_seed(3))
    cell = torch.nn.RNNCell(V, H).double()
    with torch.no_grad():
        cell.weight_ih.copy_(params["W_xh"])
        cell.weight_hh.copy_(params["W_hh"])
        cell.bias_ih.copy_(params["b_h"])
        cell.bias_hh.zero_()
    g, h, token, out = torch.Generator().manual_seed(3), torch.zeros(B, H, dtype=torch.float64), start, []
    with torch.no_grad():
        for _ in range(steps):
            h = cell(F.one_hot(token, V).double(), h)
            token = torch.multinomial(
                torch.softmax((h @ params["W_hy"].T + params["b_y"]) / temperature, -1), 1, generator=g
            )[:, 0]
            out.append(token)
    assert torch.equal(tokens, torch.stack(out, 1))
