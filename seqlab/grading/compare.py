"""Comparing trees of tensors: the structure first (type, length, keys, shape, dtype, device),
then the values within a tolerance, and an exact test for arguments modified in place.

A tree is a tensor, a Python number, or a tuple, list or dict of trees; every finding names its
place in the tree by a path such as ``grads['W_hh']`` or ``output[1]``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import torch

from ..tolerance import Tolerance


def _items(actual: Any, expected: Any, path: str) -> list[tuple[Any, Any, str]]:
    """The (actual, expected, path) of each item of the container ``expected``; ``actual`` is a
    container of the same kind, length and keys (its structure was checked)."""
    if isinstance(expected, dict):
        return [(actual[key], expected[key], f"{path}[{key!r}]") for key in expected]
    return [(a, e, f"{path}[{i}]") for i, (a, e) in enumerate(zip(actual, expected))]


Finding = TypeVar("Finding")


def _first(findings: Iterable[Finding | None]) -> Finding | None:
    """The first finding that is not None, evaluating no further (a generator stays lazy)."""
    return next((found for found in findings if found is not None), None)


def structure_problem(actual: Any, expected: Any, path: str) -> str | None:
    """The first structural difference (type, length, keys, shape, dtype, device), or None."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return f"{path} should be a torch.Tensor, got {type(actual).__name__}"
        if tuple(actual.shape) != tuple(expected.shape):
            return f"{path} has shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"
        if actual.dtype != expected.dtype:
            return f"{path} has dtype {actual.dtype}, expected {expected.dtype} (keep the dtype of the inputs)"
        if actual.device.type != expected.device.type:
            return f"{path} is on {actual.device}, expected {expected.device} (create tensors on the inputs' device)"
        return None
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)):
            return f"{path} should be a {type(expected).__name__} of {len(expected)}, got {type(actual).__name__}"
        if len(actual) != len(expected):
            return f"{path} should have {len(expected)} items, got {len(actual)}"
    elif isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path} should be a dict, got {type(actual).__name__}"
        if set(actual) != set(expected):
            missing, extra = sorted(set(expected) - set(actual)), sorted(set(actual) - set(expected))
            return f"{path} keys differ: missing {missing}, unexpected {extra}"
    elif isinstance(expected, (int, float)) and not isinstance(expected, bool):
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            return f"{path} should be a Python number, got {type(actual).__name__}"
        return None
    else:
        return None
    return _first(structure_problem(a, e, p) for a, e, p in _items(actual, expected, path))


def _fmt_index(index: Sequence[Any]) -> str:
    return "(" + ", ".join(str(int(i)) for i in index) + ")" if len(index) != 1 else f"({int(index[0])},)"


@dataclass
class Mismatch:
    """The worst value out of tolerance in one leaf, and how many are."""

    path: str
    max_abs: float
    max_rel: float
    index: tuple[int, ...]
    got: float
    want: float
    bad: int
    total: int

    def describe(self) -> str:
        where = f" at index {_fmt_index(self.index)}" if self.index else ""
        if math.isnan(self.max_abs):  # integers and booleans: an exact comparison
            return (
                f"{self.path}: {self.bad} of {self.total} values differ; first{where}: got {self.got:g}, "
                f"expected {self.want:g}"
            )
        rel = f"; max rel error {self.max_rel:.3g}" if not math.isnan(self.max_rel) else ""
        return (
            f"{self.path}: {self.bad} of {self.total} values out of tolerance; max abs error "
            f"{self.max_abs:.3g}{where} (got {self.got:.6g}, expected {self.want:.6g}){rel}"
        )


def _tensor_mismatch(actual: torch.Tensor, expected: torch.Tensor, tol: Tolerance, path: str) -> Mismatch | None:
    a = actual.detach().to("cpu")
    e = expected.detach().to("cpu")
    if e.dtype == torch.bool or not (e.is_floating_point() or e.is_complex()):
        differ = a != e
        if not bool(differ.any()):
            return None
        idx = tuple(differ.nonzero()[0].tolist())
        return Mismatch(path, math.nan, math.nan, idx, float(a[idx]), float(e[idx]), int(differ.sum()), e.numel())
    a64, e64 = a.to(torch.float64), e.to(torch.float64)
    same_nonfinite = (a64 == e64) | (torch.isnan(a64) & torch.isnan(e64))
    err = (a64 - e64).abs()
    err = torch.where(same_nonfinite, torch.zeros_like(err), err)
    err = torch.where(torch.isnan(err), torch.full_like(err, math.inf), err)
    # An expected inf/nan is only matched by the same inf/nan; the bound alone would pass any
    # finite value against it (inf > x is False, and so is anything > nan).
    bad = (err > tol.atol + tol.rtol * e64.abs()) | (~torch.isfinite(e64) & ~same_nonfinite)
    if not bool(bad.any()):
        return None
    # Relative error only where the expected value is not ~0 (it is meaningless there).
    meaningful = bad & (e64.abs() > max(tol.atol, 1e-300))
    rel = float((err[meaningful] / e64.abs()[meaningful]).max()) if bool(meaningful.any()) else math.nan
    flat = int(torch.argmax(torch.where(bad, err, torch.full_like(err, -1.0))))
    idx = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), e.shape)) if e.dim() else ()
    got, want = float(a64.reshape(-1)[flat]), float(e64.reshape(-1)[flat])
    return Mismatch(path, float(err.max()), rel, idx, got, want, int(bad.sum()), e.numel())


def value_mismatch(actual: Any, expected: Any, tol: Tolerance, path: str) -> Mismatch | None:
    """The first leaf whose values are not within tolerance (structure already checked)."""
    if isinstance(expected, torch.Tensor):
        return _tensor_mismatch(actual, expected, tol, path)
    if isinstance(expected, (tuple, list, dict)):
        return _first(value_mismatch(a, e, tol, p) for a, e, p in _items(actual, expected, path))
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        err = abs(float(actual) - float(expected))
        if err <= tol.atol + tol.rtol * abs(float(expected)):
            return None
        return Mismatch(path, err, err / max(abs(float(expected)), 1e-300), (), float(actual), float(expected), 1, 1)
    if actual != expected:
        return Mismatch(path, math.nan, math.nan, (), math.nan, math.nan, 1, 1)
    return None


def matches(actual: Any, candidate: Any, tol: Tolerance) -> bool:
    """Whether ``actual`` has the structure of ``candidate`` and its values within ``tol``."""
    try:
        return structure_problem(actual, candidate, "x") is None and value_mismatch(actual, candidate, tol, "x") is None
    except Exception:  # a value that cannot even be compared with the candidate does not match it
        return False


def purity_failure(function: str, where: str) -> tuple[str, str]:
    """The message and the hint for an argument found changed in place. The change is exact (see
    first_change), so the hint names it for certain: which argument, the operations that do it,
    and what to write instead."""
    message = (
        f"{function} modified its argument {where} in place; functions must be pure (work on new tensors / a new dict)"
    )
    hint = (
        f"{where} is changed in place, so the caller's {where} changes too: an in-place operation does"
        " this (a method ending in _ such as sub_, add_, mul_, copy_; x -= ... or x += ... on a tensor;"
        " an assignment into x[...] or into a dict passed in; .to(dtype) and .contiguous() return the"
        " argument itself when nothing needs changing, so writing into their result writes into it)."
        " Compute new values and return them"
        " instead: w = w - lr * dw, m = beta1 * m + (1 - beta1) * dw, a new dict {**state, 'm': m}"
    )
    return message, hint


def first_change(before: Any, after: Any, path: str) -> str | None:
    """Where an argument was modified in place, by exact comparison. A generator is not data:
    drawing from it is what it is passed for."""
    if isinstance(before, torch.Generator):
        return None
    if isinstance(before, torch.Tensor):
        if not isinstance(after, torch.Tensor) or after.shape != before.shape or after.dtype != before.dtype:
            return path
        b, a = before.detach().cpu(), after.detach().cpu()
        same = (a == b) | (torch.isnan(a) & torch.isnan(b)) if b.is_floating_point() else (a == b)
        return None if bool(same.all()) else path
    if isinstance(before, (list, tuple)):
        if not isinstance(after, (list, tuple)) or len(after) != len(before):
            return path
    elif isinstance(before, dict):
        if not isinstance(after, dict) or set(after) != set(before):
            return path
    else:
        return None if before == after else path
    return _first(first_change(b, a, p) for a, b, p in _items(after, before, path))


def first_float_dtype(tree: Any) -> torch.dtype | None:
    """The dtype of the first floating-point tensor in ``tree`` (depth first), or None."""
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, torch.Tensor) and node.is_floating_point():
            return node.dtype
        children = node.values() if isinstance(node, dict) else node if isinstance(node, (list, tuple)) else ()
        pending.extend(reversed(list(children)))
    return None
