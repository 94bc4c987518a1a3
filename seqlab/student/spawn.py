"""Starting the student's child process, importable without torch.

The child spends ~1.5 s importing torch before it can do anything; ``prespawn()`` lets the
grading command start it first thing, so that import overlaps the parent's own start-up.
With a kernel sandbox (``sandbox.py``) the child starts inside bwrap, which mounts the
submission's ``exercises/`` when it starts: a prespawned child serves only the submission (and
the sandbox) it was started for.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# Environment the child may see: enough to run torch, nothing that identifies or authorises.
ENV_PASS = (
    "LANG",
    "LC_ALL",
    "TZ",
    "CUDA_VISIBLE_DEVICES",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "SEQLAB_CHILD_THREADS",
    "LD_LIBRARY_PATH",
)


@dataclass
class Child:
    proc: subprocess.Popen
    fd_in: int  # parent reads here
    fd_out: int  # parent writes here
    scratch: Path
    key: tuple = ()  # (exercises folder, sandbox) it was started for


def spawn(exercises: Path | None = None, sandbox=None) -> Child:
    scratch = Path(tempfile.mkdtemp(prefix="seqlab-student-"))
    parent_r, child_w = os.pipe()
    child_r, parent_w = os.pipe()
    env = {k: os.environ[k] for k in ENV_PASS if k in os.environ}
    env.update(
        PATH="/usr/local/bin:/usr/bin:/bin",
        HOME=str(scratch),
        PYTHONHASHSEED="0",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONDONTWRITEBYTECODE="1",
        TMPDIR=str(scratch),
    )
    seqlab_parent = str(Path(__file__).resolve().parents[2])
    bootstrap = f"import sys; sys.path.insert(0, {seqlab_parent!r}); from seqlab.student.child import main; main()"
    # SEQLAB_CHILD_STDERR=path keeps the child's own stderr, for debugging seqlab itself.
    debug_err = os.environ.get("SEQLAB_CHILD_STDERR")
    # closed below once the child holds its own copy; a with-block would not span the spawn
    stderr = open(debug_err, "ab") if debug_err else subprocess.DEVNULL  # noqa: SIM115
    argv = [sys.executable, "-I", "-c", bootstrap, str(child_r), str(child_w)]
    pass_fds, preexec, filter_fd = [child_r, child_w], None, None
    if sandbox is not None and sandbox.enforced:
        from .sandbox import apply_rlimits, bwrap_command
        from .seccomp import filter_fd as seccomp_filter

        filter_fd = seccomp_filter()
        if filter_fd is not None:
            pass_fds.append(filter_fd)
        argv = bwrap_command(argv, exercises=exercises, scratch=scratch, seccomp_fd=filter_fd)
        preexec = apply_rlimits
    proc = subprocess.Popen(
        argv,
        pass_fds=pass_fds,
        cwd=scratch,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=True,
        preexec_fn=preexec,
    )
    if debug_err:
        stderr.close()
    for fd in (child_r, child_w, filter_fd):
        if fd is not None:
            os.close(fd)
    return Child(proc, parent_r, parent_w, scratch, _key(exercises, sandbox))


def _key(exercises, sandbox) -> tuple:
    enforced = sandbox is not None and sandbox.enforced
    return (str(Path(exercises).resolve()) if enforced and exercises else "", enforced)


_prespawned: list[Child] = []


def prespawn(exercises: Path | None = None, sandbox=None) -> None:
    """Start one child now; the next IsolatedStudent for the same submission and sandbox takes
    it instead of starting its own."""
    if not _prespawned:
        _prespawned.append(spawn(exercises, sandbox))


def take(exercises: Path | None = None, sandbox=None) -> Child:
    key = _key(exercises, sandbox)
    while _prespawned:
        child = _prespawned.pop()
        if child.proc.poll() is None and child.key == key:
            return child
        _discard(child)
    return spawn(exercises, sandbox)


def _discard(child: Child) -> None:
    import shutil
    import signal

    try:
        os.killpg(child.proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    child.proc.wait()
    for fd in (child.fd_in, child.fd_out):
        try:
            os.close(fd)
        except OSError:
            pass
    shutil.rmtree(child.scratch, ignore_errors=True)
