"""scripts/gpu-check.sh without a GPU: it stops at once with exit 2 and says why.

(On a machine with one it runs the CUDA tests, a sandboxed CUDA grading and the references on
CUDA; that path needs the GPU, so it is run there, not here.)
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("nvidia_smi", [None, "echo 'NVIDIA-SMI has failed: no driver' >&2; exit 9"])
def test_without_a_cuda_device_it_exits_2_at_once(tmp_path, nvidia_smi):
    # PATH holds only what the script runs before its verdict, so a real nvidia-smi is not found
    for tool in ("dirname", "grep"):
        (tmp_path / tool).symlink_to(shutil.which(tool))
    if nvidia_smi:
        (tmp_path / "nvidia-smi").write_text(f"#!/bin/sh\n{nvidia_smi}\n")
        (tmp_path / "nvidia-smi").chmod(0o755)
    done = subprocess.run(
        ["/bin/bash", str(ROOT / "scripts" / "gpu-check.sh")],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": str(tmp_path), "HOME": str(tmp_path)},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "gpu-check: no CUDA device" in done.stderr and done.stdout == ""
