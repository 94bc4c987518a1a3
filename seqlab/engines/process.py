"""The grading process grade-all keeps per job (``--jobs N``), on this machine or in a Dask
worker (seqlab.engines.dask_engine): a long-lived process that runs ``seqlab.batch.worker_main``
and grades one hand-in at a time, each in its own fresh student child."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from multiprocessing.connection import Connection


class _Worker:
    """A grading process that lives across submissions: it imports torch, pytest and the graders
    once. It runs only trusted code (each submission still gets its own fresh student child);
    if it dies or hangs, it is replaced and only the submission in hand is affected.

    Jobs and answers are pickled frames on a socket pair (multiprocessing.connection): both
    ends are seqlab's own, so a job carries its GradingSettings as they are, and nothing the
    worker prints can be mistaken for an answer."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.channel: Connection | None = None

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"from seqlab.engines.process import die_with_parent; die_with_parent({os.getpid()}); "
                f"from seqlab.batch import worker_main; worker_main({theirs.fileno()})",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=[theirs.fileno()],
        )
        theirs.close()
        self.channel = Connection(ours.detach())

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        if self.channel is not None:
            self.channel.close()
            self.channel = None

    def grade(self, job: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self._start()
        assert self.proc is not None and self.channel is not None  # _start made both
        try:
            self.channel.send(job)
        except OSError:
            self.stop()
            return {"status": "error", "reason": "the grading process could not be reached"}
        try:
            if not self.channel.poll(timeout):
                self.stop()
                return {"status": "error", "reason": f"grading took longer than {timeout:g} s"}
            return self.channel.recv()
        except (EOFError, OSError):
            code = self.proc.wait()
            self.stop()
            if code in (130, -2):  # interrupted (Ctrl-C): not done, a rerun grades it
                return {"status": "interrupted"}
            return {"status": "error", "reason": f"the grading process died (exit {code})"}


def die_with_parent(parent: int) -> None:
    """Linux's parent-death signal: a grading process whose parent is killed (a Dask worker lost
    mid-run) is killed too, so it cannot go on writing a folder that a retried task now grades."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the channel's EOF still ends the loop
        return
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)
