"""Starting the student's child process alone, importable without torch.

A child started alone is its own interpreter: it spends ~1.3 s of CPU importing torch before it
can do anything (a fork server, seqlab.student.forkserver, pays that once for many children). With a kernel
sandbox (``sandbox.py``) it starts inside bwrap, which mounts the submission's ``exercises/``
when it starts: a prespawned child (children.py) serves only the submission (and the sandbox)
it was started for. The fork server starts the same way (``launch``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .sandbox import Sandbox

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
    handle: Any  # DirectProcess or forkserver.ForkedProcess: poll(), wait(timeout), kill()
    fd_in: int  # parent reads here
    fd_out: int  # parent writes here
    scratch: Path  # its working folder, as the child sees it
    exercises: str  # the submission's exercises/, as the child sees it
    key: tuple[Any, ...] = ()  # (exercises folder, sandbox) it was started for


class DirectProcess:
    """A child started alone: its Popen, with exit codes as Popen's (-N for a signal) whether or
    not bwrap stands between (bwrap reports a signal N as 128 + N)."""

    def __init__(self, proc: subprocess.Popen[bytes], scratch: Path, sandboxed: bool) -> None:
        self.proc, self.scratch, self.sandboxed = proc, scratch, sandboxed

    def _code(self, code: int | None) -> int | None:
        if code is not None and self.sandboxed:
            from .sandbox import exit_status

            return exit_status(code)
        return code

    def poll(self) -> int | None:
        return self._code(self.proc.poll())

    def wait(self, timeout: float) -> int | None:
        try:
            return self._code(self.proc.wait(timeout=timeout))
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        import shutil
        import signal

        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its whole group: bwrap and all inside
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        shutil.rmtree(self.scratch, ignore_errors=True)


def child_environment(scratch: Path) -> dict[str, str]:
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
    return env


def launch(
    code: str,
    *args: str,
    scratch: Path,
    sandbox: Sandbox | None = None,
    exercises: Path | None = None,
    mounts: Iterable[tuple[str, str]] = (),
    pass_fds: Iterable[int] = (),
    seccomp_fd: int | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``code`` (with ``args`` in its sys.argv) as the student's process: ``python -I`` with
    seqlab importable, the minimal environment, in ``scratch``, in its own session, in bwrap where
    the sandbox is enforced (rlimits set before it starts). A child started alone and the fork
    server (children.py) both start this way. ``pass_fds``: the descriptors it inherits."""
    seqlab_parent = str(Path(__file__).resolve().parents[2])
    argv = [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {seqlab_parent!r}); {code}", *args]
    preexec = None
    if sandbox is not None and sandbox.enforced:
        from .sandbox import apply_rlimits, bwrap_command

        argv = bwrap_command(
            argv, exercises=exercises, scratch=scratch, seccomp_fd=seccomp_fd, mounts=mounts, gpu=sandbox.gpu
        )
        preexec = apply_rlimits
    # SEQLAB_CHILD_STDERR=path keeps the process's own stderr, for debugging seqlab itself.
    debug_err = os.environ.get("SEQLAB_CHILD_STDERR")
    # closed below once the process holds its own copy; a with-block would not span the start
    stderr = open(debug_err, "ab") if debug_err else subprocess.DEVNULL  # noqa: SIM115
    try:
        return subprocess.Popen(
            argv,
            pass_fds=list(pass_fds),
            cwd=scratch,
            env=child_environment(scratch),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=preexec,
        )
    finally:
        if not isinstance(stderr, int):  # the debug file: the process holds its own copy now
            stderr.close()


def spawn(exercises: Path | None = None, sandbox: Sandbox | None = None) -> Child:
    """A child started alone: its own interpreter (and sandbox)."""
    scratch = Path(tempfile.mkdtemp(prefix="seqlab-student-"))
    parent_r, child_w = os.pipe()
    child_r, parent_w = os.pipe()
    enforced = sandbox is not None and sandbox.enforced
    filter_fd = None
    if enforced:
        from .seccomp import filter_fd as seccomp_filter

        filter_fd = seccomp_filter()
    proc = launch(
        "from seqlab.student.child import main; main()",
        str(child_r),
        str(child_w),
        scratch=scratch,
        sandbox=sandbox,
        exercises=exercises,
        pass_fds=[fd for fd in (child_r, child_w, filter_fd) if fd is not None],
        seccomp_fd=filter_fd,
    )
    for fd in (child_r, child_w, filter_fd):
        if fd is not None:
            os.close(fd)
    seen = str(exercises) if exercises is not None else ""
    return Child(
        DirectProcess(proc, scratch, enforced), parent_r, parent_w, scratch, seen, child_key(exercises, sandbox)
    )


def child_key(exercises: Path | str | None, sandbox: Sandbox | None) -> tuple[Any, ...]:
    """What a child started alone serves: its submission (where the sandbox mounts it) and sandbox
    (with the GPU passed in or not: a child started for the CPU cannot reach CUDA)."""
    enforced = sandbox is not None and sandbox.enforced
    gpu = sandbox.gpu if sandbox is not None and enforced else None
    return (str(Path(exercises).resolve()) if enforced and exercises else "", enforced, gpu)
