"""Public tests of exercises/transformer.py: LayerNorm, the feed-forward network and the blocks.

The block examples use attention weights W_q = W_k = 0, so every query attends equally to every
allowed key: with W_v = W_o = identity, attention returns the mean of the allowed positions. What
is left to compute by hand is LayerNorm of rows of four numbers (``ln_row`` below).
"""

from __future__ import annotations

import math

import pytest
import torch
from _autograd import check_autograd
from _check import call, check_close, check_tensor, randn, unpack
from _labs import BUDGETS_OFF, check_adam_steps, check_budget, lab_test

from exercises import transformer

checks = pytest.mark.checks
FLOATS = pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
T64 = torch.float64
EPS = 1e-5


def t(values, dtype=T64):
    return torch.tensor(values, dtype=dtype)


# --- layer_norm and feed_forward -------------------------------------------------------------------


@checks("transformer.layer_norm")
def test_layer_norm_worked_example():
    # x = [1, 2, 3, 4]: mean 2.5, biased variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25
    # y = (x - 2.5) / sqrt(1.25 + 1e-5) * weight + bias. (The unbiased variance 5/3 would be wrong.)
    # A constant row [3, 3, 3, 3] has variance 0 and normalizes to 0 (eps avoids 0/0): y = bias.
    case = "x=[[1, 2, 3, 4], [3, 3, 3, 3]], weight=[1, 1, 2, 1], bias=[0, 0, 0, 1]"
    y = call(
        "transformer.layer_norm",
        transformer.layer_norm,
        t([[1.0, 2.0, 3.0, 4.0], [3.0, 3.0, 3.0, 3.0]]),
        t([1.0, 1.0, 2.0, 1.0]),
        t([0.0, 0.0, 0.0, 1.0]),
        case=case,
    )
    s = math.sqrt(1.25 + EPS)
    check_close(
        "transformer.layer_norm", y, [[-1.5 / s, -0.5 / s, 2 * 0.5 / s, 1.5 / s + 1], [0.0, 0.0, 0.0, 1.0]], case=case
    )


@checks("transformer.layer_norm")
@FLOATS
def test_layer_norm_shape_and_dtype(dtype):
    gen = torch.Generator().manual_seed(0)
    case = f"x (2, 3, 8), {str(dtype)[6:]}"
    y = call(
        "transformer.layer_norm",
        transformer.layer_norm,
        randn(gen, 2, 3, 8, dtype=dtype),
        randn(gen, 8, dtype=dtype),
        randn(gen, 8, dtype=dtype),
        case=case,
    )
    check_tensor("transformer.layer_norm", y, case=case, shape=(2, 3, 8), dtype=dtype, what="y")


@checks("transformer.feed_forward")
def test_feed_forward_worked_example():
    # x @ W1.T + b1 = [1, -1, 1 - 1] + [0, 0, 0.5] = [1, -1, 0.5] -> relu -> [1, 0, 0.5]
    # [1, 0, 0.5] @ W2.T + b2 = [1 + 0 + 0.5, 0 + 0 - 1] + [0, 1] = [1.5, 0]
    case = "x=[1, -1], E=2, F=3"
    y = call(
        "transformer.feed_forward",
        transformer.feed_forward,
        t([[1.0, -1.0]]),
        t([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
        t([0.0, 0.0, 0.5]),
        t([[1.0, 1.0, 1.0], [0.0, 2.0, -2.0]]),
        t([0.0, 1.0]),
        case=case,
    )
    check_close("transformer.feed_forward", y, [[1.5, 0.0]], case=case)


@checks("transformer.feed_forward")
def test_feed_forward_bias_is_inside_the_relu():
    # E = F = 1: x W1^T = -1, b1 = 2, so relu(x W1^T + b1) = relu(1) = 1 and y = 1 * 1 + 0 = 1.
    # The bias added after the ReLU would give relu(-1) + 2 = 2: a term belongs inside the
    # nonlinearity whenever the formula puts it there.
    case = "x=[-1], W1=[[1]], b1=[2], W2=[[1]], b2=[0]"
    y = call(
        "transformer.feed_forward",
        transformer.feed_forward,
        t([[-1.0]]),
        t([[1.0]]),
        t([2.0]),
        t([[1.0]]),
        t([0.0]),
        case=case,
    )
    check_close("transformer.feed_forward", y, [[1.0]], case=case)


@checks("transformer.feed_forward")
def test_feed_forward_output_is_linear_and_can_be_negative():
    # E = F = 1: relu(x W1^T + b1) = relu(2) = 2, then y = 2 * (-1) + 0 = -2. The ReLU is between
    # the two maps only: one after the second map too would give relu(-2) = 0.
    case = "x=[2], W1=[[1]], b1=[0], W2=[[-1]], b2=[0]"
    y = call(
        "transformer.feed_forward",
        transformer.feed_forward,
        t([[2.0]]),
        t([[1.0]]),
        t([0.0]),
        t([[-1.0]]),
        t([0.0]),
        case=case,
    )
    check_close("transformer.feed_forward", y, [[-2.0]], case=case)


@checks("transformer.feed_forward")
@FLOATS
def test_feed_forward_shape_and_dtype(dtype):
    gen = torch.Generator().manual_seed(1)
    case = f"x (2, 3, 4), F=16, {str(dtype)[6:]}"
    y = call(
        "transformer.feed_forward",
        transformer.feed_forward,
        randn(gen, 2, 3, 4, dtype=dtype),
        randn(gen, 16, 4, dtype=dtype),
        randn(gen, 16, dtype=dtype),
        randn(gen, 4, 16, dtype=dtype),
        randn(gen, 4, dtype=dtype),
        case=case,
    )
    check_tensor("transformer.feed_forward", y, case=case, shape=(2, 3, 4), dtype=dtype, what="y")


# --- the blocks, worked by hand -------------------------------------------------------------------

E = 4
NORMS = {
    "norm1": ([1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]),
    "norm2": ([2.0, 1.0, 1.0, 0.5], [0.0, 1.0, 0.0, 0.0]),
    "norm3": ([1.0, 3.0, 1.0, 1.0], [-1.0, 0.0, 0.0, 0.5]),
}
B2 = [0.5, -0.5, 0.0, 1.0]  # the FFN is relu(z) + B2 (W1 = W2 = identity, b1 = 0)
X = [[1.0, 0.0, 2.0, -1.0], [0.0, 3.0, 1.0, 1.0]]  # T = 2 positions
MEMORY = [[1.0, 1.0, 0.0, 2.0], [3.0, -1.0, 1.0, 0.0]]  # S = 2 encoder outputs


def ln_row(row, norm):
    """LayerNorm of a few numbers, as on paper: subtract the mean, divide by sqrt(biased variance + eps)."""
    weight, bias = NORMS[norm]
    m = sum(row) / len(row)
    var = sum((v - m) ** 2 for v in row) / len(row)
    return [(v - m) / math.sqrt(var + EPS) * w + b for v, w, b in zip(row, weight, bias)]


def ffn_row(row):
    return [max(0.0, v) + b for v, b in zip(row, B2)]


def add(*rows):
    return [sum(vs) for vs in zip(*rows)]


def mean(rows):
    return [sum(vs) / len(rows) for vs in zip(*rows)]


def uniform_attention_params():
    eye, zero = torch.eye(E, dtype=T64), torch.zeros(E, dtype=T64)
    return {
        "W_q": torch.zeros(E, E, dtype=T64),
        "W_k": torch.zeros(E, E, dtype=T64),
        "W_v": eye.clone(),
        "W_o": eye.clone(),
        "b_q": zero.clone(),
        "b_k": zero.clone(),
        "b_v": zero.clone(),
        "b_o": zero.clone(),
    }


def block_params(decoder=False):
    params = {
        "self_attn": uniform_attention_params(),
        "ffn": {
            "W1": torch.eye(E, dtype=T64),
            "b1": torch.zeros(E, dtype=T64),
            "W2": torch.eye(E, dtype=T64),
            "b2": t(B2),
        },
    }
    if decoder:
        params["cross_attn"] = uniform_attention_params()
    for name in ("norm1", "norm2", "norm3") if decoder else ("norm1", "norm2"):
        params[name] = {"weight": t(NORMS[name][0]), "bias": t(NORMS[name][1])}
    return params


@checks("transformer.encoder_block")
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_encoder_block_worked_example(norm_first):
    # post-LN: x' = norm1(x + SA(x)), y = norm2(x' + FFN(x'));  SA(x)_t = mean over positions of x
    # pre-LN:  x' = x + SA(norm1(x)), y = x' + FFN(norm2(x'))
    case = f"B=1, T=2, E=4, num_heads=2, W_q=W_k=0, W_v=W_o=I, FFN relu(z) + b2, norm_first={norm_first}"
    if norm_first:
        sa = mean([ln_row(x, "norm1") for x in X])
        x1 = [add(x, sa) for x in X]
        want = [add(x, ffn_row(ln_row(x, "norm2"))) for x in x1]
    else:
        sa = mean(X)
        x1 = [ln_row(add(x, sa), "norm1") for x in X]
        want = [ln_row(add(x, ffn_row(x)), "norm2") for x in x1]
    y = call(
        "transformer.encoder_block",
        transformer.encoder_block,
        t([X]),
        block_params(),
        2,
        norm_first=norm_first,
        case=case,
    )
    check_close("transformer.encoder_block", y, [want], case=case)


@checks("transformer.encoder_block")
def test_encoder_block_applies_the_mask():
    # A (1, 1, 2) mask that allows only position 0: SA(x)_t = x_0 for both t (post-LN).
    case = "B=1, T=2, E=4, num_heads=1, mask [[[True, False]]], post-LN"
    x1 = [ln_row(add(x, X[0]), "norm1") for x in X]
    want = [ln_row(add(x, ffn_row(x)), "norm2") for x in x1]
    y = call(
        "transformer.encoder_block",
        transformer.encoder_block,
        t([X]),
        block_params(),
        1,
        torch.tensor([[[True, False]]]),
        case=case,
    )
    check_close("transformer.encoder_block", y, [want], case=case)


@checks("transformer.decoder_block")
@pytest.mark.parametrize("causal", [True, False], ids=["causal", "not-causal"])
def test_decoder_block_worked_example(causal):
    # post-LN: x1 = norm1(x + SA(x)), x2 = norm2(x1 + CA(x1, memory)), y = norm3(x2 + FFN(x2))
    # causal: position 0 sees only itself (SA = x_0), position 1 sees both (SA = mean of x_0, x_1).
    # CA: every query attends equally to both memory rows, CA = mean(memory).
    case = f"B=1, T=2, S=2, E=4, num_heads=2, W_q=W_k=0, W_v=W_o=I, causal={causal}, post-LN"
    sa = [X[0], mean(X)] if causal else [mean(X), mean(X)]
    x1 = [ln_row(add(x, s), "norm1") for x, s in zip(X, sa)]
    x2 = [ln_row(add(x, mean(MEMORY)), "norm2") for x in x1]
    want = [ln_row(add(x, ffn_row(x)), "norm3") for x in x2]
    y = call(
        "transformer.decoder_block",
        transformer.decoder_block,
        t([X]),
        t([MEMORY]),
        block_params(True),
        2,
        causal=causal,
        case=case,
    )
    check_close("transformer.decoder_block", y, [want], case=case)


@checks("transformer.decoder_block")
def test_decoder_block_pre_ln_with_masks():
    # pre-LN: x1 = x + SA(norm1(x)), x2 = x1 + CA(norm2(x1), memory), y = x2 + FFN(norm3(x2));
    # the memory itself is not normalized.
    # self mask = causal AND self_mask [[False, True]]: position 0 may see nothing (SA = b_o = 0),
    # position 1 only itself. memory_mask [[True, False]]: CA = memory row 0.
    case = (
        "B=1, T=2, S=2, E=4, num_heads=2, causal, self_mask (1, 1, 2) [[False, True]], memory_mask (1, 1, 2) "
        "[[True, False]], pre-LN"
    )
    n1 = [ln_row(x, "norm1") for x in X]
    x1 = [X[0], add(X[1], n1[1])]
    x2 = [add(x, MEMORY[0]) for x in x1]
    want = [add(x, ffn_row(ln_row(x, "norm3"))) for x in x2]
    y = call(
        "transformer.decoder_block",
        transformer.decoder_block,
        t([X]),
        t([MEMORY]),
        block_params(True),
        2,
        self_mask=torch.tensor([[[False, True]]]),
        memory_mask=torch.tensor([[[True, False]]]),
        norm_first=True,
        case=case,
    )
    check_close("transformer.decoder_block", y, [want], case=case)


# --- shapes and dtypes on random blocks -----------------------------------------------------------


def random_block(gen, E, F, dtype, decoder=False):
    def attn():
        p = {f"W_{n}": randn(gen, E, E, dtype=dtype, scale=0.3) for n in "qkvo"}
        p.update({f"b_{n}": randn(gen, E, dtype=dtype, scale=0.1) for n in "qkvo"})
        return p

    params = {
        "self_attn": attn(),
        "ffn": {
            "W1": randn(gen, F, E, dtype=dtype, scale=0.3),
            "b1": randn(gen, F, dtype=dtype),
            "W2": randn(gen, E, F, dtype=dtype, scale=0.3),
            "b2": randn(gen, E, dtype=dtype),
        },
    }
    if decoder:
        params["cross_attn"] = attn()
    for name in ("norm1", "norm2", "norm3") if decoder else ("norm1", "norm2"):
        params[name] = {
            "weight": 1 + randn(gen, E, dtype=dtype, scale=0.1),
            "bias": randn(gen, E, dtype=dtype, scale=0.1),
        }
    return params


@checks("transformer.encoder_block")
@FLOATS
def test_encoder_block_shape_and_dtype(dtype):
    gen = torch.Generator().manual_seed(2)
    case = f"B=2, T=5, E=8, F=16, num_heads=2, padding mask (2, 1, 5), {str(dtype)[6:]}"
    mask = torch.tensor([[[True] * 5], [[True] * 3 + [False] * 2]])
    y = call(
        "transformer.encoder_block",
        transformer.encoder_block,
        randn(gen, 2, 5, 8, dtype=dtype),
        random_block(gen, 8, 16, dtype),
        2,
        mask,
        case=case,
    )
    check_tensor("transformer.encoder_block", y, case=case, shape=(2, 5, 8), dtype=dtype, what="y")


@checks("transformer.decoder_block")
@FLOATS
def test_decoder_block_shape_and_dtype(dtype):
    gen = torch.Generator().manual_seed(3)
    case = f"B=2, T=4, S=6, E=8, F=16, num_heads=4, {str(dtype)[6:]}"
    y = call(
        "transformer.decoder_block",
        transformer.decoder_block,
        randn(gen, 2, 4, 8, dtype=dtype),
        randn(gen, 2, 6, 8, dtype=dtype),
        random_block(gen, 8, 16, dtype, decoder=True),
        4,
        case=case,
    )
    check_tensor("transformer.decoder_block", y, case=case, shape=(2, 4, 8), dtype=dtype, what="y")


# --- the lab: train_reverser ------------------------------------------------------------------------


def reverser_params(gen, vocab, E=8, F=16):
    """The lab's parameter dict at a small size: embedding (vocab + 1 with the start token),
    one encoder block, one decoder block, the output projection."""

    def w(rows, cols):
        return randn(gen, rows, cols, dtype=torch.float32, scale=cols**-0.5)

    def attention():
        return {
            **{k: w(E, E) for k in ("W_q", "W_k", "W_v", "W_o")},
            **{k: torch.zeros(E) for k in ("b_q", "b_k", "b_v", "b_o")},
        }

    def norm():
        return {"weight": torch.ones(E), "bias": torch.zeros(E)}

    ffn = {"W1": w(F, E), "b1": torch.zeros(F), "W2": w(E, F), "b2": torch.zeros(E)}
    return {
        "embedding": w(vocab + 1, E),
        "encoder": {"self_attn": attention(), "ffn": dict(ffn), "norm1": norm(), "norm2": norm()},
        "decoder": {
            "self_attn": attention(),
            "cross_attn": attention(),
            "ffn": dict(ffn),
            "norm1": norm(),
            "norm2": norm(),
            "norm3": norm(),
        },
        "W_out": w(vocab, E),
        "b_out": torch.zeros(vocab),
    }


@checks("transformer.train_reverser")
@lab_test("transformer.train_reverser")
def test_train_reverser_returns_new_parameters_and_a_loss_per_step():
    qualname, case = "transformer.train_reverser", "vocab=5, E=8, 3 steps of 4 sequences of length 4"
    params = reverser_params(torch.Generator().manual_seed(0), 5)
    out = call(
        qualname, transformer.train_reverser, params, 3, 4, 4, 5, generator=torch.Generator().manual_seed(1), case=case
    )
    trained, losses = out
    check_tensor(qualname, losses, case=case, shape=(3,), dtype=torch.float32, what="losses")
    check_tensor(qualname, trained["W_out"], case=case, shape=(5, 8), dtype=torch.float32, what="params_out['W_out']")
    assert bool(torch.isfinite(losses).all()), f"{qualname}, case {case}: losses are not finite"


def protocol_by_autograd(params, steps, batch_size, seq_len, vocab, lr, generator):
    """The lab's protocol (train_reverser's and reverser_logits' docstrings) written with
    torch.nn.functional and autograd: each step draws a batch with reverser_batch and the
    generator, embeds both sides (the table scaled by sqrt(E), plus the sinusoidal table), runs
    one post-LN encoder block and one post-LN decoder block (causal self-attention, then
    cross-attention to the encoder's output), projects, takes F.cross_entropy over every target
    token and moves every tensor of the nested dict by Adam (spelled out, as in test_rnn.py:
    torch.optim.Adam would load PyTorch's compiler). What your loop must agree with, step by step.
    One head (REVERSER_HEADS), so each attention is F.scaled_dot_product_attention as it is."""
    F = torch.nn.functional
    leaves = {}

    def grow(tree, path=()):
        out = {}
        for k, v in tree.items():
            if isinstance(v, dict):
                out[k] = grow(v, (*path, k))
            else:
                out[k] = leaves[(*path, k)] = v.clone().requires_grad_()
        return out

    p = grow(params)
    moments = {k: (torch.zeros_like(v), torch.zeros_like(v)) for k, v in leaves.items()}
    E = p["embedding"].shape[1]
    angle = torch.arange(seq_len, dtype=T64)[:, None] / 10000 ** (torch.arange(0, E, 2, dtype=T64) / E)
    pe = torch.stack([angle.sin(), angle.cos()], dim=2).reshape(seq_len, E)  # columns sin, cos, sin, ...

    def attend(a, q, kv, causal=False):
        out = F.scaled_dot_product_attention(
            F.linear(q, a["W_q"], a["b_q"]),
            F.linear(kv, a["W_k"], a["b_k"]),
            F.linear(kv, a["W_v"], a["b_v"]),
            is_causal=causal,
        )
        return F.linear(out, a["W_o"], a["b_o"])

    def norm(x, n):
        return F.layer_norm(x, (E,), n["weight"], n["bias"], 1e-5)

    def ffn(x, f):
        return F.linear(F.relu(F.linear(x, f["W1"], f["b1"])), f["W2"], f["b2"])

    out = []
    for step in range(steps):
        src, tgt_in, tgt = transformer.reverser_batch(batch_size, seq_len, vocab, generator)
        enc, dec = p["encoder"], p["decoder"]
        x = E**0.5 * F.embedding(src, p["embedding"]) + pe
        x = norm(x + attend(enc["self_attn"], x, x), enc["norm1"])
        memory = norm(x + ffn(x, enc["ffn"]), enc["norm2"])
        y = E**0.5 * F.embedding(tgt_in, p["embedding"]) + pe
        y = norm(y + attend(dec["self_attn"], y, y, causal=True), dec["norm1"])
        y = norm(y + attend(dec["cross_attn"], y, memory), dec["norm2"])
        y = norm(y + ffn(y, dec["ffn"]), dec["norm3"])
        loss = F.cross_entropy(F.linear(y, p["W_out"], p["b_out"]).reshape(-1, vocab), tgt.reshape(-1))
        for v in leaves.values():
            v.grad = None
        loss.backward()
        with torch.no_grad():
            for k, v in leaves.items():
                m, sq = moments[k]
                m.mul_(0.9).add_(v.grad, alpha=0.1)
                sq.mul_(0.999).addcmul_(v.grad, v.grad, value=0.001)
                m_hat, s_hat = m / (1 - 0.9 ** (step + 1)), sq / (1 - 0.999 ** (step + 1))
                v.sub_(lr * m_hat / (s_hat.sqrt() + 1e-8))
        out.append(loss.item())
    return {k: v.detach() for k, v in leaves.items()}, torch.tensor(out, dtype=T64)


def as_float64(tree):
    return {k: as_float64(v) if isinstance(v, dict) else v.to(T64) for k, v in tree.items()}


def _leaf(tree, path):
    for k in path:
        tree = tree.get(k) if isinstance(tree, dict) else None
    return tree


@checks("transformer.train_reverser")
@lab_test("transformer.train_reverser")
def test_train_reverser_follows_the_protocol():
    """The grader replays the protocol in float64 from your initial parameters and generator and
    compares your losses at every step; here the same rule, small: 6 steps, every loss and every
    returned tensor against torch.nn.functional, autograd and Adam."""
    qualname = "transformer.train_reverser"
    case = "vocab=4, E=4, F=8, 6 steps of 3 sequences of length 3, lr=0.03, float64"
    small = reverser_params(torch.Generator().manual_seed(4), 4, E=4, F=8)
    params = as_float64(small)
    out = call(
        qualname,
        transformer.train_reverser,
        params,
        6,
        3,
        3,
        4,
        lr=0.03,
        generator=torch.Generator().manual_seed(5),
        case=case,
    )
    params_out, losses = unpack(qualname, out, ("params_out", "losses"), case=case)
    want_params, want_losses = protocol_by_autograd(params, 6, 3, 3, 4, 0.03, torch.Generator().manual_seed(5))
    check_tensor(qualname, losses, case=case, shape=(6,), dtype=T64, what="losses")
    check_close(qualname, losses, want_losses, case=case, what="losses")
    # b_k's gradient is zero but for rounding (softmax ignores a shift shared by every key), which
    # Adam divides by its eps: b_k drifts by ~1e-11 in any correct loop, far inside atol=1e-8.
    for path, value in want_params.items():
        name = "".join(f"[{k!r}]" for k in path)
        check_close(qualname, _leaf(params_out, path), value, case=case, what=f"params_out{name}")


@checks("transformer.train_reverser")
@lab_test("transformer.train_reverser")
def test_train_reverser_moves_every_tensor_by_your_adam():
    """The grader counts your adam's calls during the lab's run: one per tensor of params per
    step, at the lab's lr with adam's default betas and eps, and params_out is what the last
    step's calls returned (a loop that moves its weights another way, even late in a run where
    the losses still look right, trains nothing for the lab). Here the same count, 4 steps."""
    check_adam_steps("transformer.train_reverser", transformer.train_reverser)


@checks("transformer.train_reverser")
@lab_test("transformer.train_reverser")
@pytest.mark.skipif(BUDGETS_OFF, reason="LAB_BUDGETS=off")
def test_train_reverser_trains_within_its_cpu_budget():
    """Once at the grading sizes (the docstring's), on your core measured as the grader measures
    its own: the lab's CPU budget, refused in the grader's words. A few seconds."""
    check_budget("transformer.train_reverser", transformer.train_reverser)


# --- autograd through it, as the labs use it (_autograd.py) --------------------------------------


@checks("transformer.layer_norm")
def test_layer_norm_supports_autograd():
    gen = torch.Generator().manual_seed(11)
    x = randn(gen, 2, 3, 4)
    weight, bias = 1 + randn(gen, 4, scale=0.2), randn(gen, 4, scale=0.2)
    check_autograd(
        "transformer.layer_norm",
        transformer.layer_norm,
        (x, weight, bias),
        {},
        ("x", "weight", "bias"),
        case="(2, 3, 4)",
    )


@checks("transformer.feed_forward")
def test_feed_forward_supports_autograd():
    gen = torch.Generator().manual_seed(12)
    x = randn(gen, 2, 3, 4)
    W1, b1, W2, b2 = randn(gen, 6, 4, scale=0.5), randn(gen, 6), randn(gen, 4, 6, scale=0.5), randn(gen, 4)
    check_autograd(
        "transformer.feed_forward",
        transformer.feed_forward,
        (x, W1, b1, W2, b2),
        {},
        ("x", "W1", "b1", "W2", "b2"),
        case="E=4, F=6",
    )


@checks("transformer.encoder_block")
def test_encoder_block_supports_autograd():
    gen = torch.Generator().manual_seed(13)
    check_autograd(
        "transformer.encoder_block",
        transformer.encoder_block,
        (randn(gen, 2, 3, 4), random_block(gen, 4, 6, torch.float64), 2),
        {},
        ("x", "params"),
        case="B=2, T=3, E=4, F=6, 2 heads",
    )


@checks("transformer.decoder_block")
def test_decoder_block_supports_autograd():
    gen = torch.Generator().manual_seed(14)
    check_autograd(
        "transformer.decoder_block",
        transformer.decoder_block,
        (randn(gen, 2, 3, 4), randn(gen, 2, 5, 4), random_block(gen, 4, 6, torch.float64, decoder=True), 2),
        {},
        ("x", "memory", "params"),
        case="B=2, T=3, S=5, E=4, F=6, 2 heads, causal",
    )
