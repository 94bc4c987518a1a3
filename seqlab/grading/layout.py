"""What two results of a check say by their layout: the helpers the structural classes share,
and the classes about shape and normalisation (seqlab.grading.diagnose tries them all)."""

from __future__ import annotations

from typing import Any

import torch

from ..tolerance import Tolerance
from .compare import matches


def _tensor(x: Any) -> torch.Tensor | None:
    if isinstance(x, torch.Tensor) and (x.is_floating_point() or x.is_complex()) and x.numel() > 0:
        return x.detach().to("cpu", torch.float64)
    if isinstance(x, float) and not isinstance(x, bool):
        return torch.tensor(x, dtype=torch.float64)
    return None


def _close(a: torch.Tensor, e: torch.Tensor, tol: Tolerance) -> bool:
    return bool(torch.isfinite(a).all()) and matches(a, e, tol)


def _sizes_named(sizes: dict[str, Any]) -> dict[str, int]:
    """The case's integer sizes above 1 (a size 1 makes every ratio ambiguous)."""
    return {k: int(v) for k, v in sizes.items() if isinstance(v, int) and not isinstance(v, bool) and v > 1}


def _axes(k: int, shape: tuple[int, ...], sizes: dict[str, Any]) -> str:
    names = [n for n, v in _sizes_named(sizes).items() if v == shape[k]]
    return f"axis {k}" + (f" (size {shape[k]}: {' or '.join(names)})" if names else f" (size {shape[k]})")


def extra(a: torch.Tensor, e: torch.Tensor, tol: Tolerance, sizes: dict[str, Any]) -> str | None:
    """The expected result inside a result of another shape: one item more (or fewer) along an
    axis, or one item of an axis where the whole axis is expected (or the reverse)."""
    if a.dim() == e.dim():
        grown = [k for k in range(e.dim()) if a.shape[k] != e.shape[k]]
        if len(grown) != 1:
            return None
        k = grown[0]
        n = e.shape[k]
        if a.shape[k] == n + 1:
            for start, where in ((1, "first"), (0, "last")):
                if _close(a.narrow(k, start, n), e, tol):
                    return (
                        f"your result is the expected one with one item more, its {where}, along "
                        f"{_axes(k, a.shape, sizes)}: something is included that is not an output "
                        "(an initial state, a start token)"
                    )
        if a.shape[k] + 1 == n:
            for start, where in ((1, "first"), (0, "last")):
                if _close(a, e.narrow(k, start, n - 1), tol):
                    return f"your result is the expected one without its {where} item along {_axes(k, e.shape, sizes)}"
        return None
    if a.dim() == e.dim() + 1:
        bigger, smaller, yours = a, e, True
    elif e.dim() == a.dim() + 1:
        bigger, smaller, yours = e, a, False
    else:
        return None
    for k in range(bigger.dim()):
        for index, where in ((-1, "last"), (0, "first")):
            item = bigger.select(k, index)
            if tuple(item.shape) == tuple(smaller.shape) and _close(item, smaller, tol):
                axis = _axes(k, bigger.shape, sizes)
                if yours:
                    return f"the expected result is the {where} item along {axis} of yours: return only that item"
                return f"your result is the {where} item along {axis} of the expected one: return them all"
    return None


def normalised(a: torch.Tensor, e: torch.Tensor, tol: Tolerance, sizes: dict[str, Any]) -> str | None:
    """Weights that sum to one along another axis than the expected ones (a softmax or a
    normalisation over the wrong axis)."""
    if e.dim() < 2 or bool((e < -tol.atol).any()):
        return None
    loose = Tolerance(atol=max(tol.atol, 1e-6), rtol=0.0)

    def sums_to_one(x: torch.Tensor, k: int) -> bool:
        total = x.sum(dim=k)
        return x.shape[k] > 1 and _close(total, torch.ones_like(total), loose)

    right = [k for k in range(e.dim()) if sums_to_one(e, k)]
    if len(right) != 1 or sums_to_one(a, right[0]):
        return None
    wrong = [k for k in range(a.dim()) if k != right[0] and sums_to_one(a, k)]
    if not wrong:
        return None
    return (
        f"your result sums to 1 along {_axes(wrong[0], a.shape, sizes)}, the expected one along "
        f"{_axes(right[0], e.shape, sizes)}: the softmax (or normalisation) runs over the wrong axis"
    )
