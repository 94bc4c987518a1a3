"""How graders reach student code: one handle, two runners (in-process and isolated).

Imports are lazy so that ``seqlab.student.spawn`` can start the child before torch loads.
"""
from __future__ import annotations

__all__ = ["Outcome", "StudentCode", "StudentError", "clone_tree", "open_submission"]


def __getattr__(name):
    if name in ("Outcome", "StudentCode", "StudentError", "clone_tree"):
        from . import base

        return getattr(base, name)
    raise AttributeError(name)


def open_submission(submission, reference, *, isolated: bool = True, device: str = "cpu", limits=None,
                    protected_dirs=(), skip=None, sandbox=None):
    """Load ``submission`` (a directory holding ``exercises/``) behind the graders' handle.

    ``skip``: module -> why it must not be loaded (the static policy's verdicts); ``sandbox``: the
    resolved ``sandbox.Sandbox`` the isolated child runs in (None: no kernel sandbox)."""
    from ..config import Limits

    limits = limits or Limits()
    if isolated:
        from .isolated import IsolatedStudent

        return IsolatedStudent(submission, reference, limits=limits, device=device, protected_dirs=protected_dirs,
                               skip=skip, sandbox=sandbox)
    from .inprocess import InProcessStudent

    return InProcessStudent(submission, reference, call_timeout=limits.call_timeout_s,
                            output_limit=int(limits.output_kb * 1024), skip=skip)
