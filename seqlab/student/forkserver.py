"""A fork server: the student's child forked from a process that has already imported torch.

A child started on its own spends ~1.3 s of CPU before it can load anything, nearly all of it
``import torch``; a process that grades many submissions (grade-all's workers, the test suite)
paid that for every one. The fork server pays it once. It starts exactly like a child (same
command, same bwrap sandbox, minus a submission), runs ``child.prepare()``, and then forks on
the trusted parent's request. Each forked child is made what a child started alone is:

* it keeps only its two pipes: every other descriptor, the server's control socket first, is
  closed before anything else runs;
* it loads the seccomp filter itself (the server runs without it: the filter refuses fork), and
  a second one of its own: it may signal no process but itself, and change no process's resource
  limits but its own. Started alone it is the only process in its sandbox; forked, the server is
  there too, and must stay out of its reach (a lowered address-space limit on the server is
  inherited by every child it forks after, and would make each of them fail);
* it starts in a fresh scratch folder in a sandbox the server has wiped of every file an earlier
  child wrote (/tmp, /dev/shm) and compared with its first look at it (the root and /dev, the
  processes and the System V IPC objects, which the common filter keeps a child from making),
  and its own resource limits with what they were when it started: any other trace, any changed
  limit, and the server retires instead of forking;
* it sees its submission's ``exercises/`` read-only at ``/submission/exercises``: a copy the
  parent writes just before the fork (the server's sandbox was made before the submission was
  known, so it cannot be bind-mounted).

The server never runs student code. It is not dumpable, so no child can read or write its memory
or descriptors through /proc (and the filter refuses ptrace). It serves one submission at a
time: a fork for another submission while a child of the last one lives is refused, and that
child is started alone. Whenever the server is missing, busy, dead or retired, ``children.take``
starts the child alone, as before; ``SEQLAB_FORKSERVER=0`` always does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the server imports ctypes when it loads the filter
    import ctypes
    from collections.abc import Callable, Iterator

SUBMISSION_MOUNT = "/submission"  # where a sandboxed forked child sees its submission
# What a submission may hold for it to be copied into the server's sandbox: far above any
# exercises/ folder (seven small .py files); a larger or stranger one (a FIFO, a device) is
# bind-mounted into a child started alone, as before.
COPY_LIMIT_BYTES = 32 << 20
COPY_LIMIT_ENTRIES = 2000
READY_TIMEOUT_S = 120  # the server imports torch first: seconds on a loaded machine
REPLY_TIMEOUT_S = 30
EXIT_UNCAUGHT = 1  # what Python exits with on an uncaught exception
EXIT_SETUP_FAILED = 70  # the forked child could not become a child (its filter would not load)


# --- the server, inside the sandbox ------------------------------------------------------------


def serve(control_fd: int, seccomp_fd: int, sandboxed: bool) -> None:
    from . import child

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
    first_look = _look(scratch_root) if sandboxed else None
    first_limits = _rlimits()
    children: dict[int, int | None] = {}  # pid -> exit code once reaped

    def reply(**message: Any) -> None:
        control.send(json.dumps(message).encode())

    def reap(pid: int, block: bool) -> int | None:
        if children.get(pid) is None and pid in children:
            done, status = os.waitpid(pid, 0 if block else os.WNOHANG)
            if done:
                children[pid] = os.waitstatus_to_exitcode(status)
        return children.get(pid)

    reply(op="ready")
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, 4096, 2)
        except OSError:
            data, fds = b"", []
        if not data:  # the parent is gone: so are its children
            for pid in [p for p, code in children.items() if code is None]:
                os.kill(pid, signal.SIGKILL)
            os._exit(0)
        request = json.loads(data)
        op, pid = request["op"], request.get("pid")
        if op == "fork":
            alive = [p for p in children if reap(p, block=False) is None]
            if alive:
                reply(op="busy")
            elif _rlimits() != first_limits or not _wipe_and_check(scratch_root, first_look):
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
        elif op == "poll":
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
            _load_filter(libc, program)
            _load_filter(libc, _reach_only_self(os.getpid()))
        code = EXIT_UNCAUGHT
        from .child import serve

        serve(fd_in, fd_out)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_UNCAUGHT)
    except BaseException:
        import traceback

        traceback.print_exc()  # to SEQLAB_CHILD_STDERR where set (debugging seqlab itself)
    os._exit(code)


def _load_filter(libc: ctypes.CDLL, program: bytes) -> None:
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))  # 8 bytes per BPF instruction
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "could not load the seccomp filter")


def _reach_only_self(pid: int) -> bytes:
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


def _rlimits() -> dict[str, tuple[int, int]]:
    """Every resource limit of this process: a child that changed one of the server's (past its
    filter, or where there is none) would pass the change on to every child forked after."""
    import resource

    return {name: resource.getrlimit(getattr(resource, name)) for name in dir(resource) if name.startswith("RLIMIT_")}


def _look(scratch_root: str) -> tuple[Any, ...]:
    """What an earlier child could have left in the sandbox: every entry of the tmpfs file systems
    bwrap made (the root, /dev and /tmp, which hold its skeleton: the folders on the way to each
    read-only mount, under /tmp too when the course lives there), the running processes and the
    System V IPC objects.
    Mounts are not entered; /dev/shm and the scratch root, whose contents are wiped, count only
    by their presence."""
    entries: list[tuple[str, str | int, int, int, int, int]] = []
    for top in ("/", "/dev", "/tmp"):
        device = os.lstat(top).st_dev
        for folder, subfolders, files in os.walk(top):
            kept = []
            for name in subfolders + files:
                path = os.path.join(folder, name)
                if path in ("/proc", "/dev/pts"):
                    continue  # the kernel's own
                info = os.lstat(path)
                if info.st_dev != device or path in ("/tmp", "/dev/shm", scratch_root):
                    entries.append((path, "present", 0, 0, 0, 0))
                    continue
                entries.append((path, info.st_ino, info.st_mode, info.st_rdev, info.st_size, info.st_mtime_ns))
                if name in subfolders:
                    kept.append(name)
            subfolders[:] = kept
    processes = sorted(name for name in os.listdir("/proc") if name.isdigit())
    return sorted(entries), processes, _ipc_objects()


def _ipc_objects() -> list[str]:
    """The System V IPC objects alive in the sandbox's IPC namespace, which outlive the process
    that made them (a forked child's filter refuses making one: this is the check outside it)."""
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as table:
                found += [f"{kind} {line.split()[0]}" for line in table.readlines()[1:] if line.strip()]
        except OSError:
            pass
    return found


def _wipe_and_check(scratch_root: str, first_look: tuple[Any, ...] | None) -> bool:
    """Remove what earlier children wrote and check nothing else of them is left; without a
    sandbox (``first_look`` None) only their scratch folders, the rest being the host's."""
    known = {entry[0] for entry in first_look[0]} if first_look is not None else set()
    try:
        for top in ("/tmp", "/dev/shm", scratch_root) if first_look is not None else (scratch_root,):
            _remove_new(top, known, scratch_root)
        os.makedirs(scratch_root, exist_ok=True)
    except OSError:
        return False
    if first_look is None:
        return True
    return _look(scratch_root) == first_look and not os.listdir("/dev/shm") and not os.listdir(scratch_root)


def _remove_new(top: str, known: set[str], scratch_root: str) -> None:
    """Every entry under ``top`` that was not there at the first look, mounts left alone (a child
    cannot make one: the filter refuses mount)."""
    if not os.path.isdir(top):
        return
    device = os.lstat(top).st_dev
    for folder, subfolders, files in os.walk(top):
        kept = []
        for name in subfolders + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if info.st_dev != device or (path == scratch_root and top != scratch_root):
                continue  # a mount, or the scratch root (wiped as a top of its own)
            is_folder = stat.S_ISDIR(info.st_mode)
            if path in known and path != scratch_root:
                if is_folder:
                    kept.append(name)  # bwrap's skeleton: keep it, look inside
            elif is_folder:
                shutil.rmtree(path, onerror=_make_writable_and_retry)
            else:
                os.unlink(path)
        subfolders[:] = kept


def _make_writable_and_retry(function: Callable[[str], object], path: str, _exc_info: object) -> None:
    parent = os.path.dirname(path)
    os.chmod(parent, stat.S_IRWXU)
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, stat.S_IRWXU)
    function(path)
