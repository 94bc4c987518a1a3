"""The seccomp filter bwrap loads into the sandboxed child (``bwrap --seccomp FD``).

Compiled once per process with libseccomp (through ``pyseccomp``, a ctypes binding to the
system's libseccomp.so.2) into a BPF program; each sandboxed child reads it from a memfd.
Everything not listed is allowed: the namespaces and the mount allow-list already decide what
the child can reach, and this removes the kernel interfaces that would widen it again or that
no graded function needs:

* new processes: ``fork``/``vfork``, and ``clone`` without CLONE_THREAD (threads stay allowed:
  torch and OpenMP start them). ``clone3`` answers ENOSYS, so glibc falls back to ``clone``,
  whose flags seccomp can see (clone3 passes them in memory, out of a filter's reach);
* reading or writing other processes (``ptrace``, ``process_vm_*``, ``pidfd_getfd``, ``kcmp``);
* namespaces, mounts and roots (``unshare``, ``setns``, ``mount``, ``pivot_root``, ``chroot``...);
* kernel surfaces with a history of exploits and no use here (``bpf``, ``perf_event_open``,
  ``userfaultfd``, ``io_uring_*``, ``keyctl``, modules, ``kexec``);
* sockets other than AF_UNIX (the network namespace has no interface anyway);
* System V IPC and POSIX message queues (``shmget``, ``msgget``, ``semget``, ``mq_open``...):
  their objects outlive the process that made them, in an IPC namespace that every child a fork
  server forks shares, so one submission could leave its code there for the next to run.

Without libseccomp the sandbox runs without this filter (namespaces, mounts, rlimits still
hold) and ``unavailable()`` says why; the RLIMIT_NPROC of sandbox.py still bounds forking.
"""

from __future__ import annotations

import errno
import functools
import os

CLONE_THREAD = 0x00010000
AF_UNIX = 1
REFUSED = (
    "fork",
    "vfork",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "pidfd_open",
    "kcmp",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "personality",
    "acct",
    "quotactl",
    "syslog",
    "lookup_dcookie",
    "name_to_handle_at",
    "open_by_handle_at",
    "mbind",
    "migrate_pages",
    "move_pages",
    "set_mempolicy",
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "ipc",  # the one entry point for all of the above on some architectures
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
)


@functools.lru_cache(maxsize=1)
def _program() -> tuple[bytes | None, str]:
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:
        return None, f"no libseccomp binding ({exc}); pip install pyseccomp"
    try:
        rules = sc.SyscallFilter(sc.ALLOW)
        for name in REFUSED:
            try:
                rules.add_rule(sc.ERRNO(errno.EPERM), name)
            except (RuntimeError, ValueError, OSError):
                pass  # a syscall this architecture does not have
        rules.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
        rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        rules.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.NE, AF_UNIX))
        read, write = os.pipe()
        with os.fdopen(write, "wb") as sink:
            rules.export_bpf(sink)
        with os.fdopen(read, "rb") as source:
            return source.read(), ""
    except Exception as exc:  # libseccomp present but refusing: run without the filter, say so
        return None, f"libseccomp could not compile the filter ({type(exc).__name__}: {exc})"


def unavailable() -> str:
    """Why the filter is not applied ("" when it is)."""
    return _program()[1]


def filter_fd() -> int | None:
    """A fresh descriptor holding the compiled filter, positioned at its start (the caller
    passes it to bwrap and closes it), or None without libseccomp."""
    program, _ = _program()
    if program is None:
        return None
    fd = os.memfd_create("seqlab-seccomp", 0)  # inheritable is set by Popen's pass_fds
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
