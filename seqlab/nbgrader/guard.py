"""The grading kernel's audit hook: student code in an autograded notebook may not read the
course (``source/`` with the solutions, ``gradebook.db``, other students' folders, the config
with the seed), the graders or the reference solutions, nor start processes.

nbgrader executes a submitted notebook in a kernel running as the instructor, in
``autograded/<student>/<assignment>/``, a folder inside the course. ``kernel.start`` installs this
hook (through the kernel's ``exec_lines``, set in nbgrader_config.py) before the first cell runs:

* opening, listing, linking, renaming or deleting anything under a protected root is refused,
  except inside an allowed root (the kernel's own folder, Python's installation, the seqlab
  package) -- the most specific root wins, so the assignment folder inside the course stays
  usable;
* opening a directory that contains a protected root is refused too (``os.open(dir)`` +
  ``dir_fd`` would otherwise reach below it by a relative path the hook cannot see);
* processes (``subprocess``, ``os.system``, ``os.fork``, ``exec``, ``spawn``, ``pty``), signals
  and native-code loading (``ctypes``) are refused; the grading server was started before.

Audit hooks cannot be removed from Python. This is a tripwire against the plain ways (reading
``../../source/...``, sqlite3 on the gradebook, a shell), not a sandbox: code that gets native
execution some other way runs with the instructor's rights. docs/nbgrader.md says what to do
about untrusted code (the secure path, or nbgrader in a container).
"""
from __future__ import annotations

import os
import sys

_PROCESS_EVENTS = {
    "subprocess.Popen", "os.system", "os.fork", "os.forkpty", "os.posix_spawn", "os.posix_spawnp",
    "os.kill", "os.killpg", "signal.pthread_kill", "pty.spawn", "os.startfile", "sys.addaudithook",
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function", "ctypes.cdata",
    "ctypes.addressof", "ctypes.string_at", "ctypes.wstring_at", "ctypes.PyObj_FromPtr",
    "os.add_dll_directory", "_posixsubprocess.fork_exec",
}
_PREFIXES = ("os.exec", "os.spawn", "os.posix_spawn")
# event -> indices of the path arguments it carries
_PATH_EVENTS = {
    "open": (0,), "os.listdir": (0,), "os.scandir": (0,), "os.remove": (0,), "os.rmdir": (0,),
    "os.mkdir": (0,), "os.rename": (0, 1), "os.link": (0, 1), "os.symlink": (0, 1), "os.truncate": (0,),
    "os.chmod": (0,), "os.chown": (0,), "os.utime": (0,), "os.chflags": (0,), "os.lchflags": (0,),
    "os.setxattr": (0,), "os.getxattr": (0,), "os.listxattr": (0,), "os.removexattr": (0,),
    "shutil.copyfile": (0, 1), "shutil.copymode": (0, 1), "shutil.copystat": (0, 1), "shutil.copytree": (0, 1),
    "shutil.rmtree": (0,), "shutil.move": (0, 1), "shutil.make_archive": (2,), "shutil.unpack_archive": (0, 1),
    "sqlite3.connect": (0,), "glob.glob": (0,), "glob.glob/2": (0,), "zipfile.ZipFile": (0,),
}


class GuardRefusal(PermissionError):
    pass


def _real(path) -> str | None:
    if path is None or isinstance(path, int):
        return None
    try:
        return os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return None


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class Policy:
    """Which paths are off limits: the most specific matching root decides."""

    def __init__(self, protected, allowed):
        self.protected = sorted({r for r in (_real(p) for p in protected if p) if r}, key=len, reverse=True)
        self.allowed = sorted({r for r in (_real(p) for p in allowed if p) if r}, key=len, reverse=True)

    def refused(self, path: str) -> bool:
        deny = next((r for r in self.protected if _under(path, r)), None)
        if deny is None:
            return False
        allow = next((r for r in self.allowed if _under(path, r)), None)
        return allow is None or len(allow) <= len(deny)

    def contains_protected(self, path: str) -> bool:
        """``path`` is a directory above a protected root (opening it would give a dir_fd there)."""
        return any(_under(root, path) and root != path for root in self.protected)


_installed: Policy | None = None


def installed() -> Policy | None:
    return _installed


def install(protected, allowed, signal_pids=()) -> Policy:
    """Install the hook (once per process; a second call only returns the first policy).

    ``signal_pids``: processes this one may still signal (its own grading server, which the kernel
    stops at shutdown)."""
    global _installed
    if _installed is not None:
        return _installed
    policy = Policy(protected, allowed)
    isdir = os.path.isdir

    signal_pids = frozenset(int(p) for p in signal_pids)

    def hook(event: str, args: tuple) -> None:
        if event in ("os.kill", "os.killpg") and args and args[0] in signal_pids:
            return
        if event in _PROCESS_EVENTS or event.startswith(_PREFIXES):
            raise GuardRefusal(f"seqlab: {event} is not allowed while autograding")
        where = _PATH_EVENTS.get(event)
        if where is None:
            return
        for index in where:
            if index >= len(args):
                continue
            path = _real(args[index])
            if path is None:
                continue
            if policy.refused(path):
                raise GuardRefusal(f"seqlab: {event} {args[index]!r} is not allowed while autograding")
            if event == "open" and policy.contains_protected(path) and isdir(path):
                raise GuardRefusal(f"seqlab: opening the directory {args[index]!r} is not allowed while autograding")

    # Process creation that bypasses subprocess.Popen's audit event.
    try:
        import _posixsubprocess

        def _refuse(*args, **kwargs):
            raise GuardRefusal("seqlab: starting processes is not allowed while autograding")

        _posixsubprocess.fork_exec = _refuse
    except ImportError:
        pass
    sys.addaudithook(hook)
    _installed = policy
    return policy
