"""The trusted parent's handle on its fork server: start it, ask it for a child, poll, wait for
and kill that child through it, and shut it down; one server per grading process and sandbox
kind (``server_for``)."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..spawn import Child, launch
from .protocol import (
    COPY_LIMIT_BYTES,
    COPY_LIMIT_ENTRIES,
    READY_TIMEOUT_S,
    REPLY_TIMEOUT_S,
    SUBMISSION_MOUNT,
    receive,
    send,
)

if TYPE_CHECKING:
    from ..sandbox import Sandbox


class ForkServer:
    """One server per grading process and sandbox kind, started on first use."""

    def __init__(self, sandbox: Sandbox | None) -> None:
        self.owner = os.getpid()
        self.enforced = sandbox is not None and sandbox.enforced
        self.scratch = Path(tempfile.mkdtemp(prefix="seqlab-forkserver-"))
        self.slot = Path(tempfile.mkdtemp(prefix="seqlab-submission-")) if self.enforced else None
        self.live: set[int] = set()
        self.live_key = ""
        self.control, server_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        filter_fd = None
        if self.enforced:
            from ..seccomp import filter_fd as seccomp_filter

            filter_fd = seccomp_filter()
        pass_fds = [server_end.fileno()] + ([filter_fd] if filter_fd is not None else [])
        seccomp = filter_fd if filter_fd is not None else -1
        self.proc = launch(
            f"from seqlab.student.forkserver.server import serve; serve({server_end.fileno()}, {seccomp}, {self.enforced})",
            scratch=self.scratch,
            sandbox=sandbox,
            mounts=[(str(self.slot), SUBMISSION_MOUNT)] if self.slot else [],
            pass_fds=pass_fds,
        )
        server_end.close()
        if filter_fd is not None:
            os.close(filter_fd)
        self.ready: bool | None = None  # None until its "ready" is read; False once shut down
        self.was_ready = False

    # -- the protocol ---------------------------------------------------------------------------
    def _ask(
        self, message: dict[str, Any], fds: tuple[int, ...] = (), timeout: float = REPLY_TIMEOUT_S
    ) -> dict[str, Any] | None:
        """One request and its reply; None (and the server shut down) on any failure."""
        try:
            self.control.settimeout(timeout)
            if message:
                send(self.control, message, fds)
            answer, _fds = receive(self.control)
            if answer is None:
                raise ConnectionError("the fork server is gone")
            return answer
        except (OSError, ValueError):
            self.shutdown()
            return None

    def usable(self) -> bool:
        if os.getpid() != self.owner:  # a copy of the object in a forked process: not its server
            return False
        if self.ready is None:
            answer = self._ask({}, timeout=READY_TIMEOUT_S)
            self.ready = self.was_ready = answer is not None and answer.get("op") == "ready"
        if self.ready and self.proc.poll() is not None:
            self.shutdown()  # died (killed from outside): server_for starts a fresh one next time
        return bool(self.ready)

    def fork(self, exercises: Path | None) -> Child | None:
        """A child for this submission, or None when it must be started alone."""
        if exercises is None or not self.usable():
            return None
        key = str(Path(exercises).resolve())
        self.live = {pid for pid in self.live if self._status(pid) is None}
        if self.live and key != self.live_key:
            return None  # another submission's child is alive: never two in one sandbox
        seen = key
        if self.slot is not None:
            if not self.live and not self._copy(Path(exercises)):
                return None
            seen = f"{SUBMISSION_MOUNT}/exercises"
        parent_r, child_w = os.pipe()
        child_r, parent_w = os.pipe()
        answer = self._ask({"op": "fork"}, fds=(child_r, child_w))
        os.close(child_r)
        os.close(child_w)
        if answer is None or answer.get("op") != "forked":
            if answer is not None and answer.get("op") == "retired":
                self.shutdown()
            for fd in (parent_r, parent_w):
                os.close(fd)
            return None
        pid = int(answer["pid"])
        self.live.add(pid)
        self.live_key = key
        return Child(
            handle=ForkedProcess(self, pid),
            fd_in=parent_r,
            fd_out=parent_w,
            scratch=Path(answer["scratch"]),
            exercises=seen,
            key=(key, self.enforced),
        )

    def _copy(self, exercises: Path) -> bool:
        """The submission's exercises/ into the slot the sandbox shows at SUBMISSION_MOUNT, or
        False when it is not a plain, small folder of regular files (then its child is started
        alone). A link, exercises/ itself included, is never copied: its target could be the
        course beside the submission (seqlab.submission refuses them before grading)."""
        total, count = 0, 0
        if exercises.is_symlink() or not exercises.is_dir():
            return False
        for folder, subfolders, files in os.walk(exercises):
            for name in subfolders + files:
                info = os.lstat(os.path.join(folder, name))
                if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                    return False
                total, count = total + info.st_size, count + 1
                if total > COPY_LIMIT_BYTES or count > COPY_LIMIT_ENTRIES:
                    return False
        assert self.slot is not None  # fork() copies only for an enforced sandbox, which has the slot
        target = self.slot / "exercises"
        try:
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(exercises, target, symlinks=True)
        except OSError:
            shutil.rmtree(target, ignore_errors=True)
            return False
        return True

    def _status(self, pid: int) -> int | None:
        answer = self._ask({"op": "poll", "pid": pid})
        return -signal.SIGKILL if answer is None else answer["code"]

    def shutdown(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
        self.control.close()
        self.ready = False
        shutil.rmtree(self.scratch, ignore_errors=True)
        if self.slot is not None:
            shutil.rmtree(self.slot, ignore_errors=True)


class ForkedProcess:
    """The parent's handle on a forked child: what ``subprocess.Popen`` gives for one started
    alone, asked of the server. Exit codes as Popen's: -N for a signal."""

    def __init__(self, server: ForkServer, pid: int) -> None:
        self.server, self.pid = server, pid
        self.code: int | None = None

    def poll(self) -> int | None:
        if self.code is None:
            self.code = self.server._status(self.pid) if self.server.ready else -signal.SIGKILL
        return self.code

    def wait(self, timeout: float) -> int | None:
        if self.code is None and self.server.ready:
            answer = self.server._ask({"op": "wait", "pid": self.pid, "timeout": timeout}, timeout=timeout + 10)
            self.code = None if answer is None else answer["code"]
        return self.code

    def kill(self) -> None:
        if self.code is None and self.server.ready:
            answer = self.server._ask({"op": "kill", "pid": self.pid})
            self.code = -signal.SIGKILL if answer is None else answer["code"]
        self.server.live.discard(self.pid)


_servers: dict[tuple[Any, ...], ForkServer] = {}
_never_started: set[tuple[Any, ...]] = set()


def server_for(sandbox: Sandbox | None) -> ForkServer | None:
    """This process's server for the sandbox kind, started on first use and again after it
    retired or died; None where it is switched off (SEQLAB_FORKSERVER=0), where a sandbox could
    not keep a forked child in (no seccomp filter to refuse fork and signals), or where a server
    never became ready in this process (then every child is started alone)."""
    if os.environ.get("SEQLAB_FORKSERVER", "1") == "0":
        return None
    enforced = sandbox is not None and sandbox.enforced
    if enforced:
        from ..seccomp import unavailable

        if unavailable():
            return None
    # the GPU passed in or not is part of the sandbox: a server started for the CPU has no CUDA
    key = (os.getpid(), enforced, sandbox.gpu if sandbox is not None and enforced else None)
    if key in _never_started:
        return None
    server = _servers.get(key)
    if server is not None and server.ready is False:
        if not server.was_ready:
            _never_started.add(key)
            return None
        server = None  # retired or dead after serving: a fresh one
    if server is None:
        server = _servers[key] = ForkServer(sandbox)
    return server


def _close_all() -> None:
    for key, server in list(_servers.items()):
        if key[0] == os.getpid():
            server.shutdown()


atexit.register(_close_all)
