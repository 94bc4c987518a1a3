"""The question bank: one module per topic registers its generators on import.

``load_bank()`` imports them all (once) and loads the concept questions (multiple choice and
true/false) from ``exams/concepts.yaml``.
"""

from __future__ import annotations

import importlib

TOPICS = ("optimizers", "rnn", "lstm_gru", "attention", "transformer", "ssm", "concepts")

_loaded = False


def load_bank() -> None:
    global _loaded
    if _loaded:
        return
    for topic in TOPICS:
        importlib.import_module(f"{__name__}.{topic}")
    _loaded = True
