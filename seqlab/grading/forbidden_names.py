"""Forbidden operations named in a function's source, found in the trusted parent.

``grading_config.yaml`` forbids, per function, the built-ins that compute the whole answer
(``torch.nn.functional.layer_norm`` for ``layer_norm``, ...). A graded call that reaches one is
caught by the child's recorders; this scan catches a forbidden name in the source of the
function, or of a module-level helper it calls, even on a path the graded calls never took.
Aliases are resolved (``from torch.nn import functional as F``, ``sdpa = F.sdpa``,
``getattr(F, "group_norm")``), so a pattern matches whatever name the student gave the operation.

It reads the source as a syntax tree, never importing it; the language subset that decides whether
a module may load at all, and keeps every attribute name it can read a literal, is ``seqlab.subset``.
"""

from __future__ import annotations

from pathlib import Path

from .. import contract
from ..config import GradingConfig
from .static_names import referenced_names

__all__ = ["referenced_names", "static_voids"]


def static_voids(submission: Path, config: GradingConfig) -> dict[str, str]:
    """Forbidden operations named in the source of a function (or a helper it calls)."""
    voids: dict[str, str] = {}
    for qualname in contract.FUNCTIONS:
        rules = config.rules(qualname)
        if not rules.forbidden:
            continue
        module, function = qualname.split(".", 1)
        path = Path(submission) / "exercises" / f"{module}.py"
        try:
            siblings = [f.split(".", 1)[1] for f in contract.functions_of(module) if f != qualname]
            names = referenced_names(path.read_text(encoding="utf-8", errors="replace"), function, siblings)
        except (OSError, SyntaxError, ValueError, RecursionError):
            continue  # missing or broken modules are reported by the loader
        for lineno, name in names:
            pattern = rules.forbidden_match(name)
            if pattern:
                voids[qualname] = (
                    f"{qualname} uses {name} (exercises/{module}.py, line {lineno}), which this "
                    f"exercise forbids (rule {pattern!r}); the function scores 0"
                )
                break
    return voids
