"""solutions/attention.py against F.scaled_dot_product_attention, nn.MultiheadAttention and a
direct computation of Bahdanau attention (PyTorch has no built-in for it)."""

from __future__ import annotations

import math
from fnmatch import fnmatch

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from solutions import attention
from tests._helpers import assert_close, call_pure, check_out, mha_params, ops_called, randn

FUSED_ATTENTION = (
    "*scaled_dot_product*",
    "*flash_attention*",
    "*efficient_attention*",
    "*multi_head_attention_forward*",
    "*multiheadattention*",
    "*_native_multi_head_attention*",
)


# --- helpers (purity, op recording) -------------------------------------------------------------


def random_mask(gen, *shape, device):
    """A random bool mask (True = may attend) with at least one allowed key in every row."""
    m = torch.rand(*shape, generator=gen) < 0.6
    first = torch.randint(shape[-1], shape[:-1], generator=gen)
    m.scatter_(-1, first.unsqueeze(-1), True)
    return m.to(device)


def padding_mask(gen, B, S, device):
    """(B, 1, S): batch row b may attend to its first lengths[b] >= 1 keys (trailing padding)."""
    lengths = torch.randint(1, S + 1, (B,), generator=gen)
    lengths[0] = max(1, S - 1) if S > 1 else 1  # at least one padded row when S > 1
    return (torch.arange(S)[None, :] < lengths[:, None]).unsqueeze(1).to(device)


# --- additive (Bahdanau) attention ----------------------------------------------------------------


def additive_oracle(query, keys, W_q, W_k, v, mask):
    """Bahdanau attention one batch row and one key at a time, in float64."""
    query, keys, W_q, W_k, v = (t.detach().cpu().double() for t in (query, keys, W_q, W_k, v))
    B, S, Hk = keys.shape
    weights = torch.zeros(B, S, dtype=torch.float64)
    context = torch.zeros(B, Hk, dtype=torch.float64)
    for b in range(B):
        allowed = [j for j in range(S) if mask is None or bool(mask[b, j])]
        e = {j: float(v @ torch.tanh(W_q @ query[b] + W_k @ keys[b, j])) for j in allowed}
        if not e:
            continue  # no allowed key: zero weights, zero context
        top = max(e.values())
        total = sum(math.exp(s - top) for s in e.values())
        for j, s in e.items():
            weights[b, j] = math.exp(s - top) / total
            context[b] += weights[b, j] * keys[b, j]
    return context, weights


@pytest.mark.parametrize("B,S,Hq,Hk,A", [(1, 1, 2, 3, 4), (3, 5, 4, 3, 6), (2, 7, 5, 5, 3)])
@pytest.mark.parametrize("masked", [False, True])
def test_additive_attention_matches_direct_computation(device, dtype, gen, B, S, Hq, Hk, A, masked):
    query = randn(gen, B, Hq, device=device, dtype=dtype)
    keys = randn(gen, B, S, Hk, device=device, dtype=dtype)
    W_q = randn(gen, A, Hq, device=device, dtype=dtype, scale=Hq**-0.5)
    W_k = randn(gen, A, Hk, device=device, dtype=dtype, scale=Hk**-0.5)
    v = randn(gen, A, device=device, dtype=dtype)
    mask = random_mask(gen, B, S, device=device) if masked else None
    context, weights = call_pure(attention.additive_attention, query, keys, W_q, W_k, v, mask)
    check_out(context, device, dtype, (B, Hk))
    check_out(weights, device, dtype, (B, S))
    context_ref, weights_ref = additive_oracle(query, keys, W_q, W_k, v, mask)
    assert_close(weights, weights_ref.to(device=device, dtype=dtype))
    assert_close(context, context_ref.to(device=device, dtype=dtype))
    assert_close(weights.sum(-1), torch.ones(B, device=device, dtype=dtype))


def test_additive_attention_fully_masked_row_is_zero(device, dtype, gen):
    B, S, H, A = 3, 4, 3, 5
    query, keys = randn(gen, B, H, device=device, dtype=dtype), randn(gen, B, S, H, device=device, dtype=dtype)
    W_q, W_k = randn(gen, A, H, device=device, dtype=dtype), randn(gen, A, H, device=device, dtype=dtype)
    v = randn(gen, A, device=device, dtype=dtype)
    mask = random_mask(gen, B, S, device=device)
    mask[1] = False
    context, weights = call_pure(attention.additive_attention, query, keys, W_q, W_k, v, mask)
    assert torch.isfinite(context).all() and torch.isfinite(weights).all()
    assert torch.equal(weights[1], torch.zeros_like(weights[1]))
    assert torch.equal(context[1], torch.zeros_like(context[1]))
    context_ref, weights_ref = additive_oracle(query, keys, W_q, W_k, v, mask)
    assert_close(weights, weights_ref.to(device=device, dtype=dtype))
    assert_close(context, context_ref.to(device=device, dtype=dtype))


# --- scaled dot-product attention ---------------------------------------------------------------

SDPA_SHAPES = [((1,), 1, 1, 2, 3), ((3,), 4, 6, 5, 2), ((2, 3), 5, 5, 4, 4), ((2, 2), 1, 7, 8, 3)]  # batch, L, S, d, dv


def sdpa_inputs(gen, batch, L, S, d, dv, device, dtype):
    return (
        randn(gen, *batch, L, d, device=device, dtype=dtype),
        randn(gen, *batch, S, d, device=device, dtype=dtype),
        randn(gen, *batch, S, dv, device=device, dtype=dtype),
    )


def sdpa_masks(gen, batch, L, S, device):
    masks = {
        "none": None,
        "random_LS": random_mask(gen, L, S, device=device),
        "padding_B1S": padding_mask(gen, batch[0], S, device).view(batch[0], *[1] * len(batch), S),
    }
    if L == S:
        masks["causal"] = attention.causal_mask(L, device=device)
    return masks


@pytest.mark.parametrize("batch,L,S,d,dv", SDPA_SHAPES)
def test_sdpa_matches_torch(device, dtype, gen, batch, L, S, d, dv):
    q, k, v = sdpa_inputs(gen, batch, L, S, d, dv, device, dtype)
    for name, mask in sdpa_masks(gen, batch, L, S, device).items():
        out, weights = call_pure(attention.scaled_dot_product_attention, q, k, v, mask)
        check_out(out, device, dtype, (*batch, L, dv))
        check_out(weights, device, dtype, (*batch, L, S))
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # bool: True = may attend
        assert_close(out, ref, msg=lambda m: f"mask {name}: {m}")
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        assert_close(weights, torch.softmax(scores, -1), msg=lambda m: f"mask {name}: {m}")


def test_sdpa_divides_by_sqrt_of_query_width(gen):
    """d = q.shape[-1], not the value width: with dv != d the scale must follow q."""
    q, k, v = sdpa_inputs(gen, (2,), 3, 4, 9, 2, "cpu", torch.float64)
    _, weights = attention.scaled_dot_product_attention(q, k, v)
    assert_close(weights, torch.softmax(q @ k.transpose(-2, -1) / 3.0, -1))


def test_sdpa_fully_masked_rows_are_zero(device, dtype, gen):
    B, L, S, d = 2, 4, 5, 3
    q, k, v = sdpa_inputs(gen, (B,), L, S, d, d, device, dtype)
    mask = random_mask(gen, B, L, S, device=device)
    mask[0, 2] = False
    mask[1, :] = False  # a whole batch element with nothing to attend to
    out, weights = call_pure(attention.scaled_dot_product_attention, q, k, v, mask)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    for b, row in [(0, 2), *[(1, i) for i in range(L)]]:
        assert torch.equal(weights[b, row], torch.zeros_like(weights[b, row]))
        assert torch.equal(out[b, row], torch.zeros_like(out[b, row]))
    ref = F.scaled_dot_product_attention(q[:1], k[:1], v[:1], attn_mask=mask[:1])
    keep = torch.arange(L, device=device) != 2
    assert_close(out[0, keep], ref[0, keep])


def test_sdpa_large_scores_are_stable(gen):
    q, k, v = sdpa_inputs(gen, (2,), 3, 4, 4, 2, "cpu", torch.float32)
    out, weights = attention.scaled_dot_product_attention(q * 300, k * 300, v)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    assert_close(out, F.scaled_dot_product_attention(q * 300, k * 300, v))


# --- causal mask --------------------------------------------------------------------------------


@pytest.mark.parametrize("T", [1, 2, 7])
def test_causal_mask(device, T):
    m = attention.causal_mask(T, device=device)
    assert m.dtype == torch.bool and m.shape == (T, T) and m.device.type == device.type
    expected = torch.tensor([[j <= i for j in range(T)] for i in range(T)], device=device)
    assert torch.equal(m, expected)


def test_causal_mask_default_device():
    assert attention.causal_mask(3).device == torch.empty(0).device


# --- multi-head attention -----------------------------------------------------------------------


def mha_module(gen, E, num_heads, device, dtype):
    """An nn.MultiheadAttention with random weights and biases (its init zeroes the biases)."""
    mha = nn.MultiheadAttention(E, num_heads, batch_first=True).to(device=device, dtype=dtype).eval()
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * E**-0.5)
    return mha, mha_params(mha)


def mha_reference(mha, query, key, value, mask, num_heads):
    """nn.MultiheadAttention given our bool mask (True = may attend); its masks mean True = block."""
    kwargs = dict(need_weights=True, average_attn_weights=False)
    if mask is not None and mask.dim() == 3 and mask.shape[1] == 1:
        kwargs["key_padding_mask"] = ~mask[:, 0]
    elif mask is not None and mask.dim() == 3:
        kwargs["attn_mask"] = ~mask.repeat_interleave(num_heads, dim=0)  # (B * heads, L, S)
    elif mask is not None:
        kwargs["attn_mask"] = ~mask
    with torch.no_grad():
        return mha(query, key, value, **kwargs)


MHA_SHAPES = [(1, 1, 1, 4, 1), (1, 1, 1, 8, 2), (2, 4, 6, 8, 2), (3, 5, 5, 12, 3), (2, 3, 3, 8, 8)]  # B, L, S, E, heads


@pytest.mark.parametrize("B,L,S,E,num_heads", MHA_SHAPES)
@pytest.mark.parametrize("kind", ["self", "cross"])
def test_mha_matches_nn_multiheadattention(device, dtype, gen, B, L, S, E, num_heads, kind):
    if kind == "self":
        S = L
    mha, params = mha_module(gen, E, num_heads, device, dtype)
    query = randn(gen, B, L, E, device=device, dtype=dtype)
    key = query if kind == "self" else randn(gen, B, S, E, device=device, dtype=dtype)
    value = query if kind == "self" else randn(gen, B, S, E, device=device, dtype=dtype)
    masks = {
        "none": None,
        "padding_B1S": padding_mask(gen, B, S, device),
        "random_BLS": random_mask(gen, B, L, S, device=device),
        "random_LS": random_mask(gen, L, S, device=device),
    }
    if L == S:
        masks["causal"] = attention.causal_mask(L, device=device)
    for name, mask in masks.items():
        out, weights = call_pure(attention.multi_head_attention, query, key, value, params, num_heads, mask)
        check_out(out, device, dtype, (B, L, E))
        check_out(weights, device, dtype, (B, num_heads, L, S))
        out_ref, weights_ref = mha_reference(mha, query, key, value, mask, num_heads)
        assert_close(out, out_ref, msg=lambda m: f"mask {name}: {m}")
        assert_close(weights, weights_ref, msg=lambda m: f"mask {name}: {m}")


def test_mha_fully_masked_row_equals_output_bias(device, dtype, gen):
    B, L, S, E, num_heads = 2, 3, 4, 8, 2
    mha, params = mha_module(gen, E, num_heads, device, dtype)
    query, key = randn(gen, B, L, E, device=device, dtype=dtype), randn(gen, B, S, E, device=device, dtype=dtype)
    mask = random_mask(gen, B, L, S, device=device)
    mask[0, 1] = False
    out, weights = call_pure(attention.multi_head_attention, query, key, key, params, num_heads, mask)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    assert torch.equal(weights[0, :, 1], torch.zeros_like(weights[0, :, 1]))
    assert_close(out[0, 1], params["b_o"])
    out_ref, weights_ref = mha_reference(mha, query, key, key, mask, num_heads)
    assert_close(out[1], out_ref[1])
    assert_close(out[0, [0, 2]], out_ref[0, [0, 2]])


def test_mha_calls_sdpa_by_name_once_for_all_heads(monkeypatch, gen):
    calls = []
    original = attention.scaled_dot_product_attention
    monkeypatch.setattr(attention, "scaled_dot_product_attention", lambda *a, **k: calls.append(1) or original(*a, **k))
    _, params = mha_module(gen, 8, 2, "cpu", torch.float64)
    x = torch.randn(2, 3, 8, generator=gen, dtype=torch.float64)
    attention.multi_head_attention(x, x, x, params, 2)
    assert calls


@pytest.mark.parametrize("name", ["scaled_dot_product_attention", "multi_head_attention"])
def test_no_fused_attention(gen, name):
    _, params = mha_module(gen, 8, 2, "cpu", torch.float64)
    x = torch.randn(2, 3, 8, generator=gen, dtype=torch.float64)
    mask = attention.causal_mask(3)
    args = (x, x, x, mask) if name == "scaled_dot_product_attention" else (x, x, x, params, 2, mask)
    names = ops_called(getattr(attention, name), *args)
    assert names
    bad = sorted(n for n in names if any(fnmatch(n, p) for p in FUSED_ATTENTION))
    assert not bad, f"{name} calls fused attention: {bad}"
