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
* processes (``subprocess``, ``os.system``, ``os.fork``, ``exec``, ``spawn``, ``pty``), signals,
  native code (``ctypes``) and sockets are refused; the grading server was started before.

The paths and events are those of ``seqlab.student.policy``, the one list the grading child uses
too.

Audit hooks cannot be removed from Python. This is a tripwire against the plain ways (reading
``../../source/...``, sqlite3 on the gradebook, a shell), not a sandbox: code that gets native
execution some other way runs with the instructor's rights. docs/nbgrader.md says what to do
about untrusted code (the secure path, or nbgrader in a container).
"""

from __future__ import annotations

from ..student.policy import PathPolicy, install_audit_hook


class GuardRefusal(PermissionError):
    pass


# The most specific root decides; kept under its old name for the kernel's callers.
Policy = PathPolicy

_installed: PathPolicy | None = None


def installed() -> PathPolicy | None:
    return _installed


def install(protected, allowed, signal_pids=()) -> PathPolicy:
    """Install the hook of ``seqlab.student.policy`` (the same paths and events as the grading
    child refuses) once per process; a second call only returns the first policy.

    ``signal_pids``: processes this one may still signal (its own grading server, which the kernel
    stops at shutdown)."""
    global _installed
    if _installed is None:
        _installed = install_audit_hook(
            protected, allowed=allowed, signal_pids=signal_pids, refusal=GuardRefusal, context="while autograding"
        )
    return _installed
