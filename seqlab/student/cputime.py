"""The student's process's CPU time as the kernel accounts it, read by the trusted parent.

A grader that times student code by the wall clock measures the machine as much as the code: on
a shared 2-core runner a quick scan waits tens of milliseconds for a core, and a slow loop may
get one to itself. The CPU time the kernel charges to the child's process is what load does not
stretch (much: caches are shared) and what the child cannot report about itself: the parent
reads it from /proc, of the child's pid as the parent's own PID namespace numbers it (a child in
bwrap, or forked by a server in bwrap, has another number inside its sandbox).

Two readings, the larger kept: /proc/PID/stat's utime + stime counts every thread the process
ever had, ended ones too, in clock ticks (10 ms); the sum of /proc/PID/task/*/schedstat counts
the living threads in nanoseconds. A thread that did the work and ended before the reading is in
the first; the precision of a few milliseconds is in the second. Either is a lower bound of the
CPU the process used, so the larger is too.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .spawn import Child


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as listing:
                found += [int(p) for p in listing.read().split()]
    except OSError:
        pass  # gone meanwhile
    return found


def _namespace_pids(pid: int) -> list[int]:
    """The pid's numbers from this namespace inwards (the status file's NSpid line)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("NSpid:"):
                    return [int(p) for p in line.split()[1:]]
    except OSError:
        pass
    return []


def host_pid(child: Child) -> int | None:
    """The pid, in this process's namespace, of the Python that serves ``child`` (a
    ``spawn.Child``), or None where it cannot be found (then the caller has no CPU time)."""
    handle = child.handle
    server = getattr(handle, "server", None)
    root: int
    inner: int | None
    if server is None:  # started alone: its Popen is bwrap, or the Python itself
        root, inner = handle.proc.pid, None
    else:  # forked: the server's sandbox numbers it handle.pid
        root, inner = server.proc.pid, handle.pid
    if not (server.enforced if server is not None else handle.sandboxed):
        return inner if inner is not None else root  # no PID namespace between
    depth = len(_namespace_pids(root))
    seen, queue = [], [root]
    while queue:
        pid = queue.pop()
        seen.append(pid)
        queue += _children(pid)
    for pid in seen:
        numbers = _namespace_pids(pid)
        if len(numbers) <= depth:
            continue  # bwrap itself, outside the sandbox
        if inner is not None and numbers[-1] == inner:
            return pid
        if inner is None and numbers[-1] != 1:  # alone: the one process in the sandbox but its init
            return pid
    return None


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds the kernel has charged to process ``pid`` so far (None: it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()  # past the name, which may hold spaces
        ticks = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
        living = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as schedstat:
                    living += int(schedstat.read().split()[0])
            except OSError:
                pass  # a thread that ended meanwhile: in the ticks
    except (OSError, IndexError, ValueError):
        return None
    return max(ticks, living / 1e9)
