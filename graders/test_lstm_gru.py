"""Hidden graders for exercises/lstm_gru.py (notes L5 §7 LSTM, L5 §8 GRU, L7-8 Lecture 7 §五).

Every cell is compared with the reference (which agrees with nn.LSTMCell / nn.GRUCell) on the
same random weights, with nonzero previous states and nonzero biases, with D != H and B != T so
that a transposed weight or a time-major stack shows up as a shape error instead of passing by
accident. The whole-sequence functions are checked on T=1, B=1 and a typical size, returning
the documented structure: ``(hs, (h_T, c_T))`` for the LSTM, ``(hs, h_T)`` for the GRU.

Known wrong variants are computed here, on the same inputs, so a failure can say which classic
mistake it looks like (PyTorch's recurrent kernels are forbidden, so the variants are written
out with plain tensor operations).
"""

from __future__ import annotations

import pytest
import torch

from seqlab.grading.checks import GradeFailure, Mistake, describe_case

grades = pytest.mark.grades
DTYPES = pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])


# --- inputs -----------------------------------------------------------------------------------


def weights(make, gates, D, H, dtype):
    """W_ih (gH, D), W_hh (gH, H), b_ih, b_hh (gH,): pre-activations of order 1, so no gate
    saturates and every wrong variant is far from the right answer; biases large enough that a
    dropped bias is seen."""
    return (
        make.randn(gates * H, D, dtype=dtype, scale=D**-0.5),
        make.randn(gates * H, H, dtype=dtype, scale=H**-0.5),
        make.randn(gates * H, dtype=dtype, scale=0.7),
        make.randn(gates * H, dtype=dtype, scale=0.7),
    )


def run_checked(grade, args, case, mistakes, unpack=None):
    """Run the student on ``args``, check the returned structure, compare with the reference;
    the known-wrong variants are only computed when the answer is wrong."""
    value = grade.run(*args).value
    if unpack is not None:
        value = unpack(grade, value)
    want = grade.ref(*args)
    try:
        grade.expect(value, want, case=case)
    except GradeFailure as failure:
        if failure.rule:
            raise
        grade.expect(value, want, case=case, mistakes=mistakes(*args))
        raise
    return value


def unpack_lstm(grade, value):
    """``(hs, (h_T, c_T))``: a pair whose second item is itself a pair, as nn.LSTM returns."""
    hs, last = grade.unpack(value, ("hs", "(h_T, c_T)"))
    if not isinstance(last, (tuple, list)) or len(last) != 2:
        got = f"a {type(last).__name__}" + (f" of {len(last)}" if isinstance(last, (tuple, list)) else "")
        raise GradeFailure(
            f"{grade.function} should return (hs, (h_T, c_T)), as nn.LSTM does: its second item "
            f"is the pair (h_T, c_T); got {got} there",
            rule="shape/dtype/device",
        )
    return hs, tuple(last)


def unpack_gru(grade, value):
    return grade.unpack(value, ("hs", "h_T"))


# --- LSTM: known wrong variants ---------------------------------------------------------------


def lstm_cell_variant(
    x,
    h_prev,
    c_prev,
    W_ih,
    W_hh,
    b_ih,
    b_hh,
    *,
    order="ifgo",
    bias="both",
    forget_offset=0.0,
    g_act=torch.tanh,
    squash_c=False,
    tanh_h=True,
):
    H = h_prev.shape[-1]
    if bias == "ih only":
        b = b_ih
    elif bias == "no forget":
        b = (b_ih + b_hh).clone()
        b[H : 2 * H] = 0
    else:
        b = b_ih + b_hh
    gates = dict(zip(order, (x @ W_ih.T + h_prev @ W_hh.T + b).chunk(4, dim=-1)))
    i, f = torch.sigmoid(gates["i"]), torch.sigmoid(gates["f"] + forget_offset)
    g, o = g_act(gates["g"]), torch.sigmoid(gates["o"])
    c = f * c_prev + i * g
    if squash_c:
        c = torch.tanh(c)
    h = o * (torch.tanh(c) if tanh_h else c)
    return h, c


LSTM_CELL_MISTAKES = [
    (
        "gate order i, f, o, g",
        dict(order="ifog"),
        "PyTorch stacks the four blocks of W_ih, W_hh, b_ih, b_hh as input, forget, cell candidate g, "
        "output: i, f, g, o = gates.chunk(4, dim=-1).",
    ),
    (
        "gate order i, g, f, o (TensorFlow's layout)",
        dict(order="igfo"),
        "TensorFlow packs i, j(=g), f, o; PyTorch's blocks are input, forget, cell candidate g, output: "
        "i, f, g, o = gates.chunk(4, dim=-1).",
    ),
    (
        "forget-gate bias dropped",
        dict(bias="no forget"),
        "every gate has a bias, the forget gate too: f = sigmoid(W_if x + b_if + W_hf h + b_hf) "
        "(rows H:2H of b_ih and b_hh).",
    ),
    (
        "forget bias +1 (TensorFlow's forget_bias)",
        dict(forget_offset=1.0),
        "nn.LSTMCell adds no constant to the forget gate; TensorFlow's forget_bias=1 is an initialisation "
        "trick, here the forget bias is exactly b_ih[H:2H] + b_hh[H:2H].",
    ),
    (
        "b_hh ignored (only one bias)",
        dict(bias="ih only"),
        "PyTorch keeps two biases and adds both: gates = x @ W_ih.T + b_ih + h @ W_hh.T + b_hh.",
    ),
    (
        "tanh applied to the cell state twice",
        dict(squash_c=True),
        "the cell state is the plain sum c = f*c_prev + i*g (the additive path of L5 §7.4, no tanh); "
        "tanh is applied once, only for the output h = o*tanh(c).",
    ),
    (
        "h = o * c (tanh missing)",
        dict(tanh_h=False),
        "the hidden state squashes the cell state before the output gate: h = o * tanh(c) (L5 §7.5).",
    ),
    (
        "sigmoid on the cell candidate g",
        dict(g_act=torch.sigmoid),
        "the candidate g uses tanh (values in [-1, 1], so it can also lower the memory); only i, f, o are sigmoids.",
    ),
]


def lstm_cell_mistakes(*args):
    h, c = lstm_cell_variant(*args)
    return [Mistake(name, lstm_cell_variant(*args, **kw), why) for name, kw, why in LSTM_CELL_MISTAKES] + [
        Mistake(
            "h and c returned in the wrong order",
            (c, h),
            "lstm_cell returns (h, c): the hidden state first, then the cell state (as nn.LSTMCell).",
        )
    ]


def lstm_seq(
    x,
    h0,
    c0,
    W_ih,
    W_hh,
    b_ih,
    b_hh,
    *,
    cell=lstm_cell_variant,
    zero_init=False,
    carry_c=True,
    reverse=False,
    shift=False,
    swap_last=False,
):
    h, c = (torch.zeros_like(h0), torch.zeros_like(c0)) if zero_init else (h0, c0)
    steps = range(x.shape[1] - 1, -1, -1) if reverse else range(x.shape[1])
    hs = {}
    for t in steps:
        h_in = h
        h, c_new = cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)
        c = c_new if carry_c else c
        hs[t] = h_in if shift else h
        c_last = c_new
    out = torch.stack([hs[t] for t in range(x.shape[1])], dim=1)
    return (out, (c_last, h)) if swap_last else (out, (h, c_last))


LSTM_SEQ_MISTAKES = [
    (
        "initial state ignored (zeros)",
        dict(zero_init=True),
        "the sequence starts from the given h0 and c0, not from zeros.",
    ),
    (
        "hs shifted by one step (h_0 ... h_{T-1})",
        dict(shift=True),
        "hs[:, t] is the state after reading x[:, t]: store h after each step, so hs holds h_1 ... h_T "
        "and hs[:, -1] equals h_T.",
    ),
    (
        "cell state not carried over",
        dict(carry_c=False),
        "the cell state is recurrent too: feed each step's new c into the next step, not c0 every time.",
    ),
    (
        "h_T and c_T swapped",
        dict(swap_last=True),
        "nn.LSTM returns (output, (h_n, c_n)): the hidden state first, then the cell state.",
    ),
    ("sequence read backwards", dict(reverse=True), "a unidirectional LSTM reads x[:, 0] first and x[:, T-1] last."),
]


def lstm_forward_mistakes(*args):
    found = [Mistake(name, lstm_seq(*args, **kw), why) for name, kw, why in LSTM_SEQ_MISTAKES]
    # A forward pass written with its own cell inside can carry any cell mistake.
    for name, kw, why in LSTM_CELL_MISTAKES:
        cell = lambda *a, _kw=kw: lstm_cell_variant(*a, **_kw)  # noqa: E731
        found.append(Mistake(f"{name} (in the step)", lstm_seq(*args, cell=cell), why))
    return found


# --- GRU: known wrong variants ----------------------------------------------------------------


def gru_cell_variant(x, h_prev, W_ih, W_hh, b_ih, b_hh, *, form="pytorch", flip=False, order="rzn"):
    i_ = dict(zip(order, (x @ W_ih.T + b_ih).chunk(3, dim=-1)))
    h_ = dict(zip(order, (h_prev @ W_hh.T + b_hh).chunk(3, dim=-1)))
    r = torch.sigmoid(i_["r"] + h_["r"])
    z = torch.sigmoid(i_["z"] + h_["z"])
    H = h_prev.shape[-1]
    W_hn = dict(zip(order, W_hh.split(H, dim=0)))["n"]
    b_hn = dict(zip(order, b_hh.split(H, dim=0)))["n"]
    if form == "notes":  # Cho et al. / the notes: reset before the matrix product
        n = torch.tanh(i_["n"] + (r * h_prev) @ W_hn.T + b_hn)
    elif form == "bias outside":
        n = torch.tanh(i_["n"] + r * (h_prev @ W_hn.T) + b_hn)
    elif form == "no reset":
        n = torch.tanh(i_["n"] + h_["n"])
    else:
        n = torch.tanh(i_["n"] + r * h_["n"])
    return z * n + (1 - z) * h_prev if flip else (1 - z) * n + z * h_prev


GRU_FORM = (
    "PyTorch (and this contract) applies r AFTER the product: n = tanh(W_in x + b_in + "
    "r * (W_hn h + b_hn)); the notes (Cho et al. 2014) apply it BEFORE: W_hn (r * h). With the "
    "same weights these are different functions, so move r outside the product."
)
GRU_FLIP = (
    "in PyTorch's convention z is the share of the OLD state that is kept: h = (1 - z) * n + "
    "z * h_prev (z near 1 keeps the past, L5 §8.2); you swapped the roles of z and 1 - z."
)
GRU_CELL_MISTAKES = [
    ("reset gate applied before W_hn (the notes' form)", dict(form="notes"), GRU_FORM),
    ("update convention flipped (h = z*n + (1-z)*h_prev)", dict(flip=True), GRU_FLIP),
    (
        "reset gate before W_hn (the notes' form) and update convention flipped",
        dict(form="notes", flip=True),
        GRU_FORM + " Also " + GRU_FLIP,
    ),
    (
        "b_hn outside the reset gate",
        dict(form="bias outside"),
        "the hidden-side bias of the new gate sits inside the reset: r * (W_hn h + b_hn); adding b_ih + b_hh "
        "together is only right for the r and z blocks.",
    ),
    (
        "reset gate missing",
        dict(form="no reset"),
        "the candidate uses the reset gate: n = tanh(W_in x + b_in + r * (W_hn h + b_hn)).",
    ),
    (
        "gate order z, r, n",
        dict(order="zrn"),
        "PyTorch stacks the GRU blocks as reset, update, new: r, z, n = gates.chunk(3, dim=-1).",
    ),
]


def gru_cell_mistakes(*args):
    return [Mistake(name, gru_cell_variant(*args, **kw), why) for name, kw, why in GRU_CELL_MISTAKES]


def gru_seq(
    x,
    h0,
    W_ih,
    W_hh,
    b_ih,
    b_hh,
    *,
    cell=gru_cell_variant,
    zero_init=False,
    reverse=False,
    shift=False,
    first_as_last=False,
):
    h = torch.zeros_like(h0) if zero_init else h0
    steps = range(x.shape[1] - 1, -1, -1) if reverse else range(x.shape[1])
    hs = {}
    for t in steps:
        h_in = h
        h = cell(x[:, t], h, W_ih, W_hh, b_ih, b_hh)
        hs[t] = h_in if shift else h
    out = torch.stack([hs[t] for t in range(x.shape[1])], dim=1)
    return out, (out[:, 0] if first_as_last else h)


GRU_SEQ_MISTAKES = [
    ("initial state ignored (zeros)", dict(zero_init=True), "the sequence starts from the given h0, not from zeros."),
    (
        "hs shifted by one step (h_0 ... h_{T-1})",
        dict(shift=True),
        "hs[:, t] is the state after reading x[:, t]: store h after each step, so hs holds h_1 ... h_T "
        "and hs[:, -1] equals h_T.",
    ),
    (
        "h_T taken from the first step",
        dict(first_as_last=True),
        "h_T is the LAST hidden state, hs[:, -1] (nn.GRU's h_n).",
    ),
    ("sequence read backwards", dict(reverse=True), "a unidirectional GRU reads x[:, 0] first and x[:, T-1] last."),
]


def gru_forward_mistakes(*args):
    found = [Mistake(name, gru_seq(*args, **kw), why) for name, kw, why in GRU_SEQ_MISTAKES]
    for name, kw, why in GRU_CELL_MISTAKES:
        cell = lambda *a, _kw=kw: gru_cell_variant(*a, **_kw)  # noqa: E731
        found.append(Mistake(f"{name} (in the step)", gru_seq(*args, cell=cell), why))
    return found


# --- lstm_cell --------------------------------------------------------------------------------


def check_lstm_cell(grade, make, B, D, H, dtype):
    W = weights(make, 4, D, H, dtype)
    x, h_prev, c_prev = make.randn(B, D, dtype=dtype), make.randn(B, H, dtype=dtype), make.randn(B, H, dtype=dtype)
    case = describe_case(B=B, D=D, H=H, dtype=dtype) + ", nonzero h_prev and c_prev"
    run_checked(grade, (x, h_prev, c_prev, *W), case, lstm_cell_mistakes, unpack=lambda g, v: g.unpack(v, ("h", "c")))


@grades("lstm_gru.lstm_cell", title="matches nn.LSTMCell, B=3, D=4, H=5, nonzero h_prev, c_prev", weight=2)
@DTYPES
def test_lstm_cell(grade, make, dtype):
    check_lstm_cell(grade, make, 3, 4, 5, dtype)


@grades("lstm_gru.lstm_cell", title="matches nn.LSTMCell, B=1, D=2, H=3")
def test_lstm_cell_single(grade, make):
    check_lstm_cell(grade, make, 1, 2, 3, torch.float64)


# --- lstm_forward -----------------------------------------------------------------------------


def check_lstm_forward(grade, make, B, T, D, H, dtype):
    W = weights(make, 4, D, H, dtype)
    x = make.randn(B, T, D, dtype=dtype)
    h0, c0 = make.randn(B, H, dtype=dtype), make.randn(B, H, dtype=dtype)
    case = describe_case(B=B, T=T, D=D, H=H, dtype=dtype) + ", nonzero h0 and c0"
    run_checked(grade, (x, h0, c0, *W), case, lstm_forward_mistakes, unpack=unpack_lstm)


@grades(
    "lstm_gru.lstm_forward", title="matches nn.LSTM(batch_first=True), B=2, T=6, D=3, H=4, nonzero h0, c0", weight=2
)
@DTYPES
def test_lstm_forward(grade, make, dtype):
    check_lstm_forward(grade, make, 2, 6, 3, 4, dtype)


@grades("lstm_gru.lstm_forward", title="matches nn.LSTM(batch_first=True), T=1")
def test_lstm_forward_one_step(grade, make):
    check_lstm_forward(grade, make, 3, 1, 4, 2, torch.float64)


@grades("lstm_gru.lstm_forward", title="matches nn.LSTM(batch_first=True), B=1, T=9")
def test_lstm_forward_single_sequence(grade, make):
    check_lstm_forward(grade, make, 1, 9, 2, 3, torch.float64)


# --- gru_cell ---------------------------------------------------------------------------------


def check_gru_cell(grade, make, B, D, H, dtype):
    W = weights(make, 3, D, H, dtype)
    x, h_prev = make.randn(B, D, dtype=dtype), make.randn(B, H, dtype=dtype)
    case = describe_case(B=B, D=D, H=H, dtype=dtype) + ", nonzero h_prev"
    run_checked(grade, (x, h_prev, *W), case, gru_cell_mistakes)


@grades("lstm_gru.gru_cell", title="matches nn.GRUCell, B=3, D=4, H=5, nonzero h_prev", weight=2)
@DTYPES
def test_gru_cell(grade, make, dtype):
    check_gru_cell(grade, make, 3, 4, 5, dtype)


@grades("lstm_gru.gru_cell", title="matches nn.GRUCell, B=1, D=3, H=2")
def test_gru_cell_single(grade, make):
    check_gru_cell(grade, make, 1, 3, 2, torch.float64)


# --- gru_forward ------------------------------------------------------------------------------


def check_gru_forward(grade, make, B, T, D, H, dtype):
    W = weights(make, 3, D, H, dtype)
    x, h0 = make.randn(B, T, D, dtype=dtype), make.randn(B, H, dtype=dtype)
    case = describe_case(B=B, T=T, D=D, H=H, dtype=dtype) + ", nonzero h0"
    run_checked(grade, (x, h0, *W), case, gru_forward_mistakes, unpack=unpack_gru)


@grades("lstm_gru.gru_forward", title="matches nn.GRU(batch_first=True), B=2, T=6, D=3, H=4, nonzero h0", weight=2)
@DTYPES
def test_gru_forward(grade, make, dtype):
    check_gru_forward(grade, make, 2, 6, 3, 4, dtype)


@grades("lstm_gru.gru_forward", title="matches nn.GRU(batch_first=True), T=1")
def test_gru_forward_one_step(grade, make):
    check_gru_forward(grade, make, 3, 1, 4, 2, torch.float64)


@grades("lstm_gru.gru_forward", title="matches nn.GRU(batch_first=True), B=1, T=9")
def test_gru_forward_single_sequence(grade, make):
    check_gru_forward(grade, make, 1, 9, 2, 3, torch.float64)
