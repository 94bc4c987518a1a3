"""Starting the student's child process, importable without torch.

The child spends ~1.5 s importing torch before it can do anything; ``prespawn()`` lets the
grading command start it first thing, so that import overlaps the parent's own start-up.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# Environment the child may see: enough to run torch, nothing that identifies or authorises.
ENV_PASS = ("LANG", "LC_ALL", "TZ", "CUDA_VISIBLE_DEVICES", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
            "SEQLAB_CHILD_THREADS", "LD_LIBRARY_PATH")


@dataclass
class Child:
    proc: subprocess.Popen
    fd_in: int      # parent reads here
    fd_out: int     # parent writes here
    scratch: Path


def spawn() -> Child:
    scratch = Path(tempfile.mkdtemp(prefix="seqlab-student-"))
    parent_r, child_w = os.pipe()
    child_r, parent_w = os.pipe()
    env = {k: os.environ[k] for k in ENV_PASS if k in os.environ}
    env.update(PATH="/usr/local/bin:/usr/bin:/bin", HOME=str(scratch), PYTHONHASHSEED="0", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1", TMPDIR=str(scratch))
    seqlab_parent = str(Path(__file__).resolve().parents[2])
    bootstrap = f"import sys; sys.path.insert(0, {seqlab_parent!r}); from seqlab.student.child import main; main()"
    # SEQLAB_CHILD_STDERR=path keeps the child's own stderr, for debugging seqlab itself.
    debug_err = os.environ.get("SEQLAB_CHILD_STDERR")
    stderr = open(debug_err, "ab") if debug_err else subprocess.DEVNULL
    proc = subprocess.Popen([sys.executable, "-I", "-c", bootstrap, str(child_r), str(child_w)],
                            pass_fds=(child_r, child_w), cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    if debug_err:
        stderr.close()
    os.close(child_r)
    os.close(child_w)
    return Child(proc, parent_r, parent_w, scratch)


_prespawned: list[Child] = []


def prespawn() -> None:
    """Start one child now; the next IsolatedStudent takes it instead of starting its own."""
    if not _prespawned:
        _prespawned.append(spawn())


def take() -> Child:
    while _prespawned:
        child = _prespawned.pop()
        if child.proc.poll() is None:
            return child
    return spawn()
