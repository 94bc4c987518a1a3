"""A real copy of this checkout (every file git tracks or would track, the package included), for
the tests that change the course the way a maintainer does and run seqlab's own commands on it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def checkout(target: Path) -> Path:
    """The files of this working tree that git tracks or would track (no .venv, no outputs)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source, copy = ROOT / name, target / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():  # the public tests' links into the package stay links, as committed
            copy.symlink_to(os.readlink(source))
        elif source.is_file():  # a file deleted in the working tree but still listed is left out
            shutil.copy2(source, copy)
    return target


def seqlab_in(copy: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """``python -m seqlab ARGS`` on the copy: its course (SEQLAB_COURSE) and its package (the
    working folder comes first on ``sys.path`` under ``-m``)."""
    env = {**os.environ, "SEQLAB_COURSE": str(copy)}
    env.pop("SEQLAB_RECORD", None)
    return subprocess.run(
        [sys.executable, "-m", "seqlab", *args], cwd=copy, env=env, capture_output=True, text=True, timeout=timeout
    )
