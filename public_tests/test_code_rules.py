"""The language subset, checked the way the grader checks it: one test per module, failing with
every rule it breaks, where, and what to write instead (README.md, "The language subset")."""

from __future__ import annotations

from pathlib import Path

import pytest
from _subset.modules import read_modules

EXERCISES = Path(__file__).resolve().parents[1] / "exercises"
TOPICS = ("optimizers", "rnn", "lstm_gru", "attention", "positional", "transformer", "selective_scan")


@pytest.fixture(scope="module")
def verdict():
    return read_modules(EXERCISES)


@pytest.mark.parametrize("module", TOPICS)
def test_module_follows_the_language_subset(verdict, module):
    if module in verdict.refused:
        pytest.fail(verdict.refused[module], pytrace=False)


def test_helper_modules_follow_the_language_subset(verdict):
    helpers = {m: why for m, why in verdict.refused.items() if m not in TOPICS}
    if helpers:
        pytest.fail("\n".join(helpers.values()), pytrace=False)
