"""The student repository both release modules check, released once per module (it is cheap, and a
module of its own lets the two slow modules run on different workers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from seqlab.cli import main


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "student-repo"
    assert main(["release", str(out)]) == 0
    return out
