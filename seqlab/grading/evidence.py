"""What a failure rules out, kept for the function's other tests (seqlab.grading.across): a name
one case says and another case rules out matched by a coincidence of the first case's sizes, and
a name is said only where it is a fact about the output, so in every case that tried it.

* a table row (10000^(i/d) and 10000^(2i/P) agree where P = 2d);
* a probe, the reference with one input changed (with N = 1 a maximum taken over the wrong axis
  shifts the logits to 0, and the loss is the one of logits = 0).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tolerance import Tolerance
from .compare import matches
from .layout import _close, _tensor


def row_evidence(built: list[Any], fits: list[Any], picked: list[Any], actual: Any, tol: Tolerance) -> dict[str, Any]:
    """The names of the table rows this failure rules out: computed here, and no row of that name
    fits the student's output (``fits``: the rows consistent with the parts the student has
    right; ``picked``: their part that fails)."""
    fit = {id(m) for m in fits}
    matched = {p.name for p in picked if p.output is not None and matches(actual, p.output, p.tol or tol)}
    seen = {m.name for m in built if m.output is not None and id(m) not in fit}
    seen |= {p.name for p in picked if p.output is not None}
    return {"rows_ruled_out": sorted(seen - matched)} if seen - matched else {}


def _part(tree: Any, at: tuple[Any, ...]) -> Any:
    try:
        for key in at:
            tree = tree[key]
        return tree
    except (IndexError, KeyError, TypeError):
        return None


def probe_evidence(
    probes: Iterable[tuple[str, Any, str]], at: tuple[Any, ...], actual: Any, tol: Tolerance
) -> dict[str, Any]:
    """The probes (already computed for this failure) whose part differs from the student's."""
    # held as diagnose holds them (in float64, by value): a probe computed in another dtype than
    # the student's output is not ruled out by its dtype
    a = _tensor(actual)
    parts = [(what, _tensor(_part(output, at))) for what, output, _ in probes]
    ruled = sorted(
        {w for w, o in parts if a is not None and o is not None and o.shape == a.shape and not _close(a, o, tol)}
    )
    return {"probes_ruled_out": ruled} if ruled else {}
