"""The kernel-enforced sandbox around the student's process (bubblewrap), importable without torch.

The child that runs student code starts inside ``bwrap`` (Debian/Ubuntu package ``bubblewrap``,
what Flatpak uses), in new user, PID, network, IPC, UTS and cgroup namespaces. What it sees is an
allow-list, all read-only except the scratch tmpfs:

* the Python runtime and its packages (sys.prefix, sys.base_prefix and every sys.path entry:
  a venv may reach packages through a .pth file into another venv) and the system libraries
  (/usr and its merged /lib, /bin);
* the few seqlab files the child itself imports (CHILD_CODE), not the course around them;
* the submission's ``exercises/`` folder, at its real path;
* a private tmpfs of SCRATCH_BYTES as its working directory and /tmp.

Not the course (solutions, graders, tests, config, exams, .git, earlier outputs), not the output
folder, not the parent (its own PID namespace: /proc shows the sandbox only), no network
interfaces, no capabilities and no new privileges (bwrap sets PR_SET_NO_NEW_PRIVS), uid 65534,
and rlimits on processes, open files and file size set before bwrap starts (the child lowers
its address space itself, knowing the device). A seccomp filter (``seccomp.py``) refuses
process creation, ptrace, namespaces, mounts and the kernel's other attack surface where
libseccomp is available.

``--sandbox auto`` probes bwrap once per process and, when it cannot run, falls back to the
in-process guards (the audit hook) with a notice that every report repeats.

Grading on CUDA (``Sandbox.for_device``), and only then, the sandbox also passes the NVIDIA
driver's device nodes and files in (``gpu.py``); on the CPU its command line is the same.
"""

from __future__ import annotations

import functools
import os
import resource
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SeqlabError
from .policy import is_course_checkout

if TYPE_CHECKING:
    from .gpu import Passthrough

MODES = ("auto", "bwrap", "none")
MODES_HELP = (
    "kernel sandbox for student code: bwrap (bubblewrap; fail without it), none (the in-process "
    "guards only), auto (bwrap when it works, else none with a warning; default)"
)
BWRAP = os.environ.get("SEQLAB_BWRAP", "/usr/bin/bwrap")
# The seqlab files the child imports (relative to the folder holding the seqlab package).
CHILD_CODE = ("seqlab/__init__.py", "seqlab/contract.py", "seqlab/results.py", "seqlab/student", "seqlab/subset")
# The scratch tmpfs counts against memory: 256 MB is far more than any exercise writes (they
# write nothing) and small next to the child's address-space limit.
SCRATCH_BYTES = 256 << 20
# rlimits applied before bwrap starts (inherited by everything inside):
#   NOFILE 256: the child needs ~60 descriptors (torch's libraries, two pipes); a module that
#     opens thousands is stopped at the door instead of exhausting the parent's table.
#   FSIZE 64 MB: no single file written beyond that (the tmpfs is the total bound).
#   NPROC: counted per user namespace, so 64 leaves torch its threads and stops a fork bomb.
RLIMITS = {"RLIMIT_NOFILE": 256, "RLIMIT_FSIZE": 64 << 20, "RLIMIT_NPROC": 64}
UNPRIVILEGED_ID = "65534"  # nobody/nogroup
# How Sandbox.notice starts: the reports show that line as a notice, not as a grading error.
NOT_SANDBOXED = "not sandboxed: "


class SandboxUnavailable(SeqlabError, RuntimeError):
    """The sandbox asked for cannot be had: an unknown mode, or ``--sandbox bwrap`` where
    bubblewrap cannot run."""


@dataclass(frozen=True)
class Sandbox:
    kind: str  # "bwrap" or "none"
    why: str = ""  # for "none": why the kernel sandbox is not used
    # the NVIDIA driver's files bound in: set by for_device on CUDA only, None on the CPU
    gpu: Passthrough | None = None

    @property
    def enforced(self) -> bool:
        return self.kind == "bwrap"

    @property
    def description(self) -> str:
        """For the result's metadata: the kind, and why seccomp is off where it is."""
        if not self.enforced:
            return self.kind
        from .seccomp import unavailable

        kind = f"bwrap (no seccomp filter: {unavailable()})" if unavailable() else "bwrap + seccomp"
        return kind + (" + NVIDIA devices" if self.gpu is not None else "")

    def for_device(self, device: str, root: str = "/") -> Sandbox:
        """This sandbox for grading on ``device``: on CUDA and enforced, with the NVIDIA driver's
        nodes and files of the host (under ``root``) passed in, or SandboxUnavailable where the
        sandbox cannot reach the GPU; otherwise itself, unchanged."""
        if not self.enforced or not device.startswith("cuda"):
            return self
        from .gpu import find

        gpu = find(root)
        if not gpu.reachable:
            raise SandboxUnavailable(
                f"--device {device} in the bwrap sandbox: {gpu.why_not} (grade with --device cpu, "
                f"or --sandbox none to run without the kernel sandbox)"
            )
        return replace(self, gpu=gpu)

    @property
    def notice(self) -> str:
        """One line for the terminal and every report; empty when sandboxed."""
        if self.enforced:
            return ""
        return (
            f"{NOT_SANDBOXED}{self.why}. Student code ran under the in-process guards only "
            f"(an audit hook), which a determined student can get around; see docs/threat-model.md."
        )


def _system_mounts() -> list[str]:
    args: list[str] = []
    for top in ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for name in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/alternatives"):
        if os.path.exists(name):
            args += ["--ro-bind", name, name]
    return args


@functools.lru_cache(maxsize=1)
def _child_sys_path() -> tuple[str, ...]:
    """sys.path of ``python -I`` as the child starts it: the runtime, site-packages and whatever
    their .pth files add (a venv may reach another venv's packages that way). Not this process's
    sys.path, which also holds the script's folder, the current one and PYTHONPATH."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", "import sys; print('\\n'.join(sys.path))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return tuple(done.stdout.splitlines())


def python_paths() -> list[str]:
    """Folders the child's Python needs, outermost first, nested ones dropped."""
    candidates = {
        os.path.realpath(p)
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)))
    }
    candidates |= {os.path.realpath(p) for p in _child_sys_path() if p and os.path.isdir(p)}
    seqlab_parent = str(Path(__file__).resolve().parents[2])
    in_checkout = is_course_checkout(seqlab_parent)  # else site-packages: mounted whole
    kept: list[str] = []
    for path in sorted(candidates, key=len):
        if path == "/" or path.startswith(("/usr/", "/lib")) or path == "/usr":
            continue  # mounted with the system
        if in_checkout and (
            path == seqlab_parent or (path + os.sep).startswith(seqlab_parent + os.sep + "seqlab" + os.sep)
        ):
            continue  # the checkout itself is the course: only CHILD_CODE of it is mounted
        if any((path + os.sep).startswith(k + os.sep) for k in kept):
            continue
        kept.append(path)
    return kept


def bwrap_command(
    argv: list[str],
    *,
    exercises: str | Path | None,
    scratch: str | Path,
    seccomp_fd: int | None = None,
    mounts: Iterable[tuple[str, str]] = (),
    gpu: Passthrough | None = None,
) -> list[str]:
    """``argv`` (the child's command line) wrapped in bwrap with the allow-list above, plus
    ``mounts``: (host folder, where the sandbox sees it) pairs, read-only (the fork server's
    submission slot), and ``gpu``: the NVIDIA driver's files when grading on CUDA (after the
    sandbox's own /proc and /dev, which would hide them)."""
    scratch = str(scratch)
    args = [
        BWRAP,
        "--unshare-all",
        "--unshare-user",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--uid",
        UNPRIVILEGED_ID,
        "--gid",
        UNPRIVILEGED_ID,
        "--hostname",
        "seqlab-sandbox",
        "--disable-userns",
    ]
    # /tmp first: a later mount under it (a submission in /tmp) must not be hidden by it.
    args += ["--size", str(SCRATCH_BYTES), "--tmpfs", "/tmp"]
    args += _system_mounts()
    for path in python_paths():
        args += ["--ro-bind", path, path]
    seqlab_parent = Path(__file__).resolve().parents[2]
    for relative in CHILD_CODE:
        code = seqlab_parent / relative
        args += ["--ro-bind", str(code), str(code)]
    if exercises is not None:
        args += ["--ro-bind", str(exercises), str(exercises)]
    for host, seen in mounts:
        args += ["--ro-bind", str(host), str(seen)]
    args += ["--proc", "/proc", "--dev", "/dev"]
    if gpu is not None:
        args += gpu.bwrap_args()
    if not scratch.startswith("/tmp/"):
        args += ["--size", str(SCRATCH_BYTES), "--tmpfs", scratch]
    else:
        args += ["--dir", scratch]
    args += ["--chdir", scratch]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return args + ["--", *argv]


def apply_rlimits() -> None:
    """preexec_fn of the bwrap process: lower (never raise) the limits in RLIMITS."""
    for name, value in RLIMITS.items():
        which = getattr(resource, name)
        _soft, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))


def exit_status(code: int) -> int:
    """bwrap reports a child killed by signal N as exit code 128 + N; give it back as -N, as
    subprocess does for a direct child, so the death reason is the same with or without bwrap."""
    return -(code - 128) if 128 < code < 128 + 65 else code


@functools.lru_cache(maxsize=1)
def probe() -> str:
    """Why bwrap cannot run here ("" when it can): tried once per process with the real
    namespaces and mounts (~20 ms), so a kernel that forbids user namespaces is caught up front."""
    if not os.access(BWRAP, os.X_OK):
        return f"{BWRAP} is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    scratch = "/tmp/seqlab-probe"
    try:
        done = subprocess.run(
            bwrap_command([sys.executable, "-I", "-S", "-c", "pass"], exercises=None, scratch=scratch),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=30,
            preexec_fn=apply_rlimits,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not start ({exc})"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap does not work here ({detail[-1] if detail else f'exit {done.returncode}'})"
    return ""


def resolve(mode: str = "auto") -> Sandbox:
    """The sandbox for ``--sandbox MODE``; raises SandboxUnavailable for an unknown mode, and
    for ``bwrap`` without one."""
    if mode not in MODES:
        raise SandboxUnavailable(f"unknown sandbox {mode!r} (use {', '.join(MODES)})")
    if mode == "none":
        return Sandbox("none", "--sandbox none was asked for")
    problem = probe()
    if not problem:
        return Sandbox("bwrap")
    if mode == "bwrap":
        raise SandboxUnavailable(f"--sandbox bwrap: {problem}")
    return Sandbox("none", problem)
