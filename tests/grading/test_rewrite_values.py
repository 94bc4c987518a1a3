"""Classes of mistake named by what the result is rather than by one changed operation: one of
the reference's own values on the way (seqlab.grading.intermediate), the reference run on the
sequence reversed in time (seqlab.grading.mistakes), an update's step scaled by a factor of the
case (seqlab.grading.diagnose.step_factor). Worked examples written for them, each with a
correct (or unrelated) result that must name nothing."""

from __future__ import annotations

import torch

from seqlab.grading.checks import param_names
from seqlab.grading.diagnose import diagnose, step_factor
from seqlab.grading.mistakes import without_inputs
from seqlab.grading.rewrite import name_by_rewrite, named_inputs
from seqlab.reference import load_reference
from seqlab.tolerance import Tolerance

TOL = Tolerance(atol=1e-9, rtol=1e-7)
REF = load_reference()
B, T, D, H, N = 2, 5, 3, 4, 2


def randn(g, *shape):
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def named(function, args, actual, pick, sizes=None):
    ref = REF(function)
    inputs = named_inputs(param_names(function), args, {})
    return name_by_rewrite(lambda: ref(*args), ref, inputs, pick, actual, TOL, 400, sizes or {})


def lstm_case():
    g = torch.Generator().manual_seed(11)
    return (randn(g, B, T, D), randn(g, B, H), randn(g, B, H), randn(g, 4 * H, D), randn(g, 4 * H, H))


def test_a_state_one_step_early_is_named_as_the_step_it_is():
    """h_T returned as the state after step T-1 (a loop that stops one short)."""
    x, h0, c0, W_ih, W_hh = lstm_case()
    args = (x, h0, c0, W_ih, W_hh, torch.zeros(4 * H, dtype=torch.float64), torch.zeros(4 * H, dtype=torch.float64))
    hs, _ = REF("lstm_gru.lstm_forward")(*args)
    said = named("lstm_gru.lstm_forward", args, hs[:, -2], pick=lambda out: out[1][0])
    assert "the reference's h (in lstm_cell) as computed the 4th of the 5 times" in said, said
    assert named("lstm_gru.lstm_forward", args, hs[:, -2] + 0.5, pick=lambda out: out[1][0]) == ""


def test_a_quantity_of_every_step_stacked_where_the_state_belongs():
    """gru_forward collecting each step's candidate n_t instead of its new state h_t."""
    g = torch.Generator().manual_seed(12)
    x, h0 = randn(g, B, T, D), randn(g, B, H)
    W_ih, W_hh, b_ih, b_hh = randn(g, 3 * H, D), randn(g, 3 * H, H), randn(g, 3 * H), randn(g, 3 * H)
    h, ns = h0, []
    for t in range(T):
        i_r, i_z, i_n = (x[:, t] @ W_ih.T + b_ih).chunk(3, -1)
        h_r, h_z, h_n = (h @ W_hh.T + b_hh).chunk(3, -1)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        ns.append(n)
        h = (1 - z) * n + z * h
    args = (x, h0, W_ih, W_hh, b_ih, b_hh)
    said = named("lstm_gru.gru_forward", args, torch.stack(ns, 1), pick=lambda out: out[0])
    assert "the reference's n (in gru_cell) from every one of its 5 computations, stacked along axis 1" in said, said


def test_an_entry_taken_at_the_wrong_end_of_an_axis():
    """selective_scan's h_T taken as h[:, 0] (the state after the first step) where h[:, -1]."""
    g = torch.Generator().manual_seed(13)
    u, delta = randn(g, B, T, D), randn(g, B, T, D).abs()
    A, Bm, C = -randn(g, D, N).abs(), randn(g, B, T, N), randn(g, B, T, N)
    A_bar = torch.exp(delta[..., None] * A)
    b = delta[..., None] * Bm[:, :, None] * u[..., None]
    args = (u, delta, A, Bm, C, None, None, None, False, True)
    said = named("selective_scan.selective_scan", args, b[:, 0], pick=lambda out: out[1], sizes={"B": B, "T": T})
    assert "at its first entry along axis 1 (size 5: T), where the expected one is its last entry" in said, said
    assert A_bar.shape == (B, T, D, N)


def test_a_sequence_read_backwards_and_a_scan_run_right_to_left():
    g = torch.Generator().manual_seed(14)
    x, h0, W_xh, W_hh, b_h = randn(g, B, T, D), randn(g, B, H), randn(g, H, D), randn(g, H, H), randn(g, H)
    ref = REF("rnn.rnn_forward")
    args = (x, h0, W_xh, W_hh, b_h)
    probes = without_inputs(ref, param_names("rnn.rnn_forward"), args, {}, T)
    backwards = ref(x.flip(1), h0, W_xh, W_hh, b_h)
    said = diagnose(backwards, ref(*args), TOL, {"T": T}, lambda: probes)
    assert "the sequence is read backwards" in said, said
    a, bb = randn(g, B, T, 3), randn(g, B, T, 3)
    scan = REF("selective_scan.linear_scan")
    probes = without_inputs(scan, param_names("selective_scan.linear_scan"), (a, bb), {})
    suffix = scan(a.flip(1), bb.flip(1)).flip(1)
    said = diagnose(suffix, scan(a, bb), TOL, {}, lambda: probes)
    assert "runs from the last step to the first (right to left)" in said, said
    assert "reversed" not in diagnose(scan(a, bb) * 1.3 + 0.1 * a, scan(a, bb), TOL, {}, lambda: probes)


def test_a_step_scaled_by_a_size_or_a_setting():
    g = torch.Generator().manual_seed(15)
    w, dw = randn(g, 3, 4), randn(g, 3, 4)
    sizes = {"steps": 5, "lr": 0.1, "momentum": 0.9}
    expected = w - 0.1 * dw
    said = step_factor(w - 0.1 * dw / dw.numel(), expected, w, TOL, sizes)
    assert "exactly 0.0833333 = 1/numel" in said, said
    said = step_factor(w - 0.1 * 1.9 * dw, expected, w, TOL, sizes)
    assert "1 + momentum" in said and "momentum=0.9" in said, said
    assert step_factor(w - 0.137 * dw, expected, w, TOL, sizes) == ""  # a factor nothing names
    assert step_factor(expected, expected, w, TOL, sizes) == ""


def test_a_scale_by_another_size():
    """Attention scores divided by sqrt(L), the number of queries, where sqrt(d) belongs."""
    g = torch.Generator().manual_seed(16)
    L, S, d = 5, 7, 9
    q, k, v = randn(g, 2, L, d), randn(g, 2, S, d), randn(g, 2, S, 6)
    actual = torch.softmax(q @ k.transpose(-2, -1) / L**0.5, dim=-1) @ v
    sizes = {"B": 2, "L": L, "S": S, "d": d, "dv": 6}
    said = named("attention.scaled_dot_product_attention", (q, k, v), actual, lambda out: out[0], sizes)
    assert "scores is divided by sqrt(L) (2.23607) where sqrt(d) (3) belongs" in said, said
    right = torch.softmax(q @ k.transpose(-2, -1) / 3, dim=-1) @ v
    assert named("attention.scaled_dot_product_attention", (q, k, v), right * 1.01, lambda out: out[0], sizes) == ""


def standardize(x, scale):
    """A reference written for the test: each column to mean 0 and variance 1, then scaled."""
    centered = x - x.mean(dim=0)
    return centered / torch.sqrt((centered * centered).mean(dim=0) + 1e-5) * scale


def test_a_square_of_the_raw_input_where_the_centred_value_belongs():
    g = torch.Generator().manual_seed(17)
    x, scale = randn(g, 6, 3) + 2.0, randn(g, 3)
    actual = (x - x.mean(0)) / torch.sqrt((x * x).mean(0) + 1e-5) * scale
    inputs = named_inputs(["x", "scale"], (x, scale), {})
    said = name_by_rewrite(lambda: standardize(x, scale), standardize, inputs, lambda o: o, actual, TOL, 400, {})
    assert "x is used where centered belongs (in the square centered * centered)" in said, said


def test_a_factor_left_out_of_a_fused_product():
    """linear_scan whose odd positions absorb their left neighbour without its coefficient:
    h[2k+1] += h[2k] where h[2k+1] += a[2k+1] * h[2k] belongs (the first up-sweep level only)."""
    g = torch.Generator().manual_seed(18)
    a, b = randn(g, 2, 2, 3), randn(g, 2, 2, 3)
    actual = torch.stack([b[:, 0], b[:, 1] + b[:, 0]], 1)
    said = named("selective_scan.linear_scan", (a, b), actual, lambda o: o)
    assert "a factor is left out" in said and "without the factor" in said, said


def test_a_mask_multiplied_in_where_masked_scores_are_minus_infinity():
    g = torch.Generator().manual_seed(19)
    q, k, v = randn(g, 2, 3, 4), randn(g, 2, 5, 4), randn(g, 2, 5, 2)
    mask = torch.rand(2, 3, 5, generator=g) > 0.4
    actual = torch.softmax(q @ k.transpose(-2, -1) / 2 * mask, dim=-1) @ v
    said = named("attention.scaled_dot_product_attention", (q, k, v, mask), actual, lambda o: o[0])
    assert "masked positions are set to 0 where -inf belongs" in said, said


def scaled_step(w, g, acc):
    """A reference written for the test: an AdaGrad-like step from an accumulated square."""
    total = acc + g * g
    return w - 0.1 * g / torch.sqrt(total + 1e-8)


def test_an_absolute_value_where_a_square_belongs():
    gen = torch.Generator().manual_seed(20)
    w, g, acc = randn(gen, 4, 3), randn(gen, 4, 3), randn(gen, 4, 3).abs()
    actual = w - 0.1 * g / torch.sqrt(acc + g.abs() + 1e-8)
    inputs = named_inputs(["w", "g", "acc"], (w, g, acc), {})
    said = name_by_rewrite(lambda: scaled_step(w, g, acc), scaled_step, inputs, lambda o: o, actual, TOL, 400, {})
    assert "the absolute value is used where the square belongs: g * g is computed as |g|" in said, said


def test_a_product_where_a_division_belongs():
    """Positions multiplied by 10000^(2i/d) where divided: the frequencies grow with the column."""
    P, d = 6, 8
    pos, two_i = torch.arange(P, dtype=torch.float64)[:, None], torch.arange(0, d, 2, dtype=torch.float64)
    angle = pos * 10000.0 ** (two_i / d)
    actual = torch.stack([torch.sin(angle), torch.cos(angle)], -1).flatten(1)
    ref = REF("positional.sinusoidal_encoding")
    said = name_by_rewrite(lambda: ref(P, d, None, torch.float64), ref, {}, lambda o: o, actual, TOL, 400, {"d": d})
    assert "a multiplication where a division belongs" in said, said


def test_one_factor_of_a_square_left_out_whichever_product_drops_it():
    """RMSprop's average of (1 - alpha) * dw (not of its square): either multiplication by dw
    in ``(1 - alpha) * dw * dw`` dropped gives it, and the two are one change, so it is named."""
    gen = torch.Generator().manual_seed(21)
    w, dw = randn(gen, 3, 4), randn(gen, 3, 4)
    s = 0.01 * dw
    actual = (w - 1e-2 * dw / (torch.sqrt(s) + 1e-8), {"sq_avg": s})
    rms = REF("optimizers.rmsprop")
    inputs = named_inputs(["w", "dw", "state"], (w, dw, {}), {})
    said = name_by_rewrite(lambda: rms(w, dw, {}), rms, inputs, lambda o: o[0], actual[0], TOL, 400, {})
    assert said.startswith("your result equals the reference's computation with one change: a factor is left out"), said
    assert "multiplication by dw" in said, said
