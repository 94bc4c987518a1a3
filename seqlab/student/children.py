"""Where the student's next child comes from: prespawned, forked, or started alone.

``take`` gives ``IsolatedStudent`` a child for a submission: one ``prespawn`` started for it,
else one forked by this process's fork server (seqlab.student.forkserver, which says what
makes a forked child the same as one started alone), else one started alone (spawn.py). The
fork server is skipped, and the child started alone, whenever the server is switched off
(``SEQLAB_FORKSERVER=0``), not ready, busy with another submission's live child, retired, dead,
or the submission's folder is not a small plain one it can copy.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .forkserver.client import ForkedProcess, server_for
from .spawn import Child, child_key, spawn

if TYPE_CHECKING:
    from .sandbox import Sandbox

_prespawned: list[Child] = []


def prespawn(exercises: Path | None = None, sandbox: Sandbox | None = None) -> None:
    """Get the next child's torch import going now, overlapping the caller's own start-up: start
    the fork server (seqlab.student.forkserver), or where there is none, one child for this
    submission and sandbox, which the next IsolatedStudent for them takes instead of starting its
    own."""
    if server_for(sandbox) is None and not _prespawned:
        _prespawned.append(spawn(exercises, sandbox))


def take(exercises: Path | None = None, sandbox: Sandbox | None = None) -> Child:
    """A child for this submission: a prespawned one, else forked by this process's fork server,
    else one started alone."""
    key = child_key(exercises, sandbox)
    while _prespawned:
        child = _prespawned.pop()
        if child.handle.poll() is None and child.key == key:
            return child
        _discard(child)
    server = server_for(sandbox) if exercises is not None else None
    forked = server.fork(exercises) if server is not None else None
    return forked if forked is not None else spawn(exercises, sandbox)


def retire_server_of(child: Child | None) -> bool:
    """Shut down the server that forked ``child``, if one did (its next child, and the next
    submission's, then come from a fresh one); False for a child started alone."""
    handle = child.handle if child is not None else None
    if not isinstance(handle, ForkedProcess):
        return False
    handle.kill()
    handle.server.shutdown()
    return True


def _discard(child: Child) -> None:
    child.handle.kill()
    for fd in (child.fd_in, child.fd_out):
        try:
            os.close(fd)
        except OSError:
            pass
