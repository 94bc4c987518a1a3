"""The student repository both release modules check, released afresh for each test: it takes
under a second, and a module-scoped one would tie the classroom round trip to one worker with
its module (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from seqlab.cli import main


@pytest.fixture
def released(tmp_path) -> Path:
    out = tmp_path / "student-repo"
    assert main(["release", str(out)]) == 0
    return out
