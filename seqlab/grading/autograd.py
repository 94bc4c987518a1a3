"""The hidden test of the autograd property (seqlab.student.gradcheck), graded like its public twin.

A function a lab trains through must support autograd; its public test
(``test_<function>_supports_autograd``) and this hidden one check it with the same rule and give
the same words. The hidden test, on the grader's own inputs:

1. checks the value first, as every test of the function does (its declared callees answer with
   the reference's results, so a wrong callee is charged to the callee): a function that is not
   right earns nothing here, and a stub cannot earn the autograd share by returning zeros;
2. calls the function again with its *own* callees (the graph must run through them; a
   stand-in's recorded answer has none), its floating-point inputs requiring grad, and the
   child backpropagates a random weighting of the outputs (``backward``);
3. compares that gradient along random directions with central differences of the student's own
   values, read in this process from two more calls per direction.

A failure whose cause is a declared callee that fails the same property on the arguments the
reference passes it is charged to the callee (which loses its own autograd test), not here: a
bug is charged once.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from .. import contract
from ..student import gradcheck
from ..student.callees import bind_arguments
from .checks import Grade, GradeFailure, Voided
from .parts import Names

RULE = "autograd"
TITLE = "supports autograd: its gradient matches finite differences of its own values (a lab trains through it)"
# The hidden side's weighting and directions: drawn apart from the public test's (seed 0), so
# the grader's check is not the one the student already ran.
SEED = 7919


def floating_parameters(arguments: dict[str, Any]) -> tuple[str, ...]:
    """The parameters whose values hold a floating-point tensor: the inputs autograd must reach."""
    return tuple(name for name, value in arguments.items() if any(True for _ in gradcheck.leaves(value)))


def autograd_problem(grade: Grade, qualname: str, arguments: dict[str, Any], case: str) -> str:
    """Why ``qualname`` does not support autograd on ``arguments`` (its verdict), or ``""``.

    Runs as ``qualname``'s own test (``grade`` may stand for another function: the callee
    whose share a caller's failure is weighed against)."""
    wrt = floating_parameters(arguments)
    base = {key: t.detach() for key, t in gradcheck.inputs_of(arguments, wrt).items()}
    probe = grade
    if qualname != grade.function:  # a callee, under its own rules
        rules = grade.forbidden_in(qualname) if grade.forbidden_in else grade.forbidden_match
        probe = dataclasses.replace(grade, function=qualname, forbidden_match=rules, notes=[], sizes={})
    outcome = probe.call((), arguments, own_callees=True, backward={"wrt": list(wrt), "seed": SEED})
    if outcome.backward_error:
        return gradcheck.raised(qualname, case, outcome.backward_error)
    grads: dict[str, torch.Tensor] = {key: outcome.grads[key] for key in base if key in outcome.grads}
    if set(grads) != set(base) or any(g.shape != base[key].shape for key, g in grads.items()):
        return gradcheck.raised(qualname, case, "the gradients came back in the wrong shape")
    for d, direction in enumerate(gradcheck.directions(base, SEED + 1)):
        analytic = gradcheck.along(grads, direction)
        sides = []
        for sign in (1, -1):
            moved = {key: t + sign * gradcheck.STEP * direction[key] for key, t in base.items()}
            value = probe.call((), gradcheck.shifted(arguments, wrt, moved), own_callees=True).value
            sides.append(gradcheck.weighted(value, SEED))
        numeric = (sides[0] - sides[1]) / (2 * gradcheck.STEP)
        if not gradcheck.agrees(analytic, numeric):
            return gradcheck.disagrees(qualname, case, d, analytic, numeric)
    return ""


def failing_callee(grade: Grade, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """A declared callee of the graded function that itself fails the property on the first
    arguments the reference passes it here, or ``""``."""
    callees = [c for c in contract.declared_callees(grade.function) if c in gradcheck.LABS]
    callee: str
    seen: set[str] = set()
    for entry in grade.student.recording(grade.function, args, kwargs):
        callee = str(entry["callee"])
        if callee in callees and callee not in seen:
            seen.add(callee)
            try:
                problem = autograd_problem(grade, callee, dict(entry["arguments"]), f"its call from {grade.function}")
            except GradeFailure as failure:  # it does not even run there (voided, crashed): its own tests say so
                problem = str(failure)
            if problem:
                return callee
    return ""


def check_autograd(grade: Grade, *args: Any, case: Any, returns: Names | None = None, **kwargs: Any) -> None:
    """The hidden autograd test of ``grade.function`` on ``args``/``kwargs`` (see the module)."""
    grade.check(*args, case=case, returns=returns, **kwargs)
    arguments = bind_arguments(grade.function, args, kwargs)
    if arguments is None:
        raise GradeFailure(f"{grade.function}: the grader's arguments do not fit its signature")
    crashed: GradeFailure | None = None
    try:
        problem = autograd_problem(grade, grade.function, arguments, str(case))
    except Voided:
        raise
    except GradeFailure as failure:  # it failed to run with its own callees: maybe theirs to answer for
        problem, crashed = str(failure), failure
    if not problem:
        return
    callee = failing_callee(grade, args, kwargs)
    if callee:
        grade.award(1.0, f"not charged here: your {callee}, which it calls, fails the same property (charged there)")
        return
    raise crashed or GradeFailure(problem, rule=RULE)
