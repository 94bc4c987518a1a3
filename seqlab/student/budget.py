"""A time budget for a block of Python in the main thread, by a repeating alarm.

The trusted parent's recording of the reference's calls (seqlab.student.callees) and the
in-process runner's calls (seqlab.student.inprocess) both end a block that runs too long with it.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

# After the budget the alarm repeats at this interval until the block has ended: an exception
# raised while Python runs a weakref or __del__ callback is printed and dropped, so a single
# alarm that lands there would leave the block running with no limit (seen in the mutant bank).
RETRY_S = 0.05


@contextlib.contextmanager
def time_budget(seconds: float | None, exception: type[BaseException]) -> Iterator[None]:
    """Raise ``exception`` in the main thread after ``seconds`` (no limit off the main thread)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return
    active = [True]

    def fire(signum: int, frame: FrameType | None) -> None:
        if active[0]:
            raise exception()

    hook = sys.unraisablehook

    def dropped(unraisable: sys.UnraisableHookArgs) -> None:
        # The alarm landed in a callback and was dropped, as expected (the repeat lands again):
        # not reported, so that no slower hook (pytest's formats a traceback) runs while the
        # repeats keep coming and is cut short by one of them.
        if not isinstance(unraisable.exc_value, exception):
            hook(unraisable)

    previous = signal.signal(signal.SIGALRM, fire)
    sys.unraisablehook = dropped
    signal.setitimer(signal.ITIMER_REAL, seconds, RETRY_S)
    try:
        yield
    finally:
        active[0] = False  # first: a repeat that arrives from here on does nothing
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = hook


__all__ = ["RETRY_S", "time_budget"]
