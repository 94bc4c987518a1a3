"""Vanilla RNN questions: parameter counts, shapes, a forward step, the loss, BPTT gradients,
vanishing/exploding gradients, truncated BPTT, the embedding lookup and greedy decoding.

Validity (``model.fair_draw``): every draw keeps each named mistake outside the tolerance of
the key and every key entry clearly away from 0; the rules each question adds, and the forms
that are fixed per exam, are stated above its generator.
"""

from __future__ import annotations

# isort: off
# imported in this order, the questions register in the bank's order (forward, backward, generation):
# docs/coverage.md and the bank preview list them in that order
from . import forward  # noqa: F401
from . import gradients  # noqa: F401
from . import generation  # noqa: F401

# isort: on
