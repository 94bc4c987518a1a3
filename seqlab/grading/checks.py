"""The assertions graders make, with feedback that names the mistake.

Every comparison a grader makes goes through ``grade.check`` (the ``grade`` fixture):

* ``grade.check(*args, case=..., mistakes=..., **kwargs)``: the student's function runs on copies of
  the arguments (through the handle), the reference on the same arguments in the trusted process;
* ``grade.check(value=..., expected=..., case=...)``: a value the grader built itself from
  several student calls (an optimizer's chain of steps) against the reference's;
* ``returns=("loss", "grads")`` names the parts of a returned tuple (its arity is a gate, and
  the feedback says ``grads['W_hh']``); with ``partial=True`` each part (each key of a dict
  part) earns its share of the test;
* ``mistakes``: known wrong variants (a list, or a function of the call's arguments evaluated
  only when the answer is wrong); the first whose output the student's matches is named.

The rules of the contract:

* gates (each fails the test it happens in, saying which rule broke): a structure, shape, dtype
  or device different from the reference's; an argument modified in place; an output that is
  an argument or a view of one;
* voiding: a forbidden operation seen during the call (or in the source) voids the function;
* values: within the tolerance for the dtype; otherwise the failure reports the case, the max
  absolute and relative error, the worst index, and the known mistake the output matches.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..student import Outcome, StudentError
from ..student.guards import split_scope
from ..tolerance import Tolerance
from .axes import shape_note, sizes_named
from .case import Case, Make, case_sizes, describe_case
from .compare import first_change, first_float_dtype, matches, purity_failure, structure_problem, value_mismatch
from .diagnose import CONFINED, diagnose, settings_of, step_factor
from .mistakes import LazyMistakes, Mistake, consistent, first_match, from_table, variant_output, without_inputs
from .parts import At, Names, arity_problem, named_parts, param_names, pick, pick_or_none, render, split_dicts
from .rewrite import name_by_rewrite, named_inputs
from .sensitivity import sensitive_inputs

__all__ = ["Case", "Grade", "GradeFailure", "Make", "Mistake", "NotGradable", "Voided", "describe_case"]
__all__ += ["from_table", "matches", "variant_output"]

SHAPE_RULE = "shape/dtype/device"
# Said of a crash in a matrix product: where to look, not what the mistake is (an input of the
# wrong kind fails there as surely as a weight used the wrong way round).
MATMUL_NOTE = "the operands of a matrix product do not fit: compare each one's shape with the docstring"
_NOT_GIVEN = object()
# Searches for a name (or the inputs an error depends on) per function, and changes one search tries.
SEARCHES, REWRITE_RUNS = 3, 1500


class GradeFailure(AssertionError):
    """A test failed for a reason the student can act on."""

    def __init__(self, message: str, *, hint: str = "", details: dict[str, Any] | None = None, rule: str = "") -> None:
        super().__init__(message)
        self.message, self.hint, self.details, self.rule = message, hint, dict(details or {}), rule

    def append(self, text: str) -> None:
        self.message += text
        self.args = (self.message,)


class Voided(GradeFailure):
    """A rule that voids the whole function (a forbidden operation)."""


class NotGradable(GradeFailure):
    """The student's code gave no value (not implemented, missing, crashed, timed out)."""


# --- the per-test grading helper -------------------------------------------------------------


@dataclass
class Grade:
    """Bound to one test and one contract function; handed to graders as the ``grade`` fixture."""

    function: str
    student: Any
    reference: Callable[[str], Callable[..., Any]]
    tolerances: dict[str, Tolerance]
    forbidden_match: Callable[[str], str | None]
    kernels: bool = False
    # Another contract function's forbidden_match: an operation seen inside the student's own
    # code of a declared callee is that callee's to answer for when its rules forbid it.
    forbidden_in: Callable[[str], Callable[[str], str | None]] | None = None
    fraction: float | None = None
    notes: list[str] = field(default_factory=list)
    # the integer sizes of the cases checked, and their dtype by name (which of them separate
    # passing from failing tests)
    sizes: dict[str, int | str] = field(default_factory=dict)
    calls: int = 0
    timeout: float | None = None  # the call's wall-clock limit; None: the config's call_timeout_s
    # searches made, by "function kind": shared by the tests of one submission (the grade
    # fixture hands in the plugin's), so that SEARCHES holds per function
    rewrite_spent: dict[str, int] = field(default_factory=dict)

    # -- running -----------------------------------------------------------------------------
    def ref(self, *args: Any, **kwargs: Any) -> Any:
        """The reference's answer for the graded function on these arguments."""
        return self.reference(self.function)(*args, **kwargs)

    def run(self, *args: Any, **kwargs: Any) -> Outcome:
        """Run the student's function; applies the gates that do not need the expected value."""
        return self.call(args, kwargs)

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any], **options: Any) -> Outcome:
        """``run`` with the runner's options (``own_callees``, ``backward``: StudentCode.run)."""
        self.calls, run = self.calls + 1, self.student.run
        try:
            outcome: Outcome = run(self.function, args, kwargs, kernels=self.kernels, timeout=self.timeout, **options)
        except StudentError as exc:
            self._void_if_forbidden(exc.ops)
            output = f"\n(printed: {exc.output.strip()[:500]})" if exc.output.strip() else ""
            where = f" ({MATMUL_NOTE})" if "cannot be multiplied" in exc.message else ""
            raise NotGradable(f"{self.function}: {exc.message}{where}{output}", rule=exc.kind) from None
        self._void_if_forbidden(outcome.ops)
        names = param_names(self.function)
        changed = [
            first_change(before, after, names[i] if i < len(names) else f"argument {i}")
            for i, (before, after) in enumerate(zip(args, outcome.args))
        ] + [first_change(before, outcome.kwargs.get(key), key) for key, before in kwargs.items()]
        changed = [where for where in changed if where]
        if changed:
            message, hint = purity_failure(self.function, str(changed[0]))
            raise GradeFailure(message, hint=hint, rule="purity")
        if outcome.aliased:
            raise GradeFailure(
                f"{self.function} returned {outcome.aliased[0]}, which is an argument or a view of "
                f"one; return a new tensor (e.g. .clone())",
                rule="aliasing",
            )
        return outcome

    def unpack(self, value: Any, names: Names) -> tuple[Any, ...]:
        """The arity gate: ``value`` must be a tuple of ``len(names)`` items (nested names: a
        nested tuple there too). Returns it as a tuple."""
        problem = arity_problem(value, names)
        if problem:
            raise GradeFailure(f"{self.function} should return a tuple ({render(names)}){problem}", rule=SHAPE_RULE)
        return tuple(value)

    def _void_if_forbidden(self, ops: dict[str, Any]) -> None:
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
        """The tolerance of the first floating-point tensor in ``expected`` (float64's if none)."""
        dtype = first_float_dtype(expected)
        return self.tolerances[str(dtype).replace("torch.", "") if dtype else "float64"]

    # -- comparing ---------------------------------------------------------------------------
    def check(
        self,
        *args: Any,
        case: Case | str,
        mistakes: Callable[..., list[Mistake]] | Iterable[Mistake] = (),
        value: Any = _NOT_GIVEN,
        expected: Any = _NOT_GIVEN,
        returns: Names | None = None,
        partial: bool = False,
        only: tuple[str, ...] | None = None,
        tol: Tolerance | None = None,
        what: str = "output",
        rewrite: tuple[Callable[[], Any], Any] | None = None,
        before: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Compare the student's answer with the expected one; returns the student's value.

        ``value``: a value the grader computed from student calls (then no call arguments);
        otherwise the student's function runs on ``args``/``kwargs``. ``expected``: the
        reference's answer on the same arguments unless given. ``returns``: the names of a
        returned tuple's items; ``only``: compare just these parts; ``partial``: each part earns
        its share. ``tol``: instead of the tolerance of the expected value's dtype. ``what``:
        the name of an unnamed value in the feedback. ``rewrite``: with ``value``,
        ``(call, whole)``: the reference's computation of a whole that ``expected`` is part of,
        and the student's whole (``call`` runs again with one operation changed, to name a
        mistake by the reference's structure, seqlab.grading.rewrite; the whole, every step of
        a chain, tells apart changes that agree on one step by chance). ``before``: with
        ``value``, what each part starts from (an update's w): a move that is a constant multiple
        of the expected one is named so (seqlab.grading.diagnose.step_factor).
        """
        sizes = case_sizes(case, param_names(self.function), args, kwargs)
        if value is _NOT_GIVEN:
            with sizes_named(sizes):  # a crash on sizes that do not fit says which sizes they are
                value = self.run(*args, **kwargs).value
        elif args or kwargs:
            raise TypeError("grade.check(value=...) compares a value the grader built: no call arguments with it")
        elif expected is _NOT_GIVEN:
            raise TypeError("grade.check(value=...) needs expected=...: there is no call to run the reference on")
        if expected is _NOT_GIVEN:
            expected = self.ref(*args, **kwargs)
        if returns is not None:
            value = self.unpack(value, returns)
        self.sizes.update({k: v for k, v in sizes.items() if isinstance(v, int) and not isinstance(v, bool)})
        if isinstance(sizes.get("dtype"), torch.dtype):
            self.sizes["dtype"] = str(sizes["dtype"]).replace("torch.", "")
        case, tol = str(case), tol or self.tolerance(expected)
        named = LazyMistakes(mistakes, args, kwargs)
        named.sizes, named.before = {**settings_of(self.reference(self.function)), **sizes} if before else sizes, before
        if args or kwargs:
            names = param_names(self.function)
            ref, T = self.reference(self.function), sizes.get("T")
            named.probes = functools.cache(lambda: without_inputs(ref, names, args, kwargs, T))
            call, inputs = functools.partial(self.ref, *args, **kwargs), named_inputs(names, args, kwargs)
            named.rewrite = functools.partial(self._rewrite, (call, inputs, None, sizes))
            named.sensitivity = functools.partial(self._sensitivity, args, kwargs)
        elif rewrite is not None:
            named.rewrite = functools.partial(self._rewrite, (rewrite[0], {}, rewrite[1], sizes))
        parts = named_parts(returns) if returns is not None else [(what, ())]
        parts = [(label, at) for label, at in parts if only is None or label in only]

        for label, at in parts:  # gates first: a wrong structure anywhere fails the whole test
            problem = structure_problem(pick(value, at), pick(expected, at), label)
            if problem:  # a length along one axis that is another of the case's sizes says which
                problem += shape_note(pick(value, at), pick(expected, at), sizes)
                raise self._failure(case, problem, value, expected, at, named, tol, rule=SHAPE_RULE, label=label)
        if partial:  # each gradient of a dict of gradients is a part of its own
            parts = split_dicts(parts, expected)
        failures = []
        for label, at in parts:
            mismatch = value_mismatch(pick(value, at), pick(expected, at), tol, label)
            if mismatch is None:
                continue
            failure = self._failure(
                case,
                f"{mismatch.describe()} (tolerance atol={tol.atol:g}, rtol={tol.rtol:g})",
                value,
                expected,
                at,
                named,
                tol,
                label=label,
                details={
                    "max_abs_error": mismatch.max_abs,
                    "max_rel_error": mismatch.max_rel,
                    "worst_index": list(mismatch.index),
                    "got": mismatch.got,
                    "expected": mismatch.want,
                    "out_of_tolerance": f"{mismatch.bad}/{mismatch.total}",
                },
            )
            if not partial:
                raise failure
            failures.append(failure)
        if failures:
            right = len(parts) - len(failures)
            self.award(right / len(parts))
            failures[0].append(f" ({right} of {len(parts)} parts right: partial credit)")
            raise failures[0]
        return value

    def _failure(
        self,
        case: str,
        problem: str,
        value: Any,
        expected: Any,
        at: At,
        named: LazyMistakes,
        tol: Tolerance,
        *,
        rule: str = "",
        details: dict[str, Any] | None = None,
        label: str = "",
    ) -> GradeFailure:
        """The failure of the part at ``at``, naming the first mistake whose part it matches."""
        fits = [m for m in named() if consistent(value, m.output, expected, tol)]
        mistakes = [Mistake(m.name, pick_or_none(m.output, at), m.explain, m.tol) for m in fits]
        actual = pick(value, at)
        found = first_match(actual, mistakes, tol)
        details = {"case": case, **(details or {})}
        if named.error:
            details["mistakes_error"] = named.error  # for the instructor: a variant of the grader broke
        hint = found.hint if found else ""
        if not found:  # no known variant: name the mistake by its structure, or say where it is
            known = named.probes
            probes = known and (lambda: [(w, pick_or_none(out, at), m) for w, out, m in known()])
            said = diagnose(actual, pick_or_none(expected, at), tol, named.sizes, probes, name=label)
            located = said.startswith(CONFINED) and ", and there" not in said
            if (not said or located) and named.rewrite is not None:
                rewritten = named.rewrite(at, actual, tol)
                hint = f"{label}: {rewritten}" if rewritten and label else rewritten
            if not hint and named.before is not None:
                hint = step_factor(actual, pick_or_none(expected, at), pick_or_none(named.before, at), tol, named.sizes)
            if not hint and named.sensitivity is not None:
                problem += named.sensitivity(at, tol)
            if located:
                problem += f"; {said}"
            elif said:
                hint = said
        details.update(named.evidence(fits, mistakes, actual, tol, at))  # for the other tests' names (across.py)
        return GradeFailure(f"{self.function}, case {case}: {problem}", rule=rule, hint=hint, details=details)

    def _timed(self, search: Callable[[], str], kind: str = "rewrite") -> str:
        """``search()`` within this function's share of searches of its kind (SEARCHES): a count,
        not a time, so that the feedback does not depend on the machine's load."""
        done = self.rewrite_spent.get(f"{self.function} {kind}", 0)
        self.rewrite_spent[f"{self.function} {kind}"] = done + 1
        return search() if done < SEARCHES else ""

    def _rewrite(self, how: tuple[Callable[[], Any], Any, Any, Any], at: At, actual: Any, tol: Tolerance) -> str:
        """seqlab.grading.rewrite's name of ``actual`` against the part at ``at`` (``whole``
        given: the whole against all); ``how``: (call, inputs, whole, the case's sizes)."""
        call, inputs, whole, sizes = how
        ref = self.reference(self.function)
        pick_at = (lambda out: out) if whole is not None else functools.partial(pick_or_none, at=at)
        target = actual if whole is None else whole
        return self._timed(lambda: name_by_rewrite(call, ref, inputs, pick_at, target, tol, REWRITE_RUNS, sizes))

    def _sensitivity(self, args: tuple[Any, ...], kwargs: dict[str, Any], at: At, tol: Tolerance) -> str:
        def student(*a: Any, **k: Any) -> Any:
            return self.student.run(self.function, a, k, kernels=self.kernels, timeout=self.timeout).value

        names, ref, pick_at = param_names(self.function), self.ref, functools.partial(pick_or_none, at=at)
        return self._timed(lambda: sensitive_inputs(student, ref, names, args, kwargs, pick_at, tol), "inputs")

    def award(self, fraction: float, note: str = "") -> None:
        """Partial credit: this test earns ``fraction`` of its points (0..1)."""
        self.fraction = min(1.0, max(0.0, float(fraction)))
        if note:
            self.notes.append(note)
