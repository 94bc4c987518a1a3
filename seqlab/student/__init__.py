"""How graders reach student code: one handle, two runners (in-process and isolated).

Imports are lazy so that ``seqlab.student.spawn`` can start the child before torch loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for the type checker only: at run time the names load lazily (__getattr__)
    from pathlib import Path

    from ..config import Limits
    from ..reference import Reference
    from ..subset.modules import Modules
    from .base import Outcome, StudentCode, StudentError
    from .sandbox import Sandbox
    from .trees import clone_tree

__all__ = ["Outcome", "StudentCode", "StudentError", "clone_tree", "open_submission"]


def __getattr__(name: str) -> Any:
    if name in ("Outcome", "StudentCode", "StudentError"):
        from . import base

        return getattr(base, name)
    if name == "clone_tree":
        from .trees import clone_tree

        return clone_tree
    raise AttributeError(name)


def open_submission(
    submission: Path,
    reference: Reference,
    *,
    isolated: bool = True,
    device: str = "cpu",
    limits: Limits | None = None,
    protected_dirs: tuple[str | Path, ...] = (),
    skip: dict[str, str] | None = None,
    sandbox: Sandbox | None = None,
    tolerances: dict[str, Any] | None = None,
    texts: Modules | None = None,
) -> StudentCode:
    """Load ``submission`` (a directory holding ``exercises/``) behind the graders' handle.

    ``skip``: module -> why it must not be loaded (the static policy's verdicts); ``sandbox``: the
    resolved ``sandbox.Sandbox`` the isolated child runs in (None: no kernel sandbox);
    ``texts``: the submission's modules as the parent read and checked them
    (``seqlab.subset.read_modules``; read on the spot when not given);
    ``tolerances`` (dtype name -> an object with ``rtol``/``atol``, the config's by default) is
    how close a student's call to a declared callee must be to one the reference made."""
    from ..config import Limits, load_config

    limits = limits or Limits()
    tolerances = {name: (float(t.rtol), float(t.atol)) for name, t in (tolerances or load_config().tolerances).items()}
    # Keywords spelled out, not gathered in dicts: each is then checked against its runner's type.
    if isolated:
        from .isolated import IsolatedStudent

        return IsolatedStudent(
            submission,
            reference,
            limits=limits,
            device=device,
            protected_dirs=protected_dirs,
            sandbox=sandbox,
            skip=skip,
            texts=texts,
            tolerances=tolerances,
        )
    from .inprocess import InProcessStudent

    return InProcessStudent(
        submission,
        reference,
        call_timeout=limits.call_timeout_s,
        output_limit=int(limits.output_kb * 1024),
        skip=skip,
        texts=texts,
        tolerances=tolerances,
    )
