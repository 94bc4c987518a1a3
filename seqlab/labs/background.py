"""The trusted parent's own work while the student's child trains: on the other core, timed alone."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Background:
    """``work()`` in a daemon thread of the parent, started at once.

    The parent otherwise waits for its child, so work that needs no answer from it (the core's
    calibration, the reference's run on the same task) costs no wall time there. Two things make
    its figures those of the main thread: torch runs on one intra-op thread in it (OpenMP's
    setting is per thread, and without it a new thread's tiny ops wake a team of threads each:
    measured, 2x the CPU and 50x the wall), and its CPU is the kernel's count for this thread
    alone (``cpu_s``), so the child's and the main thread's time never enter it."""

    def __init__(self, name: str, work: Callable[[], object]) -> None:
        self.work, self.cpu_s = work, 0.0
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        import torch

        torch.set_num_threads(1)
        started = time.thread_time()
        try:
            self.work()
        finally:
            self.cpu_s = time.thread_time() - started

    def join(self) -> Background:
        self.thread.join()
        return self
