"""Naming a mistake by the reference's own structure (seqlab.grading.rewrite), on worked examples
written for it: each class is named where the student's output is the reference's with that one
change, and nothing is named where no single change fits, where two different ones do, or where
a change moves the result by only a few tolerances."""

from __future__ import annotations

import math

import pytest
import torch

from seqlab.grading.checks import param_names
from seqlab.grading.rewrite import name_by_rewrite, named_inputs
from seqlab.grading.sensitivity import sensitive_inputs
from seqlab.reference import load_reference
from seqlab.tolerance import Tolerance

TOL = Tolerance(atol=1e-9, rtol=1e-7)
REF = load_reference()


def randn(g, *shape):
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def named(function, args, actual, pick=lambda out: out, tol=TOL, max_runs=400):
    ref = REF(function)
    inputs = named_inputs(param_names(function), args, {})
    return name_by_rewrite(lambda: ref(*args), ref, inputs, pick, actual, tol, max_runs)


def ffn_case():
    g = torch.Generator().manual_seed(1)
    return randn(g, 2, 3, 4), randn(g, 6, 4), randn(g, 6), randn(g, 4, 6), randn(g, 4)


def test_a_bias_added_after_the_nonlinearity():
    """relu(x W1^T) + b1 where relu(x W1^T + b1) belongs: with x W1^T = -1 and b1 = 2 the
    reference gives relu(1) = 1, the slip relu(-1) + 2 = 2."""
    x, W1, b1, W2, b2 = ffn_case()
    actual = (torch.relu(x @ W1.T) + b1) @ W2.T + b2
    said = named("transformer.feed_forward", (x, W1, b1, W2, b2), actual)
    assert "a term is added after relu instead of inside it" in said, said


def test_a_nonlinearity_left_out():
    x, W1, b1, W2, b2 = ffn_case()
    said = named("transformer.feed_forward", (x, W1, b1, W2, b2), (x @ W1.T + b1) @ W2.T + b2)
    assert "relu is left out" in said, said


def test_an_old_value_used_where_the_updated_one_belongs():
    """h = o * tanh(c_prev) where h = o * tanh(c) belongs (c the cell state just computed)."""
    g = torch.Generator().manual_seed(2)
    B, D, H = 3, 4, 5
    x, h, c = randn(g, B, D), randn(g, B, H), randn(g, B, H)
    W_ih, W_hh, b_ih, b_hh = randn(g, 4 * H, D), randn(g, 4 * H, H), randn(g, 4 * H), randn(g, 4 * H)
    i, f, gg, o = (x @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
    actual = (torch.sigmoid(o) * torch.tanh(c), c_new)
    said = named("lstm_gru.lstm_cell", (x, h, c, W_ih, W_hh, b_ih, b_hh), actual[0], pick=lambda out: out[0])
    assert "c_prev is used where" in said and "in tanh" in said, said


def test_a_correction_factor_left_out_of_a_chain_of_steps():
    """Adam with v_hat = v: the division of sqrt(v) by sqrt(1 - beta2^t) left out, every step."""
    g = torch.Generator().manual_seed(3)
    w, grads = randn(g, 3, 2), [randn(g, 3, 2) for _ in range(3)]
    adam = REF("optimizers.adam")

    def chain(step):
        out, ww, state = [], w, {}
        for dw in grads:
            ww, state = step(ww, dw, state)
            out.append(ww)
        return out

    def no_v_correction(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        t = state.get("step", 0) + 1
        m = betas[0] * state.get("m", torch.zeros_like(w)) + (1 - betas[0]) * dw
        v = betas[1] * state.get("v", torch.zeros_like(w)) + (1 - betas[1]) * dw * dw
        return w - lr * (m / (1 - betas[0] ** t)) / (v.sqrt() + eps), {"step": t, "m": m, "v": v}

    said = name_by_rewrite(lambda: chain(adam), adam, {}, lambda out: out, chain(no_v_correction), TOL)
    assert "a factor is left out: the division by" in said, said


def test_double_scaling_and_indexing_by_token():
    g = torch.Generator().manual_seed(4)
    B, T, V, d, P = 2, 3, 7, 4, 8
    tokens = torch.randint(0, V, (B, T), generator=g)
    embedding, pe = randn(g, V, d), randn(g, P, d)
    args = (tokens, embedding, pe)
    twice = named("positional.embed_tokens", args, embedding[tokens] * d + pe[:T])
    assert "the same factor is applied twice: the multiplication by 2" in twice, twice
    by_token = named("positional.embed_tokens", args, embedding[tokens] * math.sqrt(d) + pe[tokens])
    assert "indexed by tokens where positions are meant" in by_token, by_token


@pytest.mark.parametrize("kind", ["near miss", "another mistake", "out of time"])
def test_nothing_is_named_where_no_single_change_fits(kind):
    x, W1, b1, W2, b2 = ffn_case()
    expected = torch.relu(x @ W1.T + b1) @ W2.T + b2
    actual = {
        "near miss": expected * (1 + 1e-5),
        "another mistake": torch.relu(x @ (1.01 * W1).T + b1) @ W2.T + b2,
        "out of time": (torch.relu(x @ W1.T) + b1) @ W2.T + b2,
    }[kind]
    assert (
        named("transformer.feed_forward", (x, W1, b1, W2, b2), actual, max_runs=0 if kind == "out of time" else 400)
        == ""
    )


def test_a_change_within_a_few_tolerances_names_nothing():
    """Logits of size 1e-6: dropping the target logit changes the loss by ~1e-6, a few float64
    tolerances; a student off by the row maximum (also ~1e-6) must not be told they dropped it."""
    g = torch.Generator().manual_seed(5)
    logits = 1e-6 * randn(g, 4, 7)
    targets = torch.randint(0, 7, (4,), generator=g)
    m = logits.max(dim=1, keepdim=True).values
    actual = (torch.log(torch.exp(logits - m).sum(dim=1)) - logits.gather(1, targets[:, None])[:, 0]).mean()
    assert named("rnn.softmax_cross_entropy", (logits, targets), actual) == ""


def test_the_inputs_that_change_the_error_are_located():
    """b2 added twice: with b2 = 0 the answer is right, with any other input zeroed still wrong."""
    x, W1, b1, W2, b2 = ffn_case()

    def doubled_b2(x, W1, b1, W2, b2):
        return torch.relu(x @ W1.T + b1) @ W2.T + 2 * b2

    args, ref = (x, W1, b1, W2, b2), REF("transformer.feed_forward")
    names = param_names("transformer.feed_forward")
    said = sensitive_inputs(doubled_b2, ref, names, args, {}, lambda out: out, TOL)
    assert "with b2 = 0 your result is right" in said, said
    everywhere = sensitive_inputs(lambda *a: ref(*a) + 1.0, ref, names, args, {}, lambda out: out, TOL)
    assert everywhere == ""


def test_another_nonlinearity_and_a_factor_moved_out_of_it():
    """sigmoid where tanh belongs in an RNN cell; exp(delta) * A where exp(delta * A) belongs."""
    g = torch.Generator().manual_seed(6)
    x, h, W_xh, W_hh, b_h = randn(g, 2, 3), randn(g, 2, 4), randn(g, 4, 3), randn(g, 4, 4), randn(g, 4)
    actual = torch.sigmoid(x @ W_xh.T + h @ W_hh.T + b_h)
    said = named("rnn.rnn_cell", (x, h, W_xh, W_hh, b_h), actual)
    assert "sigmoid is used where tanh belongs" in said, said
    delta, A, B = randn(g, 2, 3, 4).abs(), -randn(g, 4, 5).abs(), randn(g, 2, 3, 5)
    moved = (delta[..., None].exp() * A, delta[..., None] * B[:, :, None, :])
    said = named("selective_scan.discretize", (delta, A, B), moved[0], pick=lambda out: out[0])
    assert "a factor is multiplied after exp instead of inside it" in said, said


def test_a_change_that_blows_the_values_up_names_nothing():
    """Dividing by eps alone makes w ~1e8; at that size float32 rounding hides every later step,
    so "the first step without sqrt(G)" cannot be told from any other slip that blows up."""
    g = torch.Generator().manual_seed(7)
    w, grads = randn(g, 3).float(), [randn(g, 3).float() for _ in range(3)]
    adagrad = REF("optimizers.adagrad")

    def chain(step):
        out, ww, state = [], w, {}
        for dw in grads:
            ww, state = step(ww, dw, state)
            out.append((ww, state))
        return out

    def old_sum(w, dw, state, lr=1e-2, eps=1e-10):  # steps with the sum before adding dw^2
        G = state.get("sum_sq", torch.zeros_like(w))
        return w - lr * dw / (G.sqrt() + eps), {"sum_sq": G + dw * dw}

    tol = Tolerance(atol=1e-5, rtol=1e-4)
    assert name_by_rewrite(lambda: chain(adagrad), adagrad, {}, lambda out: out, chain(old_sum), tol) == ""


def test_an_old_power_used_in_a_derivative():
    """BPTT with the tanh derivative written 1 - h where 1 - h**2 belongs: h used where h**2 does
    (the subtraction 1 - x is a reflected operator, not an in-place one: it may be changed)."""
    g = torch.Generator().manual_seed(9)
    B, T, D, H, C = 2, 2, 2, 3, 4
    x, h0 = randn(g, B, T, D), randn(g, B, H)
    params = {
        "W_xh": randn(g, H, D),
        "W_hh": randn(g, H, H),
        "b_h": randn(g, H),
        "W_hy": randn(g, C, H),
        "b_y": randn(g, C),
    }
    targets = torch.randint(0, C, (B, T), generator=g)
    bptt = REF("rnn.rnn_bptt")
    hs = REF("rnn.rnn_forward")(x, h0, params["W_xh"], params["W_hh"], params["b_h"])
    logits = hs @ params["W_hy"].T + params["b_y"]
    d_out = (torch.softmax(logits, -1) - torch.nn.functional.one_hot(targets, C).double()) / B @ params["W_hy"]
    d_a, nxt = torch.empty_like(hs), torch.zeros_like(h0)
    for t in reversed(range(T)):
        d_a[:, t] = (d_out[:, t] + nxt) * (1 - hs[:, t])
        nxt = d_a[:, t] @ params["W_hh"]
    actual = torch.einsum("bth,btd->hd", d_a, x)
    args = (x, targets, h0, params)
    inputs = named_inputs(param_names("rnn.rnn_bptt"), args, {})
    said = name_by_rewrite(lambda: bptt(*args), bptt, inputs, lambda out: out[1]["W_xh"], actual, TOL)
    assert "is used where pow(" in said, said
