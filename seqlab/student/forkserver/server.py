"""The fork server's side, inside the sandbox: prepare once, then fork on request; each forked
child closes what is not its own and fences itself in before it becomes a child (see the
package's docstring for what makes it the same as one started alone)."""

from __future__ import annotations

import os
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .protocol import EXIT_SETUP_FAILED, EXIT_UNCAUGHT, receive, send
from .traces import look, rlimits, wipe_and_check

if TYPE_CHECKING:  # annotations only: the server imports ctypes when it loads the filter
    import ctypes


def serve(control_fd: int, seccomp_fd: int, sandboxed: bool) -> None:
    from .. import child

    child.prepare()
    program = b""
    if seccomp_fd >= 0:
        with os.fdopen(seccomp_fd, "rb") as source:
            program = source.read()
        # Now, while this process may still run ldconfig to find libseccomp: a forked child
        # compiles its own signal filter with it after the common filter refuses new processes.
        import pyseccomp  # noqa: F401
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    control = socket.socket(fileno=control_fd)
    scratch_root = os.environ["TMPDIR"]
    first_look = look(scratch_root) if sandboxed else None
    first_limits = rlimits()
    children: dict[int, int | None] = {}  # pid -> exit code once reaped

    def reply(**message: Any) -> None:
        send(control, message)

    def reap(pid: int, block: bool) -> int | None:
        if children.get(pid) is None and pid in children:
            done, status = os.waitpid(pid, 0 if block else os.WNOHANG)
            if done:
                children[pid] = os.waitstatus_to_exitcode(status)
        return children.get(pid)

    reply(op="ready")
    while True:
        try:
            request, fds = receive(control)
        except OSError:
            request, fds = None, []
        if request is None:  # the parent is gone: so are its children
            for live in [p for p, code in children.items() if code is None]:
                os.kill(live, signal.SIGKILL)
            os._exit(0)
        op = request["op"]
        if op == "fork":
            alive = [p for p in children if reap(p, block=False) is None]
            if alive:
                reply(op="busy")
            elif rlimits() != first_limits or not wipe_and_check(scratch_root, first_look):
                reply(op="retired")
                os._exit(0)
            else:
                children.clear()
                scratch = tempfile.mkdtemp(prefix="seqlab-student-", dir=scratch_root)
                pid = os.fork()
                if pid == 0:
                    _become_child(libc, fds, scratch, program if sandboxed else b"", control.fileno())
                children[pid] = None
                reply(op="forked", pid=pid, scratch=scratch)
            for fd in fds:
                os.close(fd)
            continue
        pid = request["pid"]  # poll, wait and kill each name the child they are about
        if op == "poll":
            reply(op="status", code=reap(pid, block=False))
        elif op == "wait":
            deadline = time.monotonic() + float(request["timeout"])
            while reap(pid, block=False) is None and time.monotonic() < deadline:
                time.sleep(0.01)
            reply(op="status", code=children.get(pid))
        elif op == "kill":
            if reap(pid, block=False) is None:
                os.kill(pid, signal.SIGKILL)
            reply(op="status", code=reap(pid, block=True))


PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4


def _become_child(libc: ctypes.CDLL, fds: list[int], scratch: str, program: bytes, control_fd: int) -> None:
    """In the forked process: close what is not ours, fence ourselves in, then be the child."""
    code = EXIT_SETUP_FAILED
    try:
        fd_in, fd_out = fds
        os.close(control_fd)
        for name in os.listdir("/proc/self/fd"):
            if int(name) not in (0, 1, 2, fd_in, fd_out):
                try:
                    os.close(int(name))
                except OSError:
                    pass  # the listing's own descriptor, already gone
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # without bwrap: die with the server
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # as a child started alone (the server is not)
        sys.argv[1:] = [str(fd_in), str(fd_out)]  # where a child started alone has them
        os.chdir(scratch)
        os.environ["HOME"] = os.environ["TMPDIR"] = scratch
        tempfile.tempdir = None
        if program:
            load_filter(libc, program)
            load_filter(libc, reach_only_self(os.getpid()))
        code = EXIT_UNCAUGHT
        from ..child import serve

        serve(fd_in, fd_out)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_UNCAUGHT)
    except BaseException:
        import traceback

        traceback.print_exc()  # to SEQLAB_CHILD_STDERR where set (debugging seqlab itself)
    os._exit(code)


def load_filter(libc: ctypes.CDLL, program: bytes) -> None:
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))  # 8 bytes per BPF instruction
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "could not load the seccomp filter")


def reach_only_self(pid: int) -> bytes:
    """A filter that refuses every signal sent to a process other than ``pid``, directly or by
    making another process a descriptor's owner, and every change of another process's limits."""
    import errno

    import pyseccomp as sc

    rules = sc.SyscallFilter(sc.ALLOW)
    for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        rules.add_rule(sc.ERRNO(errno.EPERM), name, sc.Arg(0, sc.NE, pid))
    for name in ("tkill", "pidfd_send_signal"):  # no target a filter can read: refused whole
        rules.add_rule(sc.ERRNO(errno.EPERM), name)
    # Signals by proxy: a descriptor's owner receives SIGIO (or any signal F_SETSIG names) when
    # it is ready. Only naming an owner is refused; no graded function needs either.
    F_SETOWN, F_SETOWN_EX, FIOSETOWN, SIOCSPGRP = 8, 15, 0x8901, 0x8902
    for command in (F_SETOWN, F_SETOWN_EX):
        rules.add_rule(sc.ERRNO(errno.EPERM), "fcntl", sc.Arg(1, sc.EQ, command))
    for request in (FIOSETOWN, SIOCSPGRP):
        rules.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.EQ, request))
    # prlimit64 names its target: 0 (itself, how glibc's setrlimit and getrlimit call it) and its
    # own pid are allowed, any other value refused. libseccomp takes one comparison per argument
    # in a rule, so "neither 0 nor pid" is written as "above pid" plus the aligned blocks that
    # cover 1 .. pid - 1. The comparison is on all 64 bits the register holds while the kernel
    # reads 32: a pid with high bits set is above pid, and refused, whatever its low bits name.
    rules.add_rule(sc.ERRNO(errno.EPERM), "prlimit64", sc.Arg(0, sc.GT, pid))
    for value, mask in _aligned_blocks(1, pid - 1):
        rules.add_rule(sc.ERRNO(errno.EPERM), "prlimit64", sc.Arg(0, sc.MASKED_EQ, mask, value))
    read, write = os.pipe()
    with os.fdopen(write, "wb") as sink:
        rules.export_bpf(sink)
    with os.fdopen(read, "rb") as source:
        return source.read()


def _aligned_blocks(low: int, high: int) -> Iterator[tuple[int, int]]:
    """(value, mask) pairs whose matches (x & mask == value) are exactly low .. high: at most two
    blocks per bit of ``high``."""
    while low <= high:
        size = low & -low
        while size > high - low + 1:
            size //= 2
        yield low, ~(size - 1) & 0xFFFF_FFFF_FFFF_FFFF
        low += size
