"""Transformer questions: positional encodings (``positional``), and the block (``blocks``):
parameter counts, LayerNorm and FFN by hand, decoder shapes (image captioning), ViT patch
tokens, the block's size as a formula, post-LN against pre-LN.

Validity (``model.fair_draw``): every draw keeps each named mistake outside the tolerance of
the key and every key entry clearly away from 0; the rules each question adds, and the forms
that are fixed per exam, are stated above its generator.
"""

from __future__ import annotations

# isort: off
# imported in this order, the questions register in the bank's order (encodings, then the block):
# docs/coverage.md and the bank preview list them in that order
from . import positional  # noqa: F401
from . import blocks  # noqa: F401

# isort: on
