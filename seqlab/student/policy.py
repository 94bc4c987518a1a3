"""What student code may never reach, in one place: the course paths it may not touch and the
audit events it may not raise.

Two processes run student code under an audit hook: the isolated child of ``seqlab grade``
(``guards.install_audit_hook``) and the nbgrader grading kernel (``nbgrader/guard.py``). Both
install the hook built here, so a path or an event added for one is refused by both (they used to
keep their own lists, and each blocked something the other let through: .git and exams/,
ctypes calls, sockets).

The hook is the second layer. The first is the kernel sandbox (``sandbox.py``), where the course
is not even mounted; the hook is what is left when bubblewrap is unavailable (``--sandbox none``)
and inside the nbgrader kernel, which runs as the instructor.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def is_course_checkout(folder: str | os.PathLike[str]) -> bool:
    """``folder`` holds seqlab beside the course (an editable install): on sys.path it would let
    student code import the solutions, and the sandbox mounts only the child's code from it. From
    a plain install (the Gradescope image) seqlab sits in site-packages, which the child needs."""
    return os.path.isdir(os.path.join(folder, "seqlab")) and any(
        os.path.exists(os.path.join(folder, name)) for name in ("solutions", "graders", "grading_config.yaml")
    )


# Relative to the course root: everything a student could turn into points if they read it
# (solutions, graders, the config with its seeds, the project's own tests and mutants, exam keys,
# and .git, whose objects hold every one of those in history).
COURSE_SECRETS = ("solutions", "graders", "tests", "grading_config.yaml", "exams", ".git")

# Events refused outright: processes, signals, native code, sockets, and the hook's own escape
# hatches. Prefix families (os.exec*, os.spawn*, os.posix_spawn*) are in BLOCKED_PREFIXES.
BLOCKED_EVENTS = frozenset(
    {
        # processes
        "subprocess.Popen",
        "os.system",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.posix_spawnp",
        "os.startfile",
        "pty.spawn",
        "_posixsubprocess.fork_exec",
        # signals
        "os.kill",
        "os.killpg",
        "signal.pthread_kill",
        # native code: loading a library, calling through a function pointer, raw memory
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.dlsym/handle",
        "ctypes.call_function",
        "ctypes.cdata",
        "ctypes.addressof",
        "ctypes.string_at",
        "ctypes.wstring_at",
        "ctypes.PyObj_FromPtr",
        "ctypes.set_errno",
        "ctypes.get_errno",
        "os.add_dll_directory",
        # network
        "socket.bind",
        "socket.connect",
        "socket.connect_ex",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
        "urllib.Request",
        # the hook and the limits themselves
        "sys.addaudithook",
        "resource.setrlimit",
        "resource.prlimit",
        "sys.remote_exec",
    }
)
BLOCKED_PREFIXES = ("os.exec", "os.spawn", "os.posix_spawn")
# Sockets are refused at creation unless local: asyncio (the nbgrader kernel's event loop) makes
# an AF_UNIX socketpair to wake itself, and nothing reaches the network through one.
LOCAL_SOCKET_FAMILIES = frozenset({1})  # AF_UNIX

# Events that carry paths, by which of their arguments are paths (CPython's audit events table).
# Each path is checked against the protected roots (reading or writing) and, where a writable
# root is set, for writing.
_PATH_FIRST = (
    "open",
    "os.listdir",
    "os.scandir",
    "os.remove",
    "os.rmdir",
    "os.mkdir",
    "os.truncate",
    "os.chmod",
    "os.chown",
    "os.utime",
    "os.chflags",
    "os.lchflags",
    "os.setxattr",
    "os.getxattr",
    "os.listxattr",
    "os.removexattr",
    "shutil.rmtree",
    "sqlite3.connect",
    "glob.glob",
    "glob.glob/2",
    "zipfile.ZipFile",
)
_PATHS_FROM_AND_TO = (
    "os.rename",
    "os.link",
    "os.symlink",
    "shutil.copyfile",
    "shutil.copymode",
    "shutil.copystat",
    "shutil.copytree",
    "shutil.move",
    "shutil.unpack_archive",
)
# event -> indices of its path arguments
PATH_EVENTS = {
    **dict.fromkeys(_PATH_FIRST, (0,)),
    **dict.fromkeys(_PATHS_FROM_AND_TO, (0, 1)),
    "shutil.make_archive": (2,),  # (base_name, format, root_dir, ...): the folder archived
}
# Events that change the file system: refused outside the writable root when one is set.
WRITING_EVENTS = frozenset(
    {
        "os.remove",
        "os.rmdir",
        "os.mkdir",
        "os.rename",
        "os.link",
        "os.symlink",
        "os.truncate",
        "os.chmod",
        "os.chown",
        "os.utime",
        "os.setxattr",
        "os.removexattr",
        "shutil.copyfile",
        "shutil.copytree",
        "shutil.rmtree",
        "shutil.move",
    }
)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def protected_course_paths(course_root: Path | str | None = None, extra: Iterable[Path | str | None] = ()) -> list[str]:
    """The course's secrets (COURSE_SECRETS under ``course_root``) plus ``extra`` (output folders,
    an nbgrader course)."""
    if course_root is None:  # only then: policy.py also loads where seqlab.paths is not mounted (the child)
        from ..paths import COURSE_ROOT

        course_root = COURSE_ROOT
    root = Path(course_root)
    return [str(root / name) for name in COURSE_SECRETS] + [str(p) for p in extra if p]


def _real(path: Any) -> str | None:  # any audit event's argument: what is not a path gives None
    if path is None or isinstance(path, int):
        return None
    try:
        return os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return None


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class PathPolicy:
    """Which paths are off limits: the most specific matching root decides (so a kernel's own
    folder inside the nbgrader course stays usable)."""

    def __init__(self, protected: Iterable[str], allowed: Iterable[str] = (), writable: str | None = None) -> None:
        self.protected = sorted({r for r in (_real(p) for p in protected if p) if r}, key=len, reverse=True)
        self.allowed = sorted({r for r in (_real(p) for p in allowed if p) if r}, key=len, reverse=True)
        self.writable = _real(writable) if writable else None

    def refused(self, path: str) -> bool:
        deny = next((r for r in self.protected if _under(path, r)), None)
        if deny is None:
            return False
        allow = next((r for r in self.allowed if _under(path, r)), None)
        return allow is None or len(allow) <= len(deny)

    def contains_protected(self, path: str) -> bool:
        """``path`` is a directory above a protected root (opening it gives a dir_fd there)."""
        return any(_under(root, path) and root != path for root in self.protected)

    def may_write(self, path: str) -> bool:
        return self.writable is None or _under(path, self.writable) or path == "/dev/null"


# Two-path events: which of the paths they change (a rename or a move also removes its source).
_CHANGED_INDICES = {
    "os.rename": (0, 1),
    "shutil.move": (0, 1),
    "os.link": (1,),
    "os.symlink": (1,),
    "shutil.copyfile": (1,),
    "shutil.copytree": (1,),
}


def _is_write(event: str, args: tuple[Any, ...], index: int) -> bool:
    if event in WRITING_EVENTS:
        return index in _CHANGED_INDICES.get(event, (0,))
    if event != "open" or len(args) < 3:
        return False
    mode, flags = args[1], args[2]
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def install_audit_hook(
    protected: Iterable[str],
    *,
    allowed: Iterable[str] = (),
    writable: str | None = None,
    signal_pids: Iterable[int] = (),
    refusal: type[Exception] = PermissionError,
    context: str = "while grading",
) -> PathPolicy:
    """Refuse, for the rest of this process, the BLOCKED_EVENTS, any path event under a protected
    root, opening a directory above one (a dir_fd would reach below it by a relative path the
    hook never sees) and, with ``writable``, changing the file system outside it.

    Audit hooks cannot be removed, and adding another one is refused too. ``signal_pids`` are
    processes this one may still signal (the nbgrader kernel stops its grading server).
    """
    policy = PathPolicy(protected, allowed, writable)
    signal_pids = frozenset(int(p) for p in signal_pids)
    isdir = os.path.isdir

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in ("os.kill", "os.killpg") and args and args[0] in signal_pids:
            return
        if event in BLOCKED_EVENTS or event.startswith(BLOCKED_PREFIXES):
            raise refusal(f"seqlab: {event} is not allowed {context}")
        if event == "socket.__new__" and len(args) > 1 and args[1] not in LOCAL_SOCKET_FAMILIES:
            raise refusal(f"seqlab: opening a network socket is not allowed {context}")
        where = PATH_EVENTS.get(event)
        if where is None:
            return
        for index in where:
            if index >= len(args):
                continue
            path = _real(args[index])
            if path is None:
                continue
            if policy.refused(path):
                raise refusal(f"seqlab: {event} {args[index]!r} is not allowed {context}")
            if event == "open" and policy.contains_protected(path) and isdir(path):
                raise refusal(f"seqlab: opening the directory {args[index]!r} is not allowed {context}")
            if _is_write(event, args, index) and not policy.may_write(path):
                raise refusal(f"seqlab: writing {args[index]!r} is not allowed {context}")

    # Popen raises its audit event in Python before the C-level fork_exec: take the C entry point
    # away too, so calling it directly cannot start a process (the kernel sandbox forbids it anyway).
    try:
        import _posixsubprocess
        import subprocess

        def refused(*args: Any, **kwargs: Any) -> Any:
            raise refusal(f"seqlab: starting processes is not allowed {context}")

        _posixsubprocess.fork_exec = refused
        subprocess._fork_exec = refused  # type: ignore[attr-defined]  # private, and not in the stubs
    except ImportError:
        pass
    sys.addaudithook(hook)
    return policy
