"""solutions/transformer.py against F.layer_norm, nn.TransformerEncoderLayer and
nn.TransformerDecoderLayer (eval mode, dropout 0, relu), with the layers' weights copied."""

from __future__ import annotations

from fnmatch import fnmatch

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from solutions import attention, transformer
from tests._helpers import assert_close, call_pure, check_out, mha_params, ops_called, randn

E, HEADS, FF = 8, 2, 16


# --- helpers (purity, op recording) -------------------------------------------------------------


def padding(gen, B, S, device):
    """(B, 1, S) bool, True = may attend: row b keeps its first lengths[b] >= 1 positions."""
    lengths = torch.randint(1, S + 1, (B,), generator=gen)
    lengths[0] = max(1, S - 1) if S > 1 else 1
    return (torch.arange(S)[None, :] < lengths[:, None]).unsqueeze(1).to(device)


def random_mask(gen, L, S, device):
    """(L, S) bool with at least one allowed key per row."""
    m = torch.rand(L, S, generator=gen) < 0.6
    m[torch.arange(L), torch.randint(S, (L,), generator=gen)] = True
    return m.to(device)


def randomize(layer, gen):
    """Random weights everywhere (nn's init zeroes the attention biases and sets LN to 1, 0)."""
    with torch.no_grad():
        for name, p in layer.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float64)
            if "norm" in name and name.endswith("weight"):
                p.copy_(1 + 0.2 * noise)  # LayerNorm gain near 1
            else:
                p.copy_(noise * (p.shape[-1] ** -0.5 if p.dim() == 2 else 0.5))
    return layer.eval()


def block_params(layer):
    def lin(m):
        return m.weight.detach().clone(), m.bias.detach().clone()

    (W1, b1), (W2, b2) = lin(layer.linear1), lin(layer.linear2)
    params = {"self_attn": mha_params(layer.self_attn), "ffn": dict(W1=W1, b1=b1, W2=W2, b2=b2)}
    for name in ("norm1", "norm2", "norm3"):
        if hasattr(layer, name):
            w, b = lin(getattr(layer, name))
            params[name] = dict(weight=w, bias=b)
    if hasattr(layer, "multihead_attn"):
        params["cross_attn"] = mha_params(layer.multihead_attn)
    return params


def run_layer(layer, *args, fastpath, **kwargs):
    """Run an nn layer; without grad, eval mode may take PyTorch's fused "fast path"."""
    if fastpath:
        with torch.no_grad():
            return layer(*args, **kwargs)
    with torch.enable_grad():
        return layer(*args, **kwargs).detach()


# --- layer_norm and feed_forward ----------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1,), (5,), (1, 1, 1), (2, 3, 5), (4, 16), (2, 1, 7)])
@pytest.mark.parametrize("eps", [1e-5, 1e-2])
def test_layer_norm_matches_f_layer_norm(device, dtype, gen, shape, eps):
    D = shape[-1]
    x = randn(gen, *shape, device=device, dtype=dtype, scale=3.0) + 2.0  # a mean far from 0
    weight, bias = randn(gen, D, device=device, dtype=dtype), randn(gen, D, device=device, dtype=dtype)
    y = call_pure(transformer.layer_norm, x, weight, bias, eps)
    check_out(y, device, dtype, shape)
    assert_close(y, F.layer_norm(x, (D,), weight, bias, eps))


def test_layer_norm_default_eps_is_1e_5(gen):
    x = torch.randn(3, 4, generator=gen, dtype=torch.float64) * 1e-2  # small variance: eps matters
    w, b = torch.ones(4, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)
    assert_close(transformer.layer_norm(x, w, b), F.layer_norm(x, (4,), w, b, 1e-5))


def test_layer_norm_does_not_call_builtin(gen):
    x = torch.randn(2, 3, 4, generator=gen, dtype=torch.float64)
    w, b = torch.ones(4, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)
    names = ops_called(lambda: transformer.layer_norm(x, w, b))
    assert names and not [n for n in names if fnmatch(n, "*layer_norm*")]


@pytest.mark.parametrize("shape", [(1, 1, E), (3, 4, E), (E,)])
def test_feed_forward_matches_encoder_layer_mlp(device, dtype, gen, shape):
    layer = randomize(nn.TransformerEncoderLayer(E, HEADS, FF, dropout=0.0, batch_first=True), gen)
    layer = layer.to(device=device, dtype=dtype)
    ffn = block_params(layer)["ffn"]
    x = randn(gen, *shape, device=device, dtype=dtype)
    y = call_pure(transformer.feed_forward, x, ffn["W1"], ffn["b1"], ffn["W2"], ffn["b2"])
    check_out(y, device, dtype, shape)
    with torch.no_grad():
        assert_close(y, layer.linear2(F.relu(layer.linear1(x))))


# --- encoder block ------------------------------------------------------------------------------


def torch_layer(cls, gen, device, dtype, norm_first: bool):
    """PyTorch's own block (the oracle) with the contract's sizes and random weights."""
    layer = cls(E, HEADS, FF, dropout=0.0, activation="relu", batch_first=True, norm_first=norm_first)
    return randomize(layer, gen).to(device=device, dtype=dtype)


@pytest.mark.parametrize("B,T", [(1, 1), (2, 5), (3, 4)])
@pytest.mark.parametrize("norm_first", [False, True], ids=["postLN", "preLN"])
@pytest.mark.parametrize("fastpath", [False, True], ids=["grad", "nograd"])
def test_encoder_block_matches_nn(device, dtype, gen, B, T, norm_first, fastpath):
    layer = torch_layer(nn.TransformerEncoderLayer, gen, device, dtype, norm_first)
    params = block_params(layer)
    x = randn(gen, B, T, E, device=device, dtype=dtype)
    cases = {
        "none": (None, {}),
        "causal_TT": (attention.causal_mask(T, device=device), None),
        "random_TT": (random_mask(gen, T, T, device), None),
        "padding_B1T": (padding(gen, B, T, device), None),
    }
    for name, (mask, kwargs) in cases.items():
        if kwargs is None:
            kwargs = dict(src_key_padding_mask=~mask[:, 0]) if mask.dim() == 3 else dict(src_mask=~mask)
        y = call_pure(transformer.encoder_block, x, params, HEADS, mask, norm_first)
        check_out(y, device, dtype, (B, T, E))
        assert_close(y, run_layer(layer, x, fastpath=fastpath, **kwargs), msg=lambda m: f"mask {name}: {m}")


# --- decoder block ------------------------------------------------------------------------------


@pytest.mark.parametrize("B,T,S", [(1, 1, 1), (2, 4, 6), (3, 5, 3)])
@pytest.mark.parametrize("norm_first", [False, True], ids=["postLN", "preLN"])
def test_decoder_block_matches_nn(device, dtype, gen, B, T, S, norm_first):
    layer = torch_layer(nn.TransformerDecoderLayer, gen, device, dtype, norm_first)
    params = block_params(layer)
    x, memory = randn(gen, B, T, E, device=device, dtype=dtype), randn(gen, B, S, E, device=device, dtype=dtype)
    causal = attention.causal_mask(T, device=device)
    tgt_pad, mem_pad, mem_rand = padding(gen, B, T, device), padding(gen, B, S, device), random_mask(gen, T, S, device)
    # The diagonal stays allowed, so after the AND with the causal mask every row keeps a key.
    self_rand = random_mask(gen, T, T, device) | torch.eye(T, dtype=torch.bool, device=device)
    # (kwargs of decoder_block, kwargs of nn.TransformerDecoderLayer); nn's bool masks mean True = block.
    cases = {
        "causal": (dict(), dict(tgt_mask=~causal)),
        "not_causal": (dict(causal=False), dict()),
        "causal_and_padding": (
            dict(self_mask=tgt_pad, memory_mask=mem_pad),
            dict(tgt_mask=~causal, tgt_key_padding_mask=~tgt_pad[:, 0], memory_key_padding_mask=~mem_pad[:, 0]),
        ),
        "padding_not_causal": (dict(self_mask=tgt_pad, causal=False), dict(tgt_key_padding_mask=~tgt_pad[:, 0])),
        "memory_TS": (dict(memory_mask=mem_rand), dict(tgt_mask=~causal, memory_mask=~mem_rand)),
        "self_TT_and_causal": (dict(self_mask=self_rand), dict(tgt_mask=~(causal & self_rand))),
    }
    for name, (ours, theirs) in cases.items():
        y = call_pure(transformer.decoder_block, x, memory, params, HEADS, norm_first=norm_first, **ours)
        check_out(y, device, dtype, (B, T, E))
        assert_close(y, run_layer(layer, x, memory, fastpath=True, **theirs), msg=lambda m: f"mask {name}: {m}")


def test_decoder_block_fully_masked_memory_gives_finite_output(gen):
    """A batch element with no allowed memory key: cross-attention yields b_o there, never NaN, so
    the output does not depend on that element's memory."""
    B, T, S = 2, 3, 4
    layer = randomize(nn.TransformerDecoderLayer(E, HEADS, FF, dropout=0.0, batch_first=True), gen).double()
    params = block_params(layer)
    x = torch.randn(B, T, E, generator=gen, dtype=torch.float64)
    memory = torch.randn(B, S, E, generator=gen, dtype=torch.float64)
    mem_mask = torch.ones(B, 1, S, dtype=torch.bool)
    mem_mask[1] = False
    y = transformer.decoder_block(x, memory, params, HEADS, memory_mask=mem_mask)
    other = memory.clone()
    other[1] = torch.randn(S, E, generator=gen, dtype=torch.float64)
    assert torch.isfinite(y).all()
    assert_close(y, transformer.decoder_block(x, other, params, HEADS, memory_mask=mem_mask))
    with torch.no_grad():
        assert_close(y[0], layer(x, memory, tgt_mask=~attention.causal_mask(T))[0])


# --- structure: callees by name, no built-ins ---------------------------------------------------


def _count(monkeypatch, names):
    counts = {n: 0 for n in names}
    for n in names:
        original = getattr(transformer, n)

        def wrapper(*a, _n=n, _f=original, **k):
            counts[_n] += 1
            return _f(*a, **k)

        monkeypatch.setattr(transformer, n, wrapper)
    return counts


@pytest.mark.parametrize("norm_first", [False, True])
def test_blocks_call_contract_functions_by_name(monkeypatch, gen, norm_first):
    counts = _count(monkeypatch, ["multi_head_attention", "layer_norm", "feed_forward", "causal_mask"])
    enc = randomize(nn.TransformerEncoderLayer(E, HEADS, FF, dropout=0.0, batch_first=True), gen).double()
    dec = randomize(nn.TransformerDecoderLayer(E, HEADS, FF, dropout=0.0, batch_first=True), gen).double()
    x = torch.randn(2, 3, E, generator=gen, dtype=torch.float64)
    transformer.encoder_block(x, block_params(enc), HEADS, norm_first=norm_first)
    assert counts == {"multi_head_attention": 1, "layer_norm": 2, "feed_forward": 1, "causal_mask": 0}
    transformer.decoder_block(x, x, block_params(dec), HEADS, norm_first=norm_first)
    assert counts == {"multi_head_attention": 3, "layer_norm": 5, "feed_forward": 2, "causal_mask": 1}


@pytest.mark.parametrize("block", ["encoder_block", "decoder_block"])
def test_blocks_use_no_builtin_layers(gen, block):
    kind = nn.TransformerEncoderLayer if block == "encoder_block" else nn.TransformerDecoderLayer
    params = block_params(randomize(kind(E, HEADS, FF, dropout=0.0, batch_first=True), gen).double())
    x = torch.randn(2, 3, E, generator=gen, dtype=torch.float64)
    args = (x, params, HEADS) if block == "encoder_block" else (x, x, params, HEADS)
    names = ops_called(lambda: getattr(transformer, block)(*args))
    forbidden = ("*layer_norm*", "*scaled_dot_product*", "*transformer*layer*", "*multi_head_attention*")
    assert names and not [n for n in names if any(fnmatch(n, p) for p in forbidden)]
