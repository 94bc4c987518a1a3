"""scripts/gpu-check.sh without a GPU: it stops at once with exit 2 and says why, a torch that
sees no CUDA is a failure, and what runs only on a GPU machine is well formed.

(On a machine with one it runs a sandboxed child on CUDA, the CUDA tests, sandboxed CUDA and CPU
gradings of the references and of a buggy submission, and the references on CUDA; that path
needs the GPU, so it is run there, not here. What it passes into the sandbox is shown with
stand-in device files in tests/student/test_sandbox_devices.py.)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
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


def test_its_python_and_shell_are_well_formed():
    """What runs only on a GPU machine is at least read here: a slip in it would cost that
    machine's whole run. Each embedded Python program compiles, bash parses the script, and
    shellcheck finds nothing at warning level."""
    script = ROOT / "scripts" / "gpu-check.sh"
    programs = re.findall(r"<<'PY'\n(.*?)\nPY\n", script.read_text(), flags=re.S)
    assert len(programs) == 3  # the sandboxed child's check, the two submissions, the test report
    for program in programs:
        compile(program, "gpu-check.sh", "exec")
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    shellcheck = Path(sys.executable).parent / "shellcheck"
    done = subprocess.run([str(shellcheck), "-S", "warning", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


@pytest.mark.bank  # imports torch twice: ~3 s
def test_with_a_torch_that_sees_no_cuda_it_fails_before_checking(tmp_path):
    """A GPU listed but a CPU build of torch (this machine's): exit 1 and why, never a PASS."""
    (tmp_path / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: a listed GPU (UUID: none)'\n")
    (tmp_path / "nvidia-smi").chmod(0o755)
    done = subprocess.run(
        ["/bin/bash", str(ROOT / "scripts" / "gpu-check.sh")],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": f"{tmp_path}:/usr/bin:/bin", "HOME": str(tmp_path), "SEQLAB_GPU_PYTHON": sys.executable},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"gpu-check: torch in {sys.executable} sees no CUDA device" in done.stderr
    assert "PASS" not in done.stdout
