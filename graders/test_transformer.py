"""Hidden graders for exercises/transformer.py (notes W8 §15-§16, L5 §17, L7-8 §四.1).

LayerNorm and the feed-forward network are checked on odd model sizes and batch shapes of
every rank; the blocks in both post-LN and pre-LN form, with (T, T) causal and (B, 1, T)
padding masks, causal on and off, and B = T = S = 1.

The blocks call the student's ``multi_head_attention``, ``causal_mask``, ``layer_norm`` and
``feed_forward``; during a graded call of a block the engine swaps those for correct ones, so
a bug in one of them is charged once, where it is. The known wrong variants below are built
from the reference pieces, on the same inputs, to name the mistake a block's output matches.
"""

from __future__ import annotations

import functools
import math

import pytest
import torch

from seqlab.grading.autograd import TITLE as AUTOGRAD_TITLE
from seqlab.grading.autograd import check_autograd
from seqlab.grading.checks import Case, from_table
from seqlab.labs.session import task_lab_tests
from seqlab.labs.variants import variant_tests

grades = pytest.mark.grades
DTYPES = pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
NORM_FIRST = pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])


# --- inputs ----------------------------------------------------------------------------------


def norm_params(case):
    """weight near 1 and bias near 0, both off by enough that a swapped or dropped one is seen."""
    return {"weight": 1.0 + case.randn("E", scale=0.3), "bias": case.randn("E", scale=0.3)}


def mha_params(case):
    params = {f"W_{n}": case.randn("E", "E", scale=1 / math.sqrt(case.E)) for n in "qkvo"}
    params.update({f"b_{n}": case.randn("E", scale=0.3) for n in "qkvo"})
    return params


def ffn_params(case):
    return {
        "W1": case.randn("F", "E", scale=1 / math.sqrt(case.E)),
        "b1": case.randn("F", scale=0.5),
        "W2": case.randn("E", "F", scale=1 / math.sqrt(case.F)),
        "b2": case.randn("E", scale=0.3),
    }


def block_params(case, *, decoder=False):
    params = {
        "self_attn": mha_params(case),
        "ffn": ffn_params(case),
        "norm1": norm_params(case),
        "norm2": norm_params(case),
    }
    if decoder:
        params["cross_attn"] = mha_params(case)
        params["norm3"] = norm_params(case)
    return params


def padding_mask(case, length, *, min_len=1):
    """(B, 1, length) bool: each sequence keeps a prefix of random length in [min_len, length]."""
    size = getattr(case, length)
    lengths = torch.tensor([case.integer(min_len, size) for _ in range(case.B)])
    return (torch.arange(size)[None, :] < lengths[:, None]).unsqueeze(1).to(case.device)


# --- layer_norm ------------------------------------------------------------------------------


def layer_norm_variant(
    x, weight, bias, eps=1e-5, *, unbiased=False, eps_outside=False, no_eps=False, dims=(-1,), swap=False
):
    if dims == "all":  # resolved here, where the rank of x is known
        dims = tuple(range(x.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, keepdim=True, unbiased=unbiased)
    if no_eps:
        y = (x - mean) / torch.sqrt(var)
    elif eps_outside:
        y = (x - mean) / (torch.sqrt(var) + eps)
    else:
        y = (x - mean) / torch.sqrt(var + eps)
    return y * bias + weight if swap else y * weight + bias


LAYER_NORM_MISTAKES = [
    (
        "unbiased variance",
        {"unbiased": True},
        "LayerNorm divides by E, not E - 1 (torch.var defaults to unbiased; use unbiased=False / correction=0).",
    ),
    (
        "eps outside the square root",
        {"eps_outside": True},
        "eps is added to the variance, inside the root: (x - mean) / sqrt(var + eps).",
    ),
    (
        "eps missing",
        {"no_eps": True},
        "add eps to the variance before the square root; it matters when the variance is small.",
    ),
    (
        "normalized over the wrong axis",
        {"dims": (-2,)},
        "LayerNorm normalizes each token over its own features, the last axis (dim=-1), not across tokens "
        "(that is closer to BatchNorm, W8 §15.3).",
    ),
    (
        "normalized over all axes",
        {"dims": "all"},
        "the mean and variance are per token, over the last axis only (dim=-1, keepdim=True).",
    ),
    ("gain and shift swapped", {"swap": True}, "y = x_hat * weight + bias: weight (gamma) scales, bias (beta) shifts."),
]


layer_norm_mistakes = from_table(LAYER_NORM_MISTAKES, layer_norm_variant)


@grades("transformer.layer_norm", title="matches F.layer_norm, (B, T, E) input, odd E=7")
@DTYPES
def test_layer_norm(grade, make, dtype):
    case = Case(make, B=2, T=3, E=7, dtype=dtype)
    x = case.randn("B", "T", "E", scale=2.0) + case.randn(
        "B", "T", 1
    )  # tokens with their own means: a mean over the wrong axis shows
    w, b = norm_params(case).values()
    grade.check(x, w, b, case=case, mistakes=layer_norm_mistakes)


@grades("transformer.layer_norm", title="eps=0.1 and features of scale 1e-2, where eps matters")
def test_layer_norm_eps(grade, make):
    case = Case(make, B=2, T=4, E=5, eps=0.1, x_scale=1e-2)
    x = case.randn("B", "T", "E", scale=case.x_scale)
    w, b = norm_params(case).values()
    grade.check(x, w, b, eps=case.eps, case=case, mistakes=layer_norm_mistakes)


@grades("transformer.layer_norm", title="2-D input (N, E), features of scale 1e3 around a mean of 1e4")
def test_layer_norm_2d_offset(grade, make):
    case = Case(make, N=4, E=9, x="1e4 + 1e3 * randn")
    x = case.randn("N", "E", scale=1e3) + 1e4
    w, b = norm_params(case).values()
    grade.check(x, w, b, case=case, mistakes=layer_norm_mistakes)


@grades("transformer.layer_norm", title="B=1, T=1, E=3, float32")
def test_layer_norm_single(grade, make):
    case = Case(make, B=1, T=1, E=3, dtype=torch.float32)
    x = case.randn("B", "T", "E")
    w, b = norm_params(case).values()
    grade.check(x, w, b, case=case, mistakes=layer_norm_mistakes)


# --- feed_forward ----------------------------------------------------------------------------


def feed_forward_variant(x, W1, b1, W2, b2, *, act="relu", relu_out=False):
    h = x @ W1.T + b1
    h = {"relu": torch.relu, "none": lambda t: t, "gelu": torch.nn.functional.gelu, "tanh": torch.tanh}[act](h)
    y = h @ W2.T + b2
    return torch.relu(y) if relu_out else y


FFN_MISTAKES = [
    (
        "activation missing",
        {"act": "none"},
        "FFN(x) = relu(x @ W1.T + b1) @ W2.T + b2; without the ReLU the two layers collapse into one linear map.",
    ),
    (
        "ReLU on the output too",
        {"relu_out": True},
        "only the hidden layer has a ReLU; the second layer's output is used as it is.",
    ),
    (
        "GELU instead of ReLU",
        {"act": "gelu"},
        "the contract's FFN (and nn.TransformerEncoderLayer's default) uses ReLU.",
    ),
    ("tanh instead of ReLU", {"act": "tanh"}, "the hidden activation is ReLU: max(0, x @ W1.T + b1)."),
]


feed_forward_mistakes = from_table(FFN_MISTAKES, feed_forward_variant)


@grades("transformer.feed_forward", title="(B, T, E) input, odd E=5, F=11")
@DTYPES
def test_feed_forward(grade, make, dtype):
    case = Case(make, B=2, T=4, E=5, F=11, dtype=dtype)
    params = ffn_params(case)
    grade.check(case.randn("B", "T", "E"), *params.values(), case=case, mistakes=feed_forward_mistakes)


@grades("transformer.feed_forward", title="any leading shape (..., E), E=3, F=7")
@pytest.mark.parametrize("shape", [(1, 1, 3), (6, 3), (2, 2, 3, 3)], ids=["B=1,T=1", "2-D", "4-D"])
def test_feed_forward_shapes(grade, make, shape):
    case = Case(make, x=tuple(shape), E=shape[-1], F=7)
    params = ffn_params(case)
    grade.check(case.randn("x"), *params.values(), case=case, mistakes=feed_forward_mistakes)


# --- encoder_block ---------------------------------------------------------------------------


def encoder_variant(
    ref, x, params, num_heads, mask=None, norm_first=False, *, when="all", swap_ln=False, res_attn=True,
    res_ffn=True, norm_sublayer=False, one_norm=False, use_mask=True, final_norm=False, res_normed="",
):  # fmt: skip
    """The encoder block from the reference's pieces, with switches for the classic slips (the
    defaults are correct); ``when``: the blocks the slip is made in, "all", "post-LN" or "pre-LN";
    ``res_normed``: the pre-LN sublayers ("attn", "ffn" or both) whose residual adds the
    normalised input instead of the raw one."""
    if when not in ("all", "pre-LN" if norm_first else "post-LN"):
        return encoder_variant(ref, x, params, num_heads, mask, norm_first)
    mha, ln, ff = ref("attention.multi_head_attention"), ref("transformer.layer_norm"), ref("transformer.feed_forward")
    m = mask if use_mask else None

    def sa(h):
        return mha(h, h, h, params["self_attn"], num_heads, m)[0]

    def ffn(h):
        p = params["ffn"]
        return ff(h, p["W1"], p["b1"], p["W2"], p["b2"])

    def norm(h, name):
        name = "norm1" if one_norm else name
        return ln(h, params[name]["weight"], params[name]["bias"])

    if norm_first != swap_ln:
        h = norm(x, "norm1")
        x = (h if "attn" in res_normed else x if res_attn else 0) + sa(h)
        h = norm(x, "norm2")
        y = (h if "ffn" in res_normed else x if res_ffn else 0) + ffn(h)
        return norm(y, "norm2") if final_norm else y
    if norm_sublayer:
        x = x + norm(sa(x), "norm1")
        return x + norm(ffn(x), "norm2")
    x = norm((x if res_attn else 0) + sa(x), "norm1")
    return norm((x if res_ffn else 0) + ffn(x), "norm2")


# The swap is two rows, one per block form, so that a block that ignores norm_first (always
# post-LN, say) is one of them and each case's feedback says the form it asked for.
ENCODER_MISTAKES = [
    (
        "pre-LN block computed as post-LN",
        {"swap_ln": True, "when": "pre-LN"},
        "norm_first=True is pre-LN, x = x + SA(norm1(x)); norm_first=False is post-LN, x = norm1(x + SA(x)).",
    ),
    (
        "post-LN block computed as pre-LN",
        {"swap_ln": True, "when": "post-LN"},
        "norm_first=False is post-LN, x = norm1(x + SA(x)); norm_first=True is pre-LN, x = x + SA(norm1(x)).",
    ),
    (
        "residual missing around the attention",
        {"res_attn": False},
        "each sublayer is wrapped in a residual connection: add the sublayer's input to its output.",
    ),
    (
        "residual missing around the FFN",
        {"res_ffn": False},
        "the FFN sublayer has its own residual connection: x + FFN(x) (post-LN: inside norm2).",
    ),
    (
        "LayerNorm on the sublayer output",
        {"norm_sublayer": True},
        "post-LN normalizes the sum, norm1(x + SA(x)), not x + norm1(SA(x)).",
    ),
    (
        "norm1 used for both LayerNorms",
        {"one_norm": True},
        "the block has two LayerNorms with their own parameters: norm1 after (or before) attention, norm2 for the FFN.",
    ),
    (
        "mask not passed to the attention",
        {"use_mask": False},
        "the block's mask goes to multi_head_attention(x, x, x, ..., mask).",
    ),
    (
        "extra final LayerNorm",
        {"final_norm": True},
        "a pre-LN block ends with the residual sum x + FFN(norm2(x)); the final LayerNorm belongs to the "
        "whole encoder, not to each block.",
    ),
    *[
        (
            "pre-LN residual adds the normalised input",
            {"res_normed": sublayers, "when": "pre-LN"},
            "in a pre-LN block only the sublayer sees the normalised input; the skip path carries x itself: "
            "x = x + SA(norm1(x)), then x = x + FFN(norm2(x)), not norm1(x) + SA(norm1(x)).",
        )
        for sublayers in ("attn ffn", "attn", "ffn")
    ],
]


def encoder_mistakes(ref):
    """The rows of ENCODER_MISTAKES, each built from the reference's own pieces (the ``ref`` fixture)."""
    return from_table(ENCODER_MISTAKES, functools.partial(encoder_variant, ref))


@grades("transformer.encoder_block", title="matches nn.TransformerEncoderLayer, no mask")
@NORM_FIRST
def test_encoder(grade, make, ref, norm_first):
    case = Case(make, B=2, T=5, E=8, F=16, num_heads=2, norm_first=norm_first)
    x = case.randn("B", "T", "E")
    grade.check(x, block_params(case), case.num_heads, norm_first=norm_first, case=case, mistakes=encoder_mistakes(ref))


@grades("transformer.encoder_block", title="(B, 1, T) padding mask")
@NORM_FIRST
def test_encoder_padding(grade, make, ref, norm_first):
    case = Case(make, B=3, T=6, E=6, F=10, num_heads=3, mask="(B, 1, T) padding", norm_first=norm_first)
    mask = padding_mask(case, "T")
    mask[0, 0, -1] = False  # at least one sequence is padded
    x, params = case.randn("B", "T", "E"), block_params(case)
    grade.check(x, params, case.num_heads, mask=mask, norm_first=norm_first, case=case, mistakes=encoder_mistakes(ref))


@grades("transformer.encoder_block", title="(T, T) causal mask, float32")
def test_encoder_causal_float32(grade, make, ref):
    case = Case(make, B=2, T=4, E=8, F=12, num_heads=4, mask="(T, T) causal", dtype=torch.float32)
    mask = ref("attention.causal_mask")(case.T, device=case.device)
    x = case.randn("B", "T", "E")
    grade.check(x, block_params(case), case.num_heads, mask=mask, case=case, mistakes=encoder_mistakes(ref))


@grades("transformer.encoder_block", title="B=1, T=1, pre-LN")
def test_encoder_single(grade, make, ref):
    case = Case(make, B=1, T=1, E=4, F=8, num_heads=2, norm_first=True)
    x = case.randn("B", "T", "E")
    grade.check(x, block_params(case), case.num_heads, norm_first=True, case=case, mistakes=encoder_mistakes(ref))


# --- decoder_block ---------------------------------------------------------------------------


def decoder_variant(
    ref, x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False, *,
    when="all", swap_ln=False, flip_causal=False, drop_self_mask=False, use_or=False, cross_from_x=False,
    drop_memory_mask=False, norm_memory=False, res=True, cross_params="cross_attn",
):  # fmt: skip
    """The decoder block from the reference's pieces, with switches for the classic slips (the
    defaults are correct); ``when``: the calls the slip is made on, "all", "causal" or "not causal"."""
    if when not in ("all", "causal" if causal else "not causal"):
        return decoder_variant(ref, x, memory, params, num_heads, self_mask, memory_mask, causal, norm_first)
    mha, ln, ff = ref("attention.multi_head_attention"), ref("transformer.layer_norm"), ref("transformer.feed_forward")
    pre = norm_first != swap_ln
    causal = causal != flip_causal
    sm = None if drop_self_mask else self_mask
    if causal:
        future = ref("attention.causal_mask")(x.shape[1], device=x.device)
        sm = future if sm is None else (sm | future if use_or else sm & future)
    mm = None if drop_memory_mask else memory_mask

    def norm(h, name):
        return ln(h, params[name]["weight"], params[name]["bias"])

    def sa(h):
        return mha(h, h, h, params["self_attn"], num_heads, sm)[0]

    def ca(h):
        mem = h if cross_from_x else (norm(memory, "norm2") if norm_memory and pre else memory)
        return mha(h, mem, mem, params[cross_params], num_heads, mm)[0]

    def ffn(h):
        p = params["ffn"]
        return ff(h, p["W1"], p["b1"], p["W2"], p["b2"])

    keep = 1.0 if res else 0.0
    if pre:
        x = keep * x + sa(norm(x, "norm1"))
        x = keep * x + ca(norm(x, "norm2"))
        return keep * x + ffn(norm(x, "norm3"))
    x = norm(keep * x + sa(x), "norm1")
    x = norm(keep * x + ca(x), "norm2")
    return norm(keep * x + ffn(x), "norm3")


def on_calls(when, rows):
    """``rows`` as slips made on one kind of call only ("causal" or "not causal"): on the other
    kind the variant is the right block (``decoder_variant``'s ``when``)."""
    return [(name, {**how, "when": when}, why) for name, how, why in rows]


# (name, variant knobs, the lesson)
DECODER_MISTAKES = [
    (
        "cross-attention uses x as keys",
        {"cross_from_x": True},
        "cross-attention takes its queries from the decoder but its keys and values from the encoder output: "
        "multi_head_attention(x, memory, memory, ...).",
    ),
    *on_calls(
        "causal",
        [
            (
                "causal mask missing",
                {"flip_causal": True},
                "with causal=True, combine causal_mask(T) with self_mask so position t cannot see later targets.",
            ),
            (
                "self_mask dropped when causal",
                {"drop_self_mask": True},
                "with causal=True the self-attention mask is causal_mask(T) & self_mask: keep the padding mask too.",
            ),
            (
                "masks combined with OR",
                {"use_or": True},
                "a key is allowed only if both masks allow it: combine them with & (logical AND), not |.",
            ),
        ],
    ),
    *on_calls(
        "not causal",
        [
            (
                "causal mask applied although causal=False",
                {"flip_causal": True},
                "causal=False means no look-ahead mask: use self_mask alone.",
            ),
            (
                "self_mask not used",
                {"drop_self_mask": True},
                "self_mask belongs to the self-attention: multi_head_attention(x, x, x, ..., self_mask).",
            ),
        ],
    ),
    (
        "memory_mask not used",
        {"drop_memory_mask": True},
        "memory_mask belongs to the cross-attention: multi_head_attention(x, memory, memory, ..., memory_mask).",
    ),
    (
        "post-LN and pre-LN swapped",
        {"swap_ln": True},
        "norm_first=False is post-LN, x = norm(x + sublayer(x)); norm_first=True is pre-LN, x = x + sublayer(norm(x)).",
    ),
    (
        "memory normalized in pre-LN",
        {"norm_memory": True},
        "pre-LN normalizes the decoder stream (norm2(x)) before cross-attention; the encoder memory is used as it is.",
    ),
    (
        "residual connections missing",
        {"res": False},
        "each of the three sublayers is wrapped in a residual connection: add its input to its output.",
    ),
    (
        "self-attention parameters used for cross-attention",
        {"cross_params": "self_attn"},
        "cross-attention has its own weights, params['cross_attn'].",
    ),
]


def decoder_mistakes(ref):
    """The rows of DECODER_MISTAKES, each built from the reference's own pieces (the ``ref`` fixture)."""
    return from_table(DECODER_MISTAKES, functools.partial(decoder_variant, ref))


def decoder_inputs(case):
    """x (B, T, E), memory (B, S, E), params (with cross_attn and norm3), num_heads."""
    x, memory = case.randn("B", "T", "E"), case.randn("B", "S", "E")
    return x, memory, block_params(case, decoder=True), case.num_heads


@grades("transformer.decoder_block", title="matches nn.TransformerDecoderLayer, causal, no other masks, S != T")
@NORM_FIRST
def test_decoder(grade, make, ref, norm_first):
    case = Case(make, B=2, T=4, S=6, E=8, F=12, num_heads=2, causal=True, norm_first=norm_first)
    grade.check(*decoder_inputs(case), norm_first=norm_first, case=case, mistakes=decoder_mistakes(ref))


@NORM_FIRST
@grades(
    "transformer.decoder_block",
    title="causal combined with a (B, 1, T) self_mask, and a (B, 1, S) memory_mask",
    weight=1.5,
)
def test_decoder_masks(grade, make, ref, norm_first):
    case = Case(make, B=3, T=5, S=4, E=6, F=10, num_heads=2, causal=True, norm_first=norm_first)
    case.note("self_mask=(B, 1, T) padding, memory_mask=(B, 1, S) padding")
    inputs = decoder_inputs(case)
    self_mask, memory_mask = padding_mask(case, "T", min_len=2), padding_mask(case, "S")
    self_mask[1, 0, -1] = False  # a padded target sequence and a padded memory, whatever the draw
    memory_mask[2, 0, -1] = False
    masks = dict(self_mask=self_mask, memory_mask=memory_mask)
    grade.check(*inputs, **masks, norm_first=norm_first, case=case, mistakes=decoder_mistakes(ref))


@grades("transformer.decoder_block", title="causal=False with a (B, 1, T) self_mask and a (B, T, S) memory_mask")
@pytest.mark.parametrize(
    "norm_first, dtype", [(False, torch.float64), (True, torch.float32)], ids=["post-LN, float64", "pre-LN, float32"]
)
def test_decoder_not_causal(grade, make, ref, norm_first, dtype):
    case = Case(make, B=2, T=4, S=3, E=8, F=8, num_heads=4, norm_first=norm_first, dtype=dtype)
    case.note("causal=False, self_mask=(B, 1, T) padding, memory_mask=(B, T, S)")
    inputs = decoder_inputs(case)
    self_mask = padding_mask(case, "T", min_len=2)
    self_mask[0, 0, -1] = False
    memory_mask = case.mask("B", "T", "S", p_keep=0.6)
    memory_mask[..., 0] = True  # every query sees at least one memory position
    masks = dict(self_mask=self_mask, memory_mask=memory_mask)
    grade.check(*inputs, **masks, causal=False, norm_first=norm_first, case=case, mistakes=decoder_mistakes(ref))


@grades("transformer.decoder_block", title="B=1, T=1, S=1, pre-LN")
def test_decoder_single(grade, make, ref):
    case = Case(make, B=1, T=1, S=1, E=4, F=6, num_heads=2, causal=True, norm_first=True)
    grade.check(*decoder_inputs(case), norm_first=True, case=case, mistakes=decoder_mistakes(ref))


# --- the lab: a Transformer that reverses (seqlab/labs/reverser.py: the task, the held-out set) ---


HELDOUT_TITLE = "the trained Transformer reverses fresh sequences exactly, greedy decoding"


# --- supports autograd (a lab trains through it; the public twin is test_<function>_supports_autograd) ---


@grades("transformer.layer_norm", title=AUTOGRAD_TITLE)
def test_layer_norm_supports_autograd(grade, make):
    case = Case(make, B=2, T=3, E=5)
    check_autograd(grade, case.randn("B", "T", "E"), *norm_params(case).values(), case=case)


@grades("transformer.feed_forward", title=AUTOGRAD_TITLE)
def test_feed_forward_supports_autograd(grade, make):
    case = Case(make, B=2, T=3, E=4, F=6)
    check_autograd(grade, case.randn("B", "T", "E"), *ffn_params(case).values(), case=case)


@grades("transformer.encoder_block", title=AUTOGRAD_TITLE)
def test_encoder_supports_autograd(grade, make):
    case = Case(make, B=2, T=3, E=4, F=6, num_heads=2, norm_first=True)
    check_autograd(grade, case.randn("B", "T", "E"), block_params(case), case.num_heads, norm_first=True, case=case)


@grades("transformer.decoder_block", title=AUTOGRAD_TITLE)
def test_decoder_supports_autograd(grade, make):
    case = Case(make, B=2, T=3, S=4, E=4, F=6, num_heads=2, causal=True)
    check_autograd(grade, *decoder_inputs(case), case=case)


globals().update(task_lab_tests("transformer.train_reverser", "exact_match", HELDOUT_TITLE))


# --- every argument tried: the lab's function on its inputs with arguments changed ---------------
# (seqlab/labs/variants.py: another kind, float64, another lr or clip, a text a multiple of seq_len)

globals().update(variant_tests("transformer.train_reverser"))
