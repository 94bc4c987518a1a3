"""What a sandboxed child needs of the NVIDIA driver to use CUDA, found on the host; importable
without torch.

bubblewrap's ``--dev /dev`` is a /dev of its own with the dozen standard nodes, and the sandbox
shows no /sys: a child started that way sees no GPU. When (and only when) the grading runs on
CUDA, ``sandbox.bwrap_command`` adds what :func:`find` lists, after the sandbox's own /proc and
/dev:

* the driver's device nodes, with ``--dev-bind``: /dev/nvidiactl, /dev/nvidia-uvm (every CUDA
  context uses unified memory), /dev/nvidiaN (one per GPU), and where present
  /dev/nvidia-uvm-tools, /dev/nvidia-modeset, /dev/nvidia-caps/ (MIG) and /dev/dri. A node bound
  with ``--ro-bind`` or ``--bind`` is mounted ``nodev`` and cannot be opened; "read-only" means
  nothing to a character device anyway (the driver's ioctls are what it does);
* read-only: /proc/driver/nvidia and /proc/driver/nvidia-uvm (the driver reads them when it
  starts), sysfs's device tree (/sys/bus, /sys/class, /sys/dev, /sys/devices: without it cuInit
  fails with CUDA_ERROR_OPERATING_SYSTEM), and the driver's user-space libraries (libcuda*,
  libnvidia-*) and firmware where they lie outside the trees the sandbox already shows
  read-only (/usr, /lib...): found with ``ldconfig -p``, LD_LIBRARY_PATH (the child inherits
  it) and the folders container runtimes use.

This widens the sandbox by the driver's ioctl interface; docs/threat-model.md says what that
means. ``root`` (default /) is where the host's /dev, /proc and /sys are looked for, so that the
project's tests can lay out stand-in device files in a temporary folder.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

# Device nodes under /dev: the control node, one per GPU, unified memory, its tools, modesetting.
NODE = re.compile(r"nvidia(\d+|ctl|-uvm|-uvm-tools|-modeset)")
# Folders of nodes under /dev: MIG's capability nodes, the DRM render nodes.
NODE_FOLDERS = ("nvidia-caps", "dri")
# Without these the CUDA driver cannot start (it would try to make them with nvidia-modprobe, a
# setuid program the sandbox can neither run nor let gain privileges): no CUDA in the sandbox.
REQUIRED = ("nvidiactl", "nvidia-uvm")
PROC_FILES = ("driver/nvidia", "driver/nvidia-uvm")
SYS_TREES = ("bus", "class", "dev", "devices")
LIBRARY = re.compile(r"lib(cuda|nvidia-)[^/]*\.so[.0-9]*")
# Where drivers' libraries lie besides the linker's cache: the NVIDIA container toolkit's
# (/usr/local/nvidia), WSL's, the GPU operator's driver container, and the distributions' own.
KNOWN_LIBRARY_DIRS = (
    "/usr/local/nvidia/lib64",
    "/usr/local/nvidia/lib",
    "/usr/lib/wsl/lib",
    "/run/nvidia/driver/usr/lib/x86_64-linux-gnu",
    "/run/nvidia/driver/usr/lib64",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
)
FIRMWARE_DIRS = ("/lib/firmware/nvidia", "/usr/lib/firmware/nvidia", "/run/nvidia/driver/lib/firmware/nvidia")
# Already in every sandbox read-only (sandbox._system_mounts): a driver file under one needs nothing more.
SYSTEM_TREES = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")


@dataclass(frozen=True)
class Passthrough:
    """The NVIDIA driver's files for the sandbox: (host path, path in the sandbox) pairs."""

    devices: tuple[tuple[str, str], ...]  # --dev-bind
    read_only: tuple[tuple[str, str], ...]  # --ro-bind
    missing: tuple[str, ...]  # required nodes not found: CUDA cannot start in the sandbox

    @property
    def reachable(self) -> bool:
        return not self.missing

    @property
    def why_not(self) -> str:
        """Why the sandbox cannot reach the GPU ("" when it can)."""
        if self.reachable:
            return ""
        return "no " + ", ".join(self.missing) + " to pass into the sandbox"

    def bwrap_args(self) -> list[str]:
        args: list[str] = []
        for host, seen in self.devices:
            args += ["--dev-bind", host, seen]
        for host, seen in self.read_only:
            args += ["--ro-bind", host, seen]
        return args


def _under(path: str, trees: tuple[str, ...]) -> bool:
    return any(path == t or path.startswith(t + "/") for t in trees)


def _system_trees() -> tuple[str, ...]:
    """The trees the sandbox shows whole: a folder bound as it is, or a symlink into /usr."""
    return tuple(t for t in SYSTEM_TREES if os.path.isdir(t))


def _ldconfig_paths() -> list[str]:
    """The driver libraries in the dynamic linker's cache (``ldconfig -p``)."""
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.access(p, os.X_OK)), None
    )
    if ldconfig is None:
        return []
    try:
        listed = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []  # no cache to read: the known folders and LD_LIBRARY_PATH still count
    found = []
    for line in listed.splitlines():
        name, _, path = line.strip().partition(" => ")
        if LIBRARY.fullmatch(name.split(" ")[0]) and path.startswith("/"):
            found.append(path)
    return found


def driver_files(library_dirs: tuple[str, ...] | None = None) -> list[str]:
    """The driver's libraries and firmware folders, each path as the child may open it and the
    file it resolves to, that lie outside the system trees the sandbox already shows.
    ``library_dirs`` None: the linker's cache, LD_LIBRARY_PATH and KNOWN_LIBRARY_DIRS."""
    if library_dirs is None:
        dirs = [os.path.dirname(p) for p in _ldconfig_paths()]
        dirs += [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
        library_dirs = tuple(dict.fromkeys([*dirs, *KNOWN_LIBRARY_DIRS]))
    paths: list[str] = []
    for folder in library_dirs:
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if LIBRARY.fullmatch(name):
                path = os.path.join(os.path.abspath(folder), name)
                paths += [path, os.path.realpath(path)]
    paths += [d for d in FIRMWARE_DIRS if os.path.isdir(d)]
    system = _system_trees()
    return [p for p in dict.fromkeys(paths) if os.path.exists(p) and not _under(p, system)]


@functools.lru_cache(maxsize=8)
def find(root: str = "/", library_dirs: tuple[str, ...] | None = None) -> Passthrough:
    """The NVIDIA driver's nodes and files on this host (under ``root``), for the sandbox."""
    dev, proc, sys_ = (os.path.join(root, top) for top in ("dev", "proc", "sys"))
    names = sorted(os.listdir(dev)) if os.path.isdir(dev) else []
    nodes = [n for n in names if NODE.fullmatch(n)] + [n for n in NODE_FOLDERS if os.path.isdir(os.path.join(dev, n))]
    devices = tuple((os.path.join(dev, n), f"/dev/{n}") for n in nodes)
    missing = [f"/dev/{n}" for n in REQUIRED if n not in nodes]
    if not any(re.fullmatch(r"nvidia\d+", n) for n in nodes):
        missing.append("/dev/nvidiaN (a GPU's node)")
    read_only = [(os.path.join(proc, p), f"/proc/{p}") for p in PROC_FILES if os.path.isdir(os.path.join(proc, p))]
    read_only += [(os.path.join(sys_, t), f"/sys/{t}") for t in SYS_TREES if os.path.isdir(os.path.join(sys_, t))]
    read_only += [(p, p) for p in driver_files(library_dirs)]
    return Passthrough(devices, tuple(read_only), tuple(missing))
