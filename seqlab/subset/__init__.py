"""The language subset a submission is written in: Python, compiled through RestrictedPython's
restricting transformer with this course's policy, and run with guards and a safe set of
builtins.

* ``rules``: the tables (allowed modules and attributes, refused builtins and names), once;
* ``transform``: decoding and the static check, in the parent and in the student's tests;
* ``guards``: what the transformed code calls at run time, in the student's process;
* ``modules``: a submission's modules read once, checked, and served to the import system.

Nothing here imports the rest of the package: the student release ships this folder as it is, so
that the student's own tests apply the grader's rules in the grader's words.
"""

from __future__ import annotations

from pathlib import Path

from .modules import Modules, read_modules
from .transform import Problem, check, decode_source

__all__ = ["Modules", "Problem", "check", "decode_source", "problems_of", "read_modules", "refusals"]


def problems_of(text: str, filename: str) -> list[str]:
    """Every break of the subset in ``text``, rendered as 'filename, line N: rule (instead)'."""
    return [p.render(filename) for p in check(text, filename).problems]


def refusals(submission: Path, modules=None) -> dict[str, str]:
    """Module -> why it is not loaded, for the modules of ``submission`` (a folder holding
    ``exercises/``) that the subset refuses; ``modules`` limits the answer to those names."""
    refused = read_modules(Path(submission) / "exercises").refused
    return {m: why for m, why in refused.items() if modules is None or m in modules}
