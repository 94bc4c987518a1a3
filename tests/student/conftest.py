"""Fixtures of the attack bank and the probe packs, built once per worker (session scope: a
module-scoped fixture would tie each module to one worker, see tests/conftest.py)."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from seqlab.config import load_config
from seqlab.student.sandbox import probe


@pytest.fixture(scope="session")
def fast_config():
    """The course config with a 1.5 s call timeout, so the hanging attacks cost seconds, not
    minutes: a hanging call spins a CPU until it is stopped, twice per hanging function (the
    timeout strikes). Every other call of the banks takes milliseconds (a few tens under the
    kernel recorder), so 1.5 s is still a margin of 30x or more on a loaded machine."""
    config = load_config()
    return replace(config, limits=replace(config.limits, call_timeout_s=1.5, import_timeout_s=10.0))


@pytest.fixture(scope="session")
def sandbox_mode() -> str:
    """The real bubblewrap sandbox; where bwrap cannot run, the fallback guards ("none"), except
    under CI, which must prove the sandbox."""
    problem = probe()
    if not problem:
        return "bwrap"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the attack bank in the real sandbox, and bwrap cannot run here: {problem}")
    return "none"
