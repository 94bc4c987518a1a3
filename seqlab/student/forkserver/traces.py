"""What an earlier forked child could leave behind in the server's sandbox: the server looks once
before its first fork, and before each next one wipes what children wrote and compares."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from typing import Any


def rlimits() -> dict[str, tuple[int, int]]:
    """Every resource limit of this process: a child that changed one of the server's (past its
    filter, or where there is none) would pass the change on to every child forked after."""
    import resource

    return {name: resource.getrlimit(getattr(resource, name)) for name in dir(resource) if name.startswith("RLIMIT_")}


def look(scratch_root: str) -> tuple[Any, ...]:
    """What an earlier child could have left in the sandbox: every entry of the tmpfs file systems
    bwrap made (the root, /dev and /tmp, which hold its skeleton: the folders on the way to each
    read-only mount, under /tmp too when the course lives there), the running processes and the
    System V IPC objects.
    Mounts are not entered; /dev/shm and the scratch root, whose contents are wiped, count only
    by their presence."""
    entries: list[tuple[str, object, int, int, int, int]] = []  # "present" in place of an inode
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


def wipe_and_check(scratch_root: str, first_look: tuple[Any, ...] | None) -> bool:
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
    return look(scratch_root) == first_look and not os.listdir("/dev/shm") and not os.listdir(scratch_root)


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
