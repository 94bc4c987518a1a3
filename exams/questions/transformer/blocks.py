"""Transformer questions, the block: parameter counts, LayerNorm and the FFN by hand, decoder
shapes (image captioning), ViT patch tokens, the block's size as a formula, post-LN and pre-LN.

Validity (``model.fair_draw``): see the package docstring.
"""

from __future__ import annotations

import sympy
import torch

from seqlab.exam.bank.declare import (
    cites,
    equivalents,
    exercises,
    forms,
    formula,
    mistake,
    numeric,
    own_entries,
    text,
    valid_when,
    work,
)
from seqlab.exam.bank.helpers import decs, floats, mat, mha_param_shapes, ref, shape_numel, t
from seqlab.exam.model import EXACT, FOUR_DIGITS
from seqlab.exam.safeexpr import Sym

# --------------------------------------------------------------------------- block sizes


def _ln(E):
    return {"weight": (E,), "bias": (E,)}


def _ffn(E, F):
    return {"W1": (F, E), "b1": (F,), "W2": (E, F), "b2": (E,)}


def _block(kind, E, F, norms=True):
    """The nested params dict of encoder_block/decoder_block, as shapes."""
    parts = {"self_attn": mha_param_shapes(E), "ffn": _ffn(E, F), "norm1": _ln(E), "norm2": _ln(E)}
    if kind == "decoder":
        parts |= {"cross_attn": mha_param_shapes(E), "norm3": _ln(E)}
    return sum(shape_numel(v) for k, v in parts.items() if norms or not k.startswith("norm"))


# Validity (tf.encoder_params): at least two layers; with one, the ``one_layer`` mistake is the key.
# E takes about 220 values (no count shared by a class, test_sharing.py); the heads divide it.
def _sample_block(rng):
    E = 8 * rng.randint(16, 240)
    return {"E": E, "F": rng.choice((2, 4)) * E, "layers": rng.choice((2, 4, 6, 8, 12)), "heads": rng.choice((4, 8))}


@numeric("tf.encoder_params", _sample_block, EXACT, hint="an integer")
@text(
    r"""
{% block question %}
A Transformer encoder stacks {{ p.layers }} identical block{{ "s" if p.layers > 1 }} with model width $E = {{ p.E }}$,
{{ p.heads }} heads and feed-forward width $F = {{ p.F }}$. Each block has multi-head self-attention
($W_q, W_k, W_v, W_o$ of size $E \times E$ with biases), a feed-forward network
($W_1$: $F \times E$, $b_1$, $W_2$: $E \times F$, $b_2$) and two LayerNorms (weight and bias each).
How many parameters do the blocks have (ignore embeddings)?
{% endblock %}
{% block solution %}
Per block $4E^2 + 4E + 2EF + F + E + 4E$; times {{ p.layers }}: ${{ answer|num }}$.
{% endblock %}
"""
)
# 4E^2 + 4E + 2EF + F + E + 4E (7 products, 6 sums) times the layers
@work(lambda v: (14, 2))
@cites("W8 §15.2", "W8 §15", "W8 §15.3", "L5 §17", "L7-8 (Lecture 8) §四.1", "L7-8 (Lecture 8) §四")
@exercises("transformer.encoder_block")
@mistake(
    "no_norms",
    "each LayerNorm has a weight and a bias of size E",
    lambda p: float(p["layers"] * _block("encoder", p["E"], p["F"], norms=False)),
)
@mistake("one_layer", "multiply by the number of layers", lambda p: float(_block("encoder", p["E"], p["F"])))
def encoder_params(p):
    """Parameters of a Transformer encoder."""
    return float(p["layers"] * _block("encoder", p["E"], p["F"]))


@numeric("tf.decoder_params", lambda rng: {**_sample_block(rng), "layers": 1}, EXACT, hint="an integer")
@text(
    r"""
{% block question %}
A Transformer decoder block with $E = {{ p.E }}$, {{ p.heads }} heads and feed-forward width $F = {{ p.F }}$
has masked self-attention, cross-attention (each with $W_q, W_k, W_v, W_o$ of size
$E \times E$ and biases), a feed-forward network ($W_1$: $F \times E$, $b_1$, $W_2$: $E \times F$, $b_2$) and
three LayerNorms (each with a gain and a bias of size $E$). How many parameters does it have?
{% endblock %}
{% block solution %}
$2(4E^2 + 4E) + 2EF + F + E + 6E = {{ answer|num }}$.
{% endblock %}
"""
)
# 2(4E^2 + 4E) + 2EF + F + E + 6E (7 products, 5 sums)
@work(lambda v: (12, 2))
@cites("W8 §16.2", "W8 §16", "L5 §17")
@exercises("transformer.decoder_block")
@mistake(
    "as_encoder",
    "the decoder block also has cross-attention and a third LayerNorm",
    lambda p: float(_block("encoder", p["E"], p["F"])),
)
def decoder_params(p):
    """Parameters of a Transformer decoder block."""
    return float(_block("decoder", p["E"], p["F"]))


# --------------------------------------------------------------------------- LayerNorm, FFN by hand


def _sample_ln(rng):
    return {"x": decs(rng, 4, -3, 3), "gamma": decs(rng, 4, 0.5, 2), "beta": decs(rng, 4, -1, 1)}


def _ln_unbiased(p):
    x = t(p["x"])
    y = (x - x.mean()) / torch.sqrt(x.var(unbiased=True) + 1e-5)
    return floats(y * t(p["gamma"]) + t(p["beta"]))


@numeric("tf.layer_norm", _sample_ln, FOUR_DIGITS, hint="four numbers")
@text(
    r"""
{% block question %}
LayerNorm normalizes each token over its features: $y = \gamma \odot (x - \mu)/\sqrt{\sigma^2 + \epsilon} + \beta$,
with $\mu$ and the biased variance $\sigma^2$ taken over the 4 features and $\epsilon = 10^{-5}$.
For $x = {{ p.x|vec }}$, $\gamma = {{ p.gamma|vec }}$ and $\beta = {{ p.beta|vec }}$, what is $y$?
{% endblock %}
{% block solution %}
$\mu = {{ (p.x|sum / 4)|num }}$; $\sigma^2 = \frac14 \sum (x_i - \mu)^2$; $y = {{ answer|vec }}$.
{% endblock %}
"""
)
@cites("W8 §15.3")
@exercises("transformer.layer_norm")
@mistake("unbiased", "LayerNorm uses the biased variance (divide by 4, not 3)", _ln_unbiased)
def layer_norm(p):
    """LayerNorm of one token."""
    return floats(ref("transformer").layer_norm(t([p["x"]]), t(p["gamma"]), t(p["beta"]), eps=1e-5))


# Validity (general rule): some hidden unit is negative before the ReLU, else the ``no_relu``
# mistake gives the key and the question never tests the nonlinearity (about 15% of draws).
def _sample_ffn(rng):
    return {
        "x": decs(rng, 2, -2, 2),
        "W1": mat(rng, 3, 2),
        "b1": decs(rng, 3, -0.5, 0.5),
        "W2": mat(rng, 2, 3),
        "b2": decs(rng, 2, -0.5, 0.5),
    }


def _ffn_no_relu(p):
    hidden = t(p["x"]) @ t(p["W1"]).T + t(p["b1"])
    return floats(hidden @ t(p["W2"]).T + t(p["b2"]))


@numeric("tf.ffn", _sample_ffn, FOUR_DIGITS, hint="two numbers")
@text(
    r"""
{% block question %}
The position-wise feed-forward network of a Transformer block computes
$y = W_2\, \mathrm{ReLU}(W_1 x + b_1) + b_2$ with
$$W_1 = {{ p.W1|mat }},\ b_1 = {{ p.b1|colvec }},\ W_2 = {{ p.W2|mat }},\ b_2 = {{ p.b2|colvec }}.$$
For the token $x = {{ p.x|colvec }}$, what is $y$?
{% endblock %}
{% block solution %}
$y = {{ answer|vec }}$; the same network is applied to every position independently.
{% endblock %}
"""
)
@cites("W8 §15.3", "L7-8 (Lecture 8) §四.1")
@exercises("transformer.feed_forward")
@mistake("no_relu", "apply ReLU to the hidden layer", _ffn_no_relu)
@own_entries()
def ffn(p):
    """The position-wise feed-forward network."""
    return floats(ref("transformer").feed_forward(t([p["x"]]), t(p["W1"]), t(p["b1"]), t(p["W2"]), t(p["b2"])))


# --------------------------------------------------------------------------- decoder shapes, captioning


# Forms: the weights of one head for one caption, or of every head for the whole batch; one per
# exam. Two counts to compute, as ``tf.vit_tokens`` (its pool's other question) asks: the encoder
# tokens S = Hf*Wf, then the cross-attention weights. (It asked for a shape once, whose entries
# but one are printed in the question: a read-off beside a computation, an unequal pool.)
def _sample_caption(rng, form):
    return {
        "B": rng.randint(2, 4),
        # caption lengths from a wide range: 3-9 gave one pair of counts to 3% of a class
        # (tests/exam/test_sharing.py); the map sizes stay small, so no count meets another key
        "T": rng.randint(3, 19),
        "Hf": rng.choice((3, 4, 6, 7)),
        "Wf": rng.choice((3, 5, 7)),
        "E": rng.choice((8, 16)),
        "heads": rng.choice((2, 4)),
        "case": form,
    }


@numeric("tf.caption_shapes", _sample_caption, EXACT, hint="two integers: encoder tokens, attention weights")
@text(
    r"""
{% block question %}
An image-captioning Transformer flattens a CNN feature map of ${{ p.Hf }} \times {{ p.Wf }}$ positions with $E = {{ p.E }}$
channels into a sequence of encoder tokens. A batch of $B = {{ p.B }}$ caption prefixes of $T = {{ p.T }}$ tokens goes
through a decoder block with {{ p.heads }} heads.
{% if p.case == "one_head" %}
How many tokens does the encoder's sequence have? And during training (teacher forcing, every position of the
prefix at once), how many cross-attention weights does one head compute for one caption prefix?
{% else %}
How many tokens does the encoder's sequence have? And during training (teacher forcing, every position of the
prefix at once), how many cross-attention weights does the block compute for the whole batch, all heads together?
{% endif %}
{% endblock %}
{% block solution %}
The encoder sequence has $S = {{ p.Hf }} \cdot {{ p.Wf }} = {{ p.Hf * p.Wf }}$ tokens; each of the $T = {{ p.T }}$ queries
{% if p.case == "one_head" %}has one weight per encoder token: ${{ p.T }} \cdot {{ p.Hf * p.Wf }}${% else %}of each head and each caption has one weight per encoder token: ${{ p.B }} \cdot {{ p.heads }} \cdot {{ p.T }} \cdot {{ p.Hf * p.Wf }}${% endif %}. Answer: {{ answer|map("int")|join(", ") }}.
{% endblock %}
"""
)
# the encoder's tokens Hf * Wf (one product), the rest read off
@work(lambda v: (1, 0))
@cites("W8 §17", "W8 §16.1", "W8 §16.2", "W8 §16")
@exercises("transformer.decoder_block", "attention.multi_head_attention")
@forms("one_head", "all_heads")
@own_entries()
def caption_shapes(p):
    """Cross-attention in a captioning Transformer."""
    B, T, E, h = p["B"], p["T"], p["E"], p["heads"]
    S = p["Hf"] * p["Wf"]  # the CNN feature map, flattened into S tokens
    z = lambda *s: torch.zeros(*s, dtype=torch.float64)  # noqa: E731
    mha = {k: z(*s) for k, s in mha_param_shapes(E).items()}
    _, w = ref("attention").multi_head_attention(z(B, T, E), z(B, S, E), z(B, S, E), mha, h)
    weights = w.numel() if p["case"] == "all_heads" else w[0, 0].numel()
    return [float(S), float(weights)]


# Forms: with or without a [CLS] token (one more token to count); one per exam.
# A rectangular image of 8-40 patches a side: about 500 token counts, none shared by a class.
def _sample_vit(rng, form):
    patch = rng.choice((8, 14, 16, 32))
    return {
        "height": patch * rng.randint(8, 40),
        "width": patch * rng.randint(8, 40),
        "patch": patch,
        "cls": form == "cls",
    }


@numeric("tf.vit_tokens", _sample_vit, EXACT, hint="two integers: tokens, attention weights per head")
@text(
    r"""
{% block question %}
A Vision Transformer cuts a ${{ p.height }} \times {{ p.width }}$ image (height by width, in pixels) into non-overlapping ${{ p.patch }} \times {{ p.patch }}$
patches, one token each{{ ", and adds one class token" if p.cls }}. How many tokens does the encoder see, and how many
attention weights does one head compute in one self-attention layer for one image?
{% endblock %}
{% block solution %}
$({{ p.height }}/{{ p.patch }}) \cdot ({{ p.width }}/{{ p.patch }}){{ " + 1" if p.cls }}$ tokens, and their square: {{ answer|map("int")|join(", ") }}.
{% endblock %}
"""
)
# (H / P)(W / P) + 1: two quotients, a product, a sum
@work(lambda v: (4, 0))
@cites("W8 §17", "W8 §14")
@exercises("attention.multi_head_attention")
@forms("cls", "no_cls")
def vit_tokens(p):
    """Vision Transformer tokens."""
    n = (p["height"] // p["patch"]) * (p["width"] // p["patch"]) + (1 if p["cls"] else 0)
    return [float(n), float(n * n)]


def _ln_symbols(p):
    return (Sym("E", 1, 64, integer=True), Sym("F", 1, 256, integer=True))


@formula("tf.block_formula", lambda rng, form: {"kind": form}, _ln_symbols)
@text(
    r"""
{% block question %}
Give the number of parameters of one Transformer {{ p.kind }} block as a formula in the width `E` and the feed-forward width `F`
(projections $E \times E$ with biases in every attention layer, FFN $W_1$: $F \times E$, $b_1$, $W_2$: $E \times F$, $b_2$,
LayerNorms with weight and bias{{ "; the decoder also has cross-attention and a third LayerNorm" if p.kind == "decoder" }}).
{% endblock %}
{% block solution %}
${{ answer|latex }}$.
{% endblock %}
"""
)
@cites("W8 §15.2", "W8 §15.3")
@exercises("transformer.encoder_block", "transformer.decoder_block")
@forms("encoder", "decoder")
@equivalents(
    lambda p: (
        ["4*E^2 + 4*E + 2*E*F + F + E + 4*E", "E*(4*E + 9 + 2*F) + F"]
        if p["kind"] == "encoder"
        else ["8*E^2 + 8*E + 2*E*F + F + E + 6*E", "E*(8*E + 15 + 2*F) + F"]
    )
)
@mistake(
    "no_norms",
    "each LayerNorm has 2E parameters",
    lambda p: sympy.expand(_block(p["kind"], _ln_symbols(p)[0].sympy(), _ln_symbols(p)[1].sympy(), norms=False)),
)
def block_formula(p):
    """Transformer block size as a formula."""
    E, F = (s.sympy() for s in _ln_symbols(p))
    return sympy.expand(_block(p["kind"], E, F))


# ------------------------------------------------------------------------------------- exam focus
# The order of residual and LayerNorm in a block (W8 §15.2): post-LN (the notes' "Add & LayerNorm")
# against pre-LN.


def _layer_norm_plain(z: torch.Tensor) -> torch.Tensor:
    E = z.shape[-1]
    return ref("transformer").layer_norm(z, torch.ones(E, dtype=torch.float64), torch.zeros(E, dtype=torch.float64))


def _spread_enough(p) -> bool:
    """Both normalized vectors have variance >= 0.05, so epsilon = 1e-5 moves the answer by under
    1e-4 relative: a student who leaves epsilon out is still inside the tolerance."""
    x = t(p["x"])
    return all(float(z.var(unbiased=False)) >= 0.05 for z in (x, x + _sublayer(p, x)))


def _sublayer(p, z):
    return t(p["a"]) * z + t(p["c"])


def _norm_orders_swapped(p):
    key = norm_order(p)
    return key[3:] + key[:3]


# Validity: the general rule (the swapped and no-residual mistakes are distinguishable from the
# key and each other, no key entry accepts 0), and its own rule ``_spread_enough``: both vectors
# that get normalized have a variance of at least 0.05 (epsilon does not matter, and LN is not
# dividing by almost nothing).
def _sample_norm_order(rng):
    return {"x": decs(rng, 3, -2, 2), "a": decs(rng, 3, -1.5, 1.5, nonzero=True), "c": decs(rng, 3, -1, 1)}


@numeric("tf.norm_order", _sample_norm_order, FOUR_DIGITS, hint="the post-LN output first, then the pre-LN output")
@text(
    r"""
{% block question %}
A sublayer acts on each token on its own: $F(z) = a \odot z + c$ with $a = {{ p.a|vec }}$ and $c = {{ p.c|vec }}$.
$\mathrm{LN}$ is LayerNorm over the 3 features without gain and shift: $\mathrm{LN}(z) = (z - \mu)/\sqrt{\sigma^2 + \epsilon}$,
$\mu$ and $\sigma^2$ the mean and the (biased, divide by 3) variance of $z$, $\epsilon = 10^{-5}$.
For the token $x = {{ p.x|vec }}$, give the output of the block written as in the notes, the post-LN form
$y_{\text{post}} = \mathrm{LN}(x + F(x))$, and of the pre-LN form $y_{\text{pre}} = x + F(\mathrm{LN}(x))$.
Keep full precision in intermediate steps.
{% endblock %}
{% block solution %}
Post-LN adds the residual first and normalizes the sum; pre-LN normalizes the sublayer's input and adds the raw $x$ back:
$y_{\text{post}} = {{ answer[:3]|vec }}$, $y_{\text{pre}} = {{ answer[3:]|vec }}$.
{% endblock %}
"""
)
@cites("W8 §15.2", "W8 §15.3", "L7-8 (Lecture 8) §四.1", "L5 §17")
@exercises("transformer.encoder_block", "transformer.layer_norm")
@valid_when(_spread_enough)
@mistake(
    "swapped",
    "post-LN normalizes after the residual add: LN(x + F(x)); pre-LN normalizes the sublayer's input: x + F(LN(x))",
    _norm_orders_swapped,
)
@mistake("no_residual", "both forms keep the residual path x + ...", residual=False)
def norm_order(p, residual=True):
    """Post-LN and pre-LN blocks."""
    x = t(p["x"])
    post = _layer_norm_plain(x + _sublayer(p, x)) if residual else _layer_norm_plain(_sublayer(p, x))
    pre = x + _sublayer(p, _layer_norm_plain(x)) if residual else _sublayer(p, _layer_norm_plain(x))
    return floats(post) + floats(pre)
