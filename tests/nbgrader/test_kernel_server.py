"""The grading server a notebook kernel starts: reaped as soon as it exits, so ipykernel's
shutdown (which waits until the kernel has no child process left) finds none and the kernel
exits within nbgrader's grace period instead of being killed 2.5 s later."""

from __future__ import annotations

import time

from seqlab.nbgrader import kernel


def test_a_stopped_server_does_not_linger_as_a_zombie(monkeypatch):
    monkeypatch.setattr(kernel, "_server", None)
    monkeypatch.setattr(kernel, "_state", dict(kernel._state))
    server = kernel._spawn_server(seed=0, course_root=None)
    try:
        server.terminate()  # what ipykernel sends its children at shutdown
        deadline = time.monotonic() + 10
        # nothing here waits for the server: only the kernel's reaper can have collected it
        while server.returncode is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.returncode is not None, "the server's exit was not collected"
    finally:
        server.kill()
        server.wait()
