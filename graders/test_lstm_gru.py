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

import functools

import pytest
import torch

from seqlab.grading.autograd import TITLE as AUTOGRAD_TITLE
from seqlab.grading.autograd import check_autograd
from seqlab.grading.checks import Case, from_table
from seqlab.labs.session import task_lab_tests
from seqlab.labs.variants import variant_tests

grades = pytest.mark.grades
DTYPES = pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
LSTM_RETURNS = ("hs", ("h_T", "c_T"))  # as nn.LSTM: the second item is itself a pair
GRU_RETURNS = ("hs", "h_T")


# --- inputs -----------------------------------------------------------------------------------


def recurrent_inputs(case, gates, states):
    """``x, <states> previous states, W_ih, W_hh, b_ih, b_hh`` in the contract's order, the
    weights drawn first; x is (B, T, D) when the case has a T, else one step (B, D).

    W_ih (gH, D), W_hh (gH, H), b_ih, b_hh (gH,): pre-activations of order 1, so no gate
    saturates and every wrong variant is far from the right answer; biases large enough that a
    dropped bias is seen."""
    gH = gates * case.H
    W = (
        case.randn(gH, "D", scale=case.D**-0.5),
        case.randn(gH, "H", scale=case.H**-0.5),
        case.randn(gH, scale=0.7),
        case.randn(gH, scale=0.7),
    )
    x = case.randn("B", "T", "D") if "T" in case.params else case.randn("B", "D")
    return (x, *(case.randn("B", "H") for _ in range(states)), *W)


def lstm_inputs(case):
    """x, h0 and c0 (or h_prev and c_prev), W_ih, W_hh, b_ih, b_hh: four gates, two states."""
    return recurrent_inputs(case, gates=4, states=2)


def gru_inputs(case):
    """x, h0 (or h_prev), W_ih, W_hh, b_ih, b_hh: three gates, one state."""
    return recurrent_inputs(case, gates=3, states=1)


# --- the loop over time, shared by the whole-sequence variants -------------------------------


def run_over_time(step, x, state, *, reverse=False, shift=False):
    """The states after each step of ``state = step(x_t, state)``, in time order, and the last one.

    reverse: x read from its last step to its first; shift: each step keeps the state it was
    given instead of the one it made."""
    T = x.shape[1]
    kept = {}
    for t in range(T - 1, -1, -1) if reverse else range(T):
        given, state = state, step(x[:, t], state)
        kept[t] = given if shift else state
    return [kept[t] for t in range(T)], state


HS_SHIFTED = (  # a mistake of the loop, in the LSTM and the GRU alike
    "hs shifted by one step (h_0 ... h_{T-1})",
    dict(shift=True),
    "hs[:, t] is the state after reading x[:, t]: store h after each step, so hs holds h_1 ... h_T "
    "and hs[:, -1] equals h_T.",
)


def in_the_step(cell_variant, rows):
    """A cell's mistakes made inside a whole-sequence function that writes its own step."""
    return [(f"{name} (in the step)", {"cell": functools.partial(cell_variant, **how)}, why) for name, how, why in rows]


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
    swap_outputs=False,
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
    return (c, h) if swap_outputs else (h, c)


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
LSTM_CELL_OUTPUTS_SWAPPED = (
    "h and c returned in the wrong order",
    dict(swap_outputs=True),
    "lstm_cell returns (h, c): the hidden state first, then the cell state (as nn.LSTMCell).",
)
lstm_cell_mistakes = from_table([*LSTM_CELL_MISTAKES, LSTM_CELL_OUTPUTS_SWAPPED], lstm_cell_variant)


def lstm_seq(
    x, h0, c0, W_ih, W_hh, b_ih, b_hh, *, cell=lstm_cell_variant, zero_init=False, carry_c=True, swap_last=False, **loop
):
    if zero_init:
        h0, c0 = torch.zeros_like(h0), torch.zeros_like(c0)

    def step(x_t, state):
        return cell(x_t, state[0], state[1] if carry_c else c0, W_ih, W_hh, b_ih, b_hh)

    states, (h_T, c_T) = run_over_time(step, x, (h0, c0), **loop)
    hs = torch.stack([h for h, _ in states], dim=1)
    return hs, ((c_T, h_T) if swap_last else (h_T, c_T))


LSTM_SEQ_MISTAKES = [
    (
        "initial state ignored (zeros)",
        dict(zero_init=True),
        "the sequence starts from the given h0 and c0, not from zeros.",
    ),
    HS_SHIFTED,
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


lstm_forward_mistakes = from_table([*LSTM_SEQ_MISTAKES, *in_the_step(lstm_cell_variant, LSTM_CELL_MISTAKES)], lstm_seq)


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
gru_cell_mistakes = from_table(GRU_CELL_MISTAKES, gru_cell_variant)


def gru_seq(x, h0, W_ih, W_hh, b_ih, b_hh, *, cell=gru_cell_variant, zero_init=False, first_as_last=False, **loop):
    if zero_init:
        h0 = torch.zeros_like(h0)
    states, h_T = run_over_time(lambda x_t, h: cell(x_t, h, W_ih, W_hh, b_ih, b_hh), x, h0, **loop)
    hs = torch.stack(states, dim=1)
    return hs, (hs[:, 0] if first_as_last else h_T)


GRU_SEQ_MISTAKES = [
    ("initial state ignored (zeros)", dict(zero_init=True), "the sequence starts from the given h0, not from zeros."),
    HS_SHIFTED,
    (
        "h_T taken from the first step",
        dict(first_as_last=True),
        "h_T is the LAST hidden state, hs[:, -1] (nn.GRU's h_n).",
    ),
    ("sequence read backwards", dict(reverse=True), "a unidirectional GRU reads x[:, 0] first and x[:, T-1] last."),
]


gru_forward_mistakes = from_table([*GRU_SEQ_MISTAKES, *in_the_step(gru_cell_variant, GRU_CELL_MISTAKES)], gru_seq)


# --- the tests ---------------------------------------------------------------------------------

# Each test compares one function with the reference on random weights, nonzero previous states
# and nonzero biases. What each function gets and returns:
# function: (its inputs, the names of its returned tuple, its known mistakes, the states' note).
FUNCTIONS = {
    "lstm_gru.lstm_cell": (lstm_inputs, ("h", "c"), lstm_cell_mistakes, "nonzero h_prev and c_prev"),
    "lstm_gru.lstm_forward": (lstm_inputs, ("hs", ("h_T", "c_T")), lstm_forward_mistakes, "nonzero h0 and c0"),
    "lstm_gru.gru_cell": (gru_inputs, None, gru_cell_mistakes, "nonzero h_prev"),
    "lstm_gru.gru_forward": (gru_inputs, ("hs", "h_T"), gru_forward_mistakes, "nonzero h0"),
}

# test name: (function, title, weight, sizes, dtypes); dtypes DTYPES: run in float64 and in
# float32, None: float64 only. D != H and B != T in the typical cases, so that a transposed
# weight or a time-major stack is a shape error; T=1 and B=1 as the edge cases.
# One test a line (a table, wider than the house width on purpose):
# fmt: off
TESTS = {
    "test_lstm_cell": ("lstm_gru.lstm_cell", "matches nn.LSTMCell, B=3, D=4, H=5, nonzero h_prev, c_prev", 2, dict(B=3, D=4, H=5), DTYPES),
    "test_lstm_cell_single": ("lstm_gru.lstm_cell", "matches nn.LSTMCell, B=1, D=2, H=3", 1, dict(B=1, D=2, H=3), None),
    "test_lstm_forward": ("lstm_gru.lstm_forward", "matches nn.LSTM(batch_first=True), B=2, T=6, D=3, H=4, nonzero h0, c0", 2, dict(B=2, T=6, D=3, H=4), DTYPES),
    "test_lstm_forward_one_step": ("lstm_gru.lstm_forward", "matches nn.LSTM(batch_first=True), T=1", 1, dict(B=3, T=1, D=4, H=2), None),
    "test_lstm_forward_single_sequence": ("lstm_gru.lstm_forward", "matches nn.LSTM(batch_first=True), B=1, T=9", 1, dict(B=1, T=9, D=2, H=3), None),
    "test_gru_cell": ("lstm_gru.gru_cell", "matches nn.GRUCell, B=3, D=4, H=5, nonzero h_prev", 2, dict(B=3, D=4, H=5), DTYPES),
    "test_gru_cell_single": ("lstm_gru.gru_cell", "matches nn.GRUCell, B=1, D=3, H=2", 1, dict(B=1, D=3, H=2), None),
    "test_gru_forward": ("lstm_gru.gru_forward", "matches nn.GRU(batch_first=True), B=2, T=6, D=3, H=4, nonzero h0", 2, dict(B=2, T=6, D=3, H=4), DTYPES),
    "test_gru_forward_one_step": ("lstm_gru.gru_forward", "matches nn.GRU(batch_first=True), T=1", 1, dict(B=3, T=1, D=4, H=2), None),
    "test_gru_forward_single_sequence": ("lstm_gru.gru_forward", "matches nn.GRU(batch_first=True), B=1, T=9", 1, dict(B=1, T=9, D=2, H=3), None),
}
# fmt: on


def recurrent_test(name, function, title, weight, sizes, dtypes):
    """The test ``name``: ``function`` against the reference on inputs of ``sizes``."""
    inputs, returns, mistakes, states = FUNCTIONS[function]

    def check(grade, make, dtype):
        case = Case(make, **sizes, dtype=dtype).note(states)
        grade.check(*inputs(case), case=case, returns=returns, mistakes=mistakes)

    if dtypes is None:

        def test(grade, make):
            check(grade, make, torch.float64)

    else:

        @dtypes
        def test(grade, make, dtype):
            check(grade, make, dtype)

    test.__name__ = test.__qualname__ = name
    return grades(function, title=title, weight=weight)(test)


globals().update({name: recurrent_test(name, *spec) for name, spec in TESTS.items()})


# --- the lab: why gates (gradient norm against time step) ---------------------------------------


def gradient_norms(ref, kind, x, h0, params, *, target="sum", order="forward", norm="joint", c0="zeros"):
    """``||d(sum h_T)/dx_t||`` through the reference's forward, with switches for the classic slips
    (defaults: correct); autograd here is the grader's, in the trusted process."""
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        if kind == "rnn":
            h_T = ref("rnn.rnn_forward")(x, h0, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
        elif kind == "lstm":
            c = torch.zeros_like(h0) if c0 == "zeros" else h0
            _, (h_T, _) = ref("lstm_gru.lstm_forward")(
                x, h0, c, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"]
            )
        else:
            _, h_T = ref("lstm_gru.gru_forward")(x, h0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
        (dx,) = torch.autograd.grad(h_T.sum() if target == "sum" else h_T.mean(), x)
    norms = dx.pow(2).sum(dim=(0, 2)).sqrt() if norm == "joint" else dx.pow(2).sum(dim=2).sqrt().sum(dim=0)
    if norm == "squared":
        norms = dx.pow(2).sum(dim=(0, 2))
    return norms.flip(0) if order == "reversed" else norms


NORMS_MISTAKES = [
    ("the mean of h_T instead of its sum", {"target": "mean"}, "differentiate sum(h_T), not its mean."),
    ("time reversed", {"order": "reversed"}, "norms[t] belongs to the input x_t: index 0 is the first input."),
    (
        "a norm per sequence, then summed",
        {"norm": "per sequence"},
        "one norm over the batch and the features together: sqrt of the sum of squares over (B, D).",
    ),
    ("the squared norm", {"norm": "squared"}, "take the square root: the L2 norm, not its square."),
    ("the LSTM's c0 set to h0", {"c0": "h0"}, "the LSTM's cell state starts at zeros."),
]


def norms_inputs(case, kind):
    if kind == "rnn":
        params = {
            "W_xh": case.randn("H", "D", scale=0.8 / case.D**0.5),
            "W_hh": case.randn("H", "H", scale=0.8 / case.H**0.5),
            "b_h": case.randn("H", scale=0.3),
        }
        x, h0 = case.randn("B", "T", "D"), case.randn("B", "H", scale=0.5)
    else:
        x, h0, *weights = (lstm_inputs if kind == "lstm" else gru_inputs)(case)
        params = dict(zip(("W_ih", "W_hh", "b_ih", "b_hh"), weights[-4:]))
    return kind, x, h0, params


@grades("lstm_gru.input_gradient_norms", title="||d sum(h_T) / d x_t|| for every t, through the RNN, LSTM and GRU")
@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_input_gradient_norms(grade, make, ref, kind):
    case = Case(make, B=3, T=9, D=4, H=5, dtype=torch.float64).note(f"kind={kind!r}")
    inputs = norms_inputs(case, kind)
    grade.check(*inputs, case=case, mistakes=from_table(NORMS_MISTAKES, functools.partial(gradient_norms, ref)))


@grades("lstm_gru.input_gradient_norms", title="float32, T=1 (the last input only)", weight=0.5)
def test_input_gradient_norms_single(grade, make, ref):
    case = Case(make, B=2, T=1, D=3, H=4, dtype=torch.float32).note("kind='gru'")
    grade.check(*norms_inputs(case, "gru"), case=case)


# --- the lab: delayed recall (seqlab/labs/recall.py draws the task and the held-out sequences) ---


HELDOUT_TITLE = "the trained GRU recalls the first token after 24-32 distractors on fresh sequences"


# --- supports autograd (a lab trains through it; the public twin is test_<function>_supports_autograd) ---


@grades("lstm_gru.gru_cell", title=AUTOGRAD_TITLE)
def test_gru_cell_supports_autograd(grade, make):
    case = Case(make, B=2, D=3, H=4)
    check_autograd(grade, *gru_inputs(case), case=case)


@grades("lstm_gru.gru_forward", title=AUTOGRAD_TITLE)
def test_gru_forward_supports_autograd(grade, make):
    case = Case(make, B=2, T=4, D=3, H=4)
    check_autograd(grade, *gru_inputs(case), case=case, returns=("hs", "h_T"))


globals().update(task_lab_tests("lstm_gru.train_recall", "accuracy", HELDOUT_TITLE))


# --- every argument tried: the lab's function on its inputs with arguments changed ---------------
# (seqlab/labs/variants.py: another kind, float64, another lr or clip, a text a multiple of seq_len)

globals().update(variant_tests("lstm_gru.train_recall"))
