"""Public tests of exercises/attention.py: shapes and dtypes, masks, and small worked examples.

Masks are boolean with True = may attend. A query row with no allowed key must give all-zero
weights and an all-zero output, never NaN.
"""

from __future__ import annotations

import math

import pytest
import torch
from _autograd import check_autograd
from _check import call, check_close, check_tensor, randn, unpack

from exercises import attention

checks = pytest.mark.checks
FLOATS = pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
T64 = torch.float64


def t(values, dtype=T64):
    return torch.tensor(values, dtype=dtype)


def sigmoid(z):
    return 1 / (1 + math.exp(-z))


# --- additive_attention --------------------------------------------------------------------------


@checks("attention.additive_attention")
def test_additive_attention_worked_example():
    # A = Hq = Hk = 1, W_q = W_k = v = 1: e_j = tanh(q + h_j) = [tanh 0.5, tanh 1.5] for keys [0, 1].
    # Two allowed keys: softmax of two scores is [1 - s, s] with s = sigmoid(e_2 - e_1); context = s * 1.
    # Batch row 2 allows only key 1 (weights [1, 0], context 0); row 3 allows none (all zeros).
    qualname = "attention.additive_attention"
    case = "B=3, S=2, A=Hq=Hk=1, query=0.5, keys=[0, 1], masks [T, T], [T, F], [F, F]"
    keys = t([[[0.0], [1.0]]] * 3)
    mask = torch.tensor([[True, True], [True, False], [False, False]])
    out = call(
        qualname, attention.additive_attention, t([[0.5]] * 3), keys, t([[1.0]]), t([[1.0]]), t([1.0]), mask, case=case
    )
    context, weights = unpack(qualname, out, ("context", "weights"), case=case)
    s = sigmoid(math.tanh(1.5) - math.tanh(0.5))
    check_close(qualname, weights, [[1 - s, s], [1.0, 0.0], [0.0, 0.0]], case=case, what="weights")
    check_close(qualname, context, [[s], [0.0], [0.0]], case=case, what="context")


@checks("attention.additive_attention")
@FLOATS
def test_additive_attention_shapes_and_dtype(dtype):
    gen = torch.Generator().manual_seed(0)
    case = f"B=2, S=5, Hq=3, Hk=4, A=6, no mask, {str(dtype)[6:]}"
    out = call(
        "attention.additive_attention",
        attention.additive_attention,
        randn(gen, 2, 3, dtype=dtype),
        randn(gen, 2, 5, 4, dtype=dtype),
        randn(gen, 6, 3, dtype=dtype),
        randn(gen, 6, 4, dtype=dtype),
        randn(gen, 6, dtype=dtype),
        case=case,
    )
    context, weights = unpack("attention.additive_attention", out, ("context", "weights"), case=case)
    check_tensor("attention.additive_attention", context, case=case, shape=(2, 4), dtype=dtype, what="context")
    check_tensor("attention.additive_attention", weights, case=case, shape=(2, 5), dtype=dtype, what="weights")
    check_close(
        "attention.additive_attention",
        weights.sum(-1),
        torch.ones(2, dtype=T64),
        case=case,
        what="weights.sum(-1) (each row of weights sums to 1)",
    )


# --- scaled_dot_product_attention ---------------------------------------------------------------


@checks("attention.scaled_dot_product_attention")
def test_scaled_dot_product_attention_worked_example():
    # d = 4: scores = q . k / sqrt(4) = [4 / 2, 0 / 2] = [2, 0] -> weights [sigmoid(2), sigmoid(-2)],
    # out = 10 * sigmoid(2) + 20 * sigmoid(-2). (Dividing by d instead, or not at all, gives other numbers.)
    # Row 2 is the same query under a causal mask: it may only see key 1, so weights [1, 0], out 10.
    qualname = "attention.scaled_dot_product_attention"
    case = "L=S=2, d=4, dv=1, q=[1, 1, 1, 1] twice, k=[[1, 1, 1, 1], [0, 0, 0, 0]], v=[10, 20], mask [[T, T], [T, F]]"
    q = t([[1.0, 1.0, 1.0, 1.0]] * 2)
    k = t([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[True, True], [True, False]])
    out, weights = unpack(
        qualname,
        call(qualname, attention.scaled_dot_product_attention, q, k, t([[10.0], [20.0]]), mask, case=case),
        ("out", "weights"),
        case=case,
    )
    check_close(qualname, weights, [[sigmoid(2), sigmoid(-2)], [1.0, 0.0]], case=case, what="weights")
    check_close(qualname, out, [[10 * sigmoid(2) + 20 * sigmoid(-2)], [10.0]], case=case, what="out")


@checks("attention.scaled_dot_product_attention")
def test_scaled_dot_product_attention_is_stable_for_large_scores():
    # d = 1, q = 100, keys [100, -100]: scores [1e4, -1e4], softmax [1, 0] (exactly, in floats),
    # so the output is the first value, 3. exp(1e4) overflows to inf and inf / inf is NaN: the
    # softmax must subtract the row maximum first (torch.softmax does).
    case = "L=1, S=2, d=1, q=[100], k=[100, -100], v=[3, 5]"
    out, weights = unpack(
        "attention.scaled_dot_product_attention",
        call(
            "attention.scaled_dot_product_attention",
            attention.scaled_dot_product_attention,
            t([[100.0]]),
            t([[100.0], [-100.0]]),
            t([[3.0], [5.0]]),
            case=case,
        ),
        ("out", "weights"),
        case=case,
    )
    check_close("attention.scaled_dot_product_attention", weights, [[1.0, 0.0]], case=case, what="weights")
    check_close("attention.scaled_dot_product_attention", out, [[3.0]], case=case, what="out")


@checks("attention.scaled_dot_product_attention")
def test_scaled_dot_product_attention_fully_masked_row_is_zero_not_nan():
    qualname = "attention.scaled_dot_product_attention"
    case = "L=S=2, d=1, mask [[F, F], [T, T]] (row 1 may attend to nothing)"
    out, weights = unpack(
        qualname,
        call(
            qualname,
            attention.scaled_dot_product_attention,
            t([[1.0], [1.0]]),
            t([[0.0], [0.0]]),
            t([[1.0], [3.0]]),
            torch.tensor([[False, False], [True, True]]),
            case=case,
        ),
        ("out", "weights"),
        case=case,
    )
    check_close(qualname, weights, [[0.0, 0.0], [0.5, 0.5]], case=case, what="weights")
    check_close(qualname, out, [[0.0], [2.0]], case=case, what="out")


@checks("attention.scaled_dot_product_attention")
@FLOATS
def test_scaled_dot_product_attention_shapes_batch_dims_and_broadcast_mask(dtype):
    gen = torch.Generator().manual_seed(1)
    case = f"q (2, 3, 4, 5), k (2, 3, 6, 5), v (2, 3, 6, 7), mask (4, 6), {str(dtype)[6:]}"
    mask = torch.rand(4, 6, generator=gen) < 0.7
    mask[:, 0] = True
    out, weights = unpack(
        "attention.scaled_dot_product_attention",
        call(
            "attention.scaled_dot_product_attention",
            attention.scaled_dot_product_attention,
            randn(gen, 2, 3, 4, 5, dtype=dtype),
            randn(gen, 2, 3, 6, 5, dtype=dtype),
            randn(gen, 2, 3, 6, 7, dtype=dtype),
            mask,
            case=case,
        ),
        ("out", "weights"),
        case=case,
    )
    check_tensor("attention.scaled_dot_product_attention", out, case=case, shape=(2, 3, 4, 7), dtype=dtype, what="out")
    check_tensor(
        "attention.scaled_dot_product_attention", weights, case=case, shape=(2, 3, 4, 6), dtype=dtype, what="weights"
    )
    check_close(
        "attention.scaled_dot_product_attention",
        weights.masked_fill(mask, 0.0),
        torch.zeros(2, 3, 4, 6, dtype=T64),
        case=case,
        what="weights where the mask is False",
    )


# --- causal_mask ---------------------------------------------------------------------------------


@checks("attention.causal_mask")
def test_causal_mask_worked_example():
    for T, want in ((1, [[True]]), (3, [[True, False, False], [True, True, False], [True, True, True]])):
        case = f"T={T}"
        mask = call("attention.causal_mask", attention.causal_mask, T, case=case)
        check_tensor("attention.causal_mask", mask, case=case, shape=(T, T), dtype=torch.bool)
        check_close("attention.causal_mask", mask, want, case=case)


@checks("attention.causal_mask")
def test_causal_mask_accepts_a_device():
    mask = call("attention.causal_mask", attention.causal_mask, 4, device="cpu", case="T=4, device='cpu'")
    check_tensor("attention.causal_mask", mask, case="T=4, device='cpu'", shape=(4, 4), dtype=torch.bool)


# --- multi_head_attention ------------------------------------------------------------------------


def identity_params(E, b_o=None):
    eye, zero = torch.eye(E, dtype=T64), torch.zeros(E, dtype=T64)
    params = {f"W_{n}": eye.clone() for n in "qkvo"}
    params.update({f"b_{n}": zero.clone() for n in "qkvo"})
    if b_o is not None:
        params["b_o"] = t(b_o)
    return params


@checks("attention.multi_head_attention")
def test_multi_head_attention_worked_example_one_feature_per_head():
    # E = 2, 2 heads of size 1, identity projections. Head 1 sees feature 0, head 2 feature 1:
    #   head 1: q = 1, keys [1, 0] -> scores [1, 0] / sqrt(1) -> weights [sigmoid(1), sigmoid(-1)], values [1, 0]
    #   head 2: q = 2, keys [0, 1] -> scores [0, 2]           -> weights [sigmoid(-2), sigmoid(2)], values [0, 1]
    # out = [sigmoid(1), sigmoid(2)] (identity W_o, b_o = 0).
    qualname = "attention.multi_head_attention"
    case = "B=1, L=1, S=2, E=2, num_heads=2, identity weights, query=[1, 2], key=value=[[1, 0], [0, 1]]"
    kv = t([[[1.0, 0.0], [0.0, 1.0]]])
    out, weights = unpack(
        qualname,
        call(
            qualname,
            attention.multi_head_attention,
            t([[[1.0, 2.0]]]),
            kv,
            kv.clone(),
            identity_params(2),
            2,
            case=case,
        ),
        ("out", "weights"),
        case=case,
    )
    check_close(
        qualname,
        weights,
        [[[[sigmoid(1), sigmoid(-1)]], [[sigmoid(-2), sigmoid(2)]]]],
        case=case,
        what="weights (B, heads, L, S)",
    )
    check_close(qualname, out, [[[sigmoid(1), sigmoid(2)]]], case=case, what="out")


def one_key_one_head_out(params, case):
    """multi_head_attention's out for query [1, 0], one key [1, 0] (its weight is 1) and its value
    [1, 2], one head: the worked examples below follow that value through the projections."""
    qualname = "attention.multi_head_attention"
    result = call(
        qualname,
        attention.multi_head_attention,
        t([[[1.0, 0.0]]]),
        t([[[1.0, 0.0]]]),
        t([[[1.0, 2.0]]]),
        params,
        1,
        case=case,
    )
    return unpack(qualname, result, ("out", "weights"), case=case)[0]


@checks("attention.multi_head_attention")
def test_multi_head_attention_output_projection_is_applied_as_w_o_transposed():
    # One head, one key (its weight is 1), identity W_q, W_k, W_v: the concatenated heads are the
    # value [1, 2]. W_o = [[0, 1], [0, 0]] is stored (out, in) like every weight, so
    # out = [1, 2] @ W_o.T = [0 * 1 + 1 * 2, 0] = [2, 0]; [1, 2] @ W_o would give [0, 1].
    qualname = "attention.multi_head_attention"
    case = "B=1, L=S=1, E=2, num_heads=1, identity W_q/W_k/W_v, W_o=[[0, 1], [0, 0]], value=[1, 2]"
    params = identity_params(2)
    params["W_o"] = t([[0.0, 1.0], [0.0, 0.0]])
    out = one_key_one_head_out(params, case)
    check_close(qualname, out, [[[2.0, 0.0]]], case=case, what="out")


@checks("attention.multi_head_attention")
def test_multi_head_attention_values_have_their_own_projection():
    # One head and one key (its weight is 1): out = (value @ W_v.T + b_v) @ W_o.T + b_o. With
    # W_q = W_k = W_o = identity and W_v = 2 * identity, value [1, 2] gives [2, 4]; projecting the
    # values with the key weights would give [1, 2].
    qualname = "attention.multi_head_attention"
    case = "B=1, L=S=1, E=2, num_heads=1, identity weights except W_v = 2 * identity, value=[1, 2]"
    params = identity_params(2)
    params["W_v"] = 2 * torch.eye(2, dtype=T64)
    out = one_key_one_head_out(params, case)
    check_close(qualname, out, [[[2.0, 4.0]]], case=case, what="out")


@checks("attention.multi_head_attention")
def test_multi_head_attention_heads_are_contiguous_blocks():
    # E = 4, 2 heads: head 1 owns features 0-1, head 2 features 2-3 (contiguous blocks), size 2.
    #   head 1: q = [1, 1], keys [1, 1] and [0, 0] -> scores [2 / sqrt(2), 0] -> weights [s, 1 - s],
    #           s = sigmoid(sqrt 2); values [1, 1] and [0, 0] -> [s, s]
    #   head 2: q = [0, 0] -> scores [0, 0] -> weights [0.5, 0.5]; values [0, 0] and [1, 1] -> [0.5, 0.5]
    qualname = "attention.multi_head_attention"
    case = "B=1, L=1, S=2, E=4, num_heads=2, identity weights, query=[1, 1, 0, 0]"
    kv = t([[[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]])
    out, weights = unpack(
        qualname,
        call(
            qualname,
            attention.multi_head_attention,
            t([[[1.0, 1.0, 0.0, 0.0]]]),
            kv,
            kv.clone(),
            identity_params(4),
            2,
            case=case,
        ),
        ("out", "weights"),
        case=case,
    )
    s = sigmoid(math.sqrt(2))
    check_close(qualname, weights, [[[[s, 1 - s]], [[0.5, 0.5]]]], case=case, what="weights (B, heads, L, S)")
    check_close(qualname, out, [[[s, s, 0.5, 0.5]]], case=case, what="out")


@checks("attention.multi_head_attention")
def test_multi_head_attention_fully_masked_row_gives_b_o():
    qualname = "attention.multi_head_attention"
    case = "B=1, L=2, S=2, E=2, num_heads=2, mask (1, 2, 2) with row 1 all False, b_o=[0.5, -0.5]"
    x = t([[[1.0, 2.0], [3.0, 4.0]]])
    mask = torch.tensor([[[False, False], [True, True]]])
    out, weights = unpack(
        qualname,
        call(
            qualname,
            attention.multi_head_attention,
            x,
            x.clone(),
            x.clone(),
            identity_params(2, b_o=[0.5, -0.5]),
            2,
            mask,
            case=case,
        ),
        ("out", "weights"),
        case=case,
    )
    check_close(qualname, weights[:, :, 0], torch.zeros(1, 2, 2, dtype=T64), case=case, what="weights of row 1")
    check_close(qualname, out[:, 0], [[0.5, -0.5]], case=case, what="out row 1 (only b_o is left)")


@checks("attention.multi_head_attention")
def test_multi_head_attention_padding_mask_is_per_batch_row():
    # A (B, 1, S) padding mask applies to every head of its own batch row: row 1 may only see key 0,
    # row 2 only key 1, so with identity weights each output is that value row.
    qualname = "attention.multi_head_attention"
    case = "B=2, L=1, S=2, E=2, num_heads=2, padding mask (2, 1, 2) = [[T, F]], [[F, T]]"
    kv = t([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
    mask = torch.tensor([[[True, False]], [[False, True]]])
    out, weights = unpack(
        qualname,
        call(
            qualname,
            attention.multi_head_attention,
            t([[[1.0, 1.0]], [[1.0, 1.0]]]),
            kv,
            kv.clone(),
            identity_params(2),
            2,
            mask,
            case=case,
        ),
        ("out", "weights"),
        case=case,
    )
    check_close(
        qualname,
        weights,
        [[[[1.0, 0.0]], [[1.0, 0.0]]], [[[0.0, 1.0]], [[0.0, 1.0]]]],
        case=case,
        what="weights (B, heads, L, S)",
    )
    check_close(qualname, out, [[[1.0, 2.0]], [[7.0, 8.0]]], case=case, what="out")


@checks("attention.multi_head_attention")
@FLOATS
def test_multi_head_attention_shapes_and_dtype(dtype):
    gen = torch.Generator().manual_seed(2)
    case = f"B=2, L=3, S=5, E=8, num_heads=4, causal-like mask (3, 5), {str(dtype)[6:]}"
    params = {f"W_{n}": randn(gen, 8, 8, dtype=dtype, scale=0.3) for n in "qkvo"}
    params.update({f"b_{n}": randn(gen, 8, dtype=dtype, scale=0.1) for n in "qkvo"})
    mask = torch.ones(3, 5, dtype=torch.bool).tril()
    out, weights = unpack(
        "attention.multi_head_attention",
        call(
            "attention.multi_head_attention",
            attention.multi_head_attention,
            randn(gen, 2, 3, 8, dtype=dtype),
            randn(gen, 2, 5, 8, dtype=dtype),
            randn(gen, 2, 5, 8, dtype=dtype),
            params,
            4,
            mask,
            case=case,
        ),
        ("out", "weights"),
        case=case,
    )
    check_tensor("attention.multi_head_attention", out, case=case, shape=(2, 3, 8), dtype=dtype, what="out")
    check_tensor("attention.multi_head_attention", weights, case=case, shape=(2, 4, 3, 5), dtype=dtype, what="weights")


# --- autograd through it, as the labs use it (_autograd.py) --------------------------------------


def _attention_params(gen, E):
    params = {f"W_{n}": randn(gen, E, E, scale=0.4) for n in "qkvo"}
    return params | {f"b_{n}": randn(gen, E, scale=0.1) for n in "qkvo"}


@checks("attention.scaled_dot_product_attention")
def test_scaled_dot_product_attention_supports_autograd():
    gen = torch.Generator().manual_seed(8)
    q, k, v = randn(gen, 2, 3, 4), randn(gen, 2, 3, 4), randn(gen, 2, 3, 4)
    mask = torch.ones(3, 3, dtype=torch.bool).tril()
    check_autograd(
        "attention.scaled_dot_product_attention",
        attention.scaled_dot_product_attention,
        (q, k, v, mask),
        {},
        ("q", "k", "v"),
        case="B=2, L=S=3, d=4, a causal mask",
    )


@checks("attention.multi_head_attention")
def test_multi_head_attention_supports_autograd():
    gen = torch.Generator().manual_seed(9)
    query, memory = randn(gen, 2, 3, 4), randn(gen, 2, 5, 4)
    check_autograd(
        "attention.multi_head_attention",
        attention.multi_head_attention,
        (query, memory, memory.clone(), _attention_params(gen, 4), 2),
        {},
        ("query", "key", "value", "params"),
        case="B=2, L=3, S=5, E=4, 2 heads",
    )
