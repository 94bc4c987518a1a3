"""The assertions graders make, with feedback that names the mistake.

A grader calls ``grade.check(*args, **kwargs)``: the student's function runs on copies of the
arguments (through the handle), the reference runs on the same arguments in the trusted
process, and the two are compared under the rules of the contract:

* gates (each fails the test it happens in, saying which rule broke): a structure, shape, dtype
  or device different from the reference's; an argument modified in place; an output that is
  an argument or a view of one;
* voiding: a forbidden operation seen during the call (or in the source) voids the function;
* values: within the tolerance for the dtype; otherwise the failure reports the case, the max
  absolute and relative error, the worst index, and the known mistake the output matches.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..contract import SIGNATURES
from ..student import Outcome, StudentError
from ..student.guards import split_scope
from ..tolerance import Tolerance


class GradeFailure(AssertionError):
    """A test failed for a reason the student can act on."""

    def __init__(self, message: str, *, hint: str = "", details: dict | None = None, rule: str = ""):
        super().__init__(message)
        self.message, self.hint, self.details, self.rule = message, hint, dict(details or {}), rule


class Voided(GradeFailure):
    """A rule that voids the whole function (a forbidden operation)."""


class NotGradable(GradeFailure):
    """The student's code gave no value (not implemented, missing, crashed, timed out)."""


def variant_output(fn: Callable, *args, **kwargs) -> Any:
    """A known-wrong variant's output on these inputs, or None where it cannot even run on them
    (a variant written for one shape may fail on another: then it simply names nothing)."""
    try:
        with torch.no_grad():
            return fn(*args, **kwargs)
    except Exception:
        return None


@dataclass
class Mistake:
    """A known wrong variant: its output on the same input, and one sentence that teaches."""

    name: str
    output: Any
    explain: str


def param_names(qualname: str) -> list[str]:
    return [p.split("=")[0].strip() for p in SIGNATURES[qualname].strip("()").split(",") if p.strip()]


# --- comparing trees of tensors ---------------------------------------------------------------


def _fmt_index(index) -> str:
    return "(" + ", ".join(str(int(i)) for i in index) + ")" if len(index) != 1 else f"({int(index[0])},)"


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
        for i, (a, e) in enumerate(zip(actual, expected)):
            problem = structure_problem(a, e, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path} should be a dict, got {type(actual).__name__}"
        if set(actual) != set(expected):
            missing, extra = sorted(set(expected) - set(actual)), sorted(set(actual) - set(expected))
            return f"{path} keys differ: missing {missing}, unexpected {extra}"
        for key in expected:
            problem = structure_problem(actual[key], expected[key], f"{path}[{key!r}]")
            if problem:
                return problem
        return None
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            return f"{path} should be a Python number, got {type(actual).__name__}"
        return None
    return None


@dataclass
class Mismatch:
    path: str
    max_abs: float
    max_rel: float
    index: tuple
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


def value_mismatch(actual: Any, expected: Any, tol: Tolerance, path: str) -> Mismatch | None:
    """The first leaf whose values are not within tolerance (structure already checked)."""
    if isinstance(expected, torch.Tensor):
        a = actual.detach().to("cpu")
        e = expected.detach().to("cpu")
        if e.dtype == torch.bool or not (e.is_floating_point() or e.is_complex()):
            differ = a != e
            if not bool(differ.any()):
                return None
            idx = tuple(differ.nonzero()[0].tolist())
            return Mismatch(
                path, float("nan"), float("nan"), idx, float(a[idx]), float(e[idx]), int(differ.sum()), e.numel()
            )
        a64, e64 = a.to(torch.float64), e.to(torch.float64)
        same_nonfinite = (a64 == e64) | (torch.isnan(a64) & torch.isnan(e64))
        err = (a64 - e64).abs()
        err = torch.where(same_nonfinite, torch.zeros_like(err), err)
        err = torch.where(torch.isnan(err), torch.full_like(err, math.inf), err)
        # An expected inf/nan is only matched by the same inf/nan; the bound alone would pass
        # any finite value against it (inf > x is False, and so is anything > nan).
        bad = (err > tol.atol + tol.rtol * e64.abs()) | (~torch.isfinite(e64) & ~same_nonfinite)
        if not bool(bad.any()):
            return None
        # Relative error only where the expected value is not ~0 (it is meaningless there).
        meaningful = bad & (e64.abs() > max(tol.atol, 1e-300))
        rel = float((err[meaningful] / e64.abs()[meaningful]).max()) if bool(meaningful.any()) else float("nan")
        flat = int(torch.argmax(torch.where(bad, err, torch.full_like(err, -1.0))))
        idx = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), e.shape)) if e.dim() else ()
        return Mismatch(
            path,
            float(err.max()),
            rel,
            idx,
            float(a64.reshape(-1)[flat]),
            float(e64.reshape(-1)[flat]),
            int(bad.sum()),
            e.numel(),
        )
    if isinstance(expected, (tuple, list)):
        for i, (a, e) in enumerate(zip(actual, expected)):
            found = value_mismatch(a, e, tol, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(expected, dict):
        for key in expected:
            found = value_mismatch(actual[key], expected[key], tol, f"{path}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        err = abs(float(actual) - float(expected))
        if err <= tol.atol + tol.rtol * abs(float(expected)):
            return None
        return Mismatch(path, err, err / max(abs(float(expected)), 1e-300), (), float(actual), float(expected), 1, 1)
    if actual != expected:
        return Mismatch(path, float("nan"), float("nan"), (), float("nan"), float("nan"), 1, 1)
    return None


def matches(actual: Any, candidate: Any, tol: Tolerance) -> bool:
    try:
        return structure_problem(actual, candidate, "x") is None and value_mismatch(actual, candidate, tol, "x") is None
    except Exception:
        return False


def first_change(before: Any, after: Any, path: str) -> str | None:
    """Where an argument was modified in place, by exact comparison."""
    if isinstance(before, torch.Tensor):
        if not isinstance(after, torch.Tensor) or after.shape != before.shape or after.dtype != before.dtype:
            return path
        b, a = before.detach().cpu(), after.detach().cpu()
        same = (a == b) | (torch.isnan(a) & torch.isnan(b)) if b.is_floating_point() else (a == b)
        return None if bool(same.all()) else path
    if isinstance(before, (list, tuple)):
        if not isinstance(after, (list, tuple)) or len(after) != len(before):
            return path
        for i, (b, a) in enumerate(zip(before, after)):
            found = first_change(b, a, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(before, dict):
        if not isinstance(after, dict) or set(after) != set(before):
            return path
        for key in before:
            found = first_change(before[key], after[key], f"{path}[{key!r}]")
            if found:
                return found
        return None
    return None if before == after else path


# --- the per-test grading helper -------------------------------------------------------------


@dataclass
class Grade:
    """Bound to one test and one contract function; handed to graders as the ``grade`` fixture."""

    function: str
    student: Any
    reference: Callable[[str], Callable]
    tolerances: dict[str, Tolerance]
    forbidden_match: Callable[[str], str | None]
    kernels: bool = False
    # Another contract function's forbidden_match: an operation seen inside the student's own
    # code of a declared callee is that callee's to answer for when its rules forbid it.
    forbidden_in: Callable[[str], Callable[[str], str | None]] | None = None
    fraction: float | None = None
    notes: list[str] = field(default_factory=list)
    calls: int = 0

    # -- running -----------------------------------------------------------------------------
    def ref(self, *args, **kwargs):
        """The reference's answer for the graded function on these arguments."""
        return self.reference(self.function)(*args, **kwargs)

    def run(self, *args, **kwargs) -> Outcome:
        """Run the student's function; applies the gates that do not need the expected value."""
        self.calls += 1
        try:
            outcome = self.student.run(self.function, args, kwargs, kernels=self.kernels)
        except StudentError as exc:
            self._void_if_forbidden(exc.ops)
            output = f"\n(printed: {exc.output.strip()[:500]})" if exc.output.strip() else ""
            raise NotGradable(f"{self.function}: {exc.message}{output}", rule=exc.kind) from None
        self._void_if_forbidden(outcome.ops)
        names = param_names(self.function)
        for i, (before, after) in enumerate(zip(args, outcome.args)):
            changed = first_change(before, after, names[i] if i < len(names) else f"argument {i}")
            if changed:
                raise GradeFailure(
                    f"{self.function} modified its argument {changed} in place; functions must be "
                    f"pure (work on new tensors / a new dict)",
                    rule="purity",
                )
        for key, before in kwargs.items():
            changed = first_change(before, outcome.kwargs.get(key), key)
            if changed:
                raise GradeFailure(
                    f"{self.function} modified its argument {changed} in place; functions must be pure", rule="purity"
                )
        if outcome.aliased:
            raise GradeFailure(
                f"{self.function} returned {outcome.aliased[0]}, which is an argument or a view of "
                f"one; return a new tensor (e.g. .clone())",
                rule="aliasing",
            )
        return outcome

    def unpack(self, value: Any, names: tuple[str, ...]) -> tuple:
        """Check that the student returned a tuple of ``len(names)`` items and return it."""
        if not isinstance(value, (tuple, list)) or len(value) != len(names):
            got = f"a {type(value).__name__}" + (f" of {len(value)}" if isinstance(value, (tuple, list)) else "")
            raise GradeFailure(
                f"{self.function} should return a tuple ({', '.join(names)}), got {got}", rule="shape/dtype/device"
            )
        return tuple(value)

    def _void_if_forbidden(self, ops: dict) -> None:
        for key in sorted(ops):
            name, inside = split_scope(key)
            pattern = self.forbidden_match(name)
            if not pattern or self._charged_to_callee(name, inside):
                continue
            where = f" (inside its call to {inside[-1]})" if inside else ""
            raise Voided(
                f"{self.function} called {name}{where}, which this exercise forbids (rule {pattern!r}); "
                f"the function scores 0",
                rule="forbidden",
            )

    def _charged_to_callee(self, name: str, inside: tuple[str, ...]) -> bool:
        """A callee whose own rules forbid ``name`` loses its own points for it, once."""
        return self.forbidden_in is not None and any(self.forbidden_in(callee)(name) for callee in inside)

    def tolerance(self, expected: Any) -> Tolerance:
        for _, t in _leaves(expected):
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                return self.tolerances[str(t.dtype).replace("torch.", "")]
        return self.tolerances["float64"]

    # -- comparing ---------------------------------------------------------------------------
    def expect(
        self,
        actual: Any,
        expected: Any,
        *,
        case: str,
        mistakes: list[Mistake] = (),
        tol: Tolerance | None = None,
        what: str = "output",
    ) -> None:
        tol = tol or self.tolerance(expected)
        problem = structure_problem(actual, expected, what)
        if problem:
            # A known mistake can change the shape too (weights averaged over the heads).
            raise GradeFailure(
                f"{self.function}, case {case}: {problem}",
                rule="shape/dtype/device",
                hint=self._name(actual, mistakes, tol),
                details={"case": case},
            )
        mismatch = value_mismatch(actual, expected, tol, what)
        if mismatch is None:
            return
        hint = self._name(actual, mistakes, tol)
        raise GradeFailure(
            f"{self.function}, case {case}: {mismatch.describe()} (tolerance atol={tol.atol:g}, rtol={tol.rtol:g})",
            hint=hint,
            details={
                "case": case,
                "max_abs_error": mismatch.max_abs,
                "max_rel_error": mismatch.max_rel,
                "worst_index": list(mismatch.index),
                "got": mismatch.got,
                "expected": mismatch.want,
                "out_of_tolerance": f"{mismatch.bad}/{mismatch.total}",
            },
        )

    @staticmethod
    def _name(actual: Any, mistakes, tol: Tolerance) -> str:
        for mistake in mistakes:
            if mistake.output is not None and matches(actual, mistake.output, tol):
                return f"{mistake.name}: {mistake.explain}"
        return ""

    def compare(
        self,
        actual: Any,
        expected: Any,
        *,
        case: str,
        what: str = "output",
        mistakes: Callable[[], list[Mistake]] | list[Mistake] = (),
    ) -> None:
        """``expect`` where ``mistakes`` may be a zero-argument callable, evaluated only when the
        comparison fails: known-wrong variants cost nothing on correct submissions."""
        try:
            self.expect(actual, expected, case=case, what=what)
        except GradeFailure as failure:
            if failure.rule not in ("", "shape/dtype/device") or not mistakes:
                raise
            variants = mistakes() if callable(mistakes) else mistakes
            self.expect(actual, expected, case=case, what=what, mistakes=variants)
            raise

    def check(
        self,
        *args,
        case: str,
        mistakes: Callable[..., list[Mistake]] | list[Mistake] = (),
        expected: Any = None,
        **kwargs,
    ) -> Any:
        """Run student and reference on the same arguments and compare. Returns the student's value.

        ``mistakes`` may be a callable taking the same arguments (evaluated only on failure).
        """
        outcome = self.run(*args, **kwargs)
        want = self.ref(*args, **kwargs) if expected is None else expected
        lazy = (lambda: mistakes(*args, **kwargs)) if callable(mistakes) else mistakes
        self.compare(outcome.value, want, case=case, mistakes=lazy)
        return outcome.value

    def award(self, fraction: float, note: str = "") -> None:
        """Partial credit: this test earns ``fraction`` of its points (0..1)."""
        self.fraction = min(1.0, max(0.0, float(fraction)))
        if note:
            self.notes.append(note)


def _leaves(obj: Any, path: str = ""):
    if isinstance(obj, (list, tuple)):
        for i, x in enumerate(obj):
            yield from _leaves(x, f"{path}[{i}]")
    elif isinstance(obj, dict):
        for k, x in obj.items():
            yield from _leaves(x, f"{path}[{k!r}]")
    else:
        yield path, obj


def describe_case(**params) -> str:
    """``B=2, T=5, float64``: how a case is named in feedback."""
    parts = []
    for key, value in params.items():
        if isinstance(value, torch.dtype):
            parts.append(str(value).replace("torch.", ""))
        elif value is True:
            parts.append(key)
        elif value is False or value is None:
            continue
        else:
            parts.append(f"{key}={value}")
    return ", ".join(parts)
