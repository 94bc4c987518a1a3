"""Records of test outcomes -> points, under the rules of grading_config.yaml.

* A function's points are shared by its tests in proportion to their weights (the grader's
  ``@grades(weight=...)``, unless ``test_weights`` in the config matches the test's title); the complexity
  test (``complexity=True``) takes ``complexity_points`` and the value tests share the rest.
* A test earns its share when it passes, or ``fraction`` of it when the grader awarded partial
  credit. Rules are gates, not gifts: a shape or purity failure fails the test it happens in.
* A forbidden operation voids the function: every test of it scores 0, with the reason.
* Points are whole ten-thousandths (``UNIT``, the precision every report prints), computed
  exactly (``Fraction``) and shared out by largest remainder, so a function's tests add up to
  its configured points exactly: 6 points over 7 tests is six tests of 0.8571 and one of
  0.8574, never seven of 0.8571 that a reader adds up to 5.9997.
"""

from __future__ import annotations

from fractions import Fraction

from .. import contract
from ..config import GradingConfig
from ..results import TestResult
from .plugin import TestRecord

UNIT = Fraction(1, 10_000)


def units_of(points: float) -> int:
    """``points`` (a config number, written in decimal) as a whole number of UNITs."""
    return round(Fraction(str(points)) / UNIT)


def share_out(total: int, weights: list[float]) -> list[int]:
    """``total`` units over ``weights`` in proportion, as whole units that sum to ``total``: each
    gets the floor of its exact share, and the units left go to the largest remainders (the
    first of equal ones), so the same tests always get the same points."""
    exact = [Fraction(str(w)) for w in weights]
    whole = sum(exact) or Fraction(1)
    shares = [total * w / whole for w in exact]
    units = [int(share) for share in shares]  # floor: shares are never negative
    left = total - sum(units) if any(exact) else 0
    for i in sorted(range(len(shares)), key=lambda i: (-(shares[i] - units[i]), i))[:left]:
        units[i] += 1
    return units


def points(units: int) -> float:
    """Units as the float every report stores: the nearest double to an exact decimal."""
    return units / UNIT.denominator


def score_records(
    records: list[TestRecord], config: GradingConfig, static_voids: dict[str, str] | None = None
) -> list[TestResult]:
    static_voids = static_voids or {}
    by_function: dict[str, list[TestRecord]] = {}
    for record in records:
        if record.rule == "skipped":
            continue
        by_function.setdefault(record.function, []).append(record)

    results: list[TestResult] = []
    order = {name: i for i, name in enumerate(contract.FUNCTIONS)}  # reports follow the course
    for function, group in sorted(by_function.items(), key=lambda item: order.get(item[0], len(order))):
        rules = config.rules(function)
        complexity = [r for r in group if r.complexity]
        values = [r for r in group if not r.complexity]
        complexity_units = units_of(rules.complexity_points) if complexity else 0
        pools = [(values, units_of(rules.points) - complexity_units), (complexity, complexity_units)]
        voided = static_voids.get(function) or next((r.message for r in group if r.rule == "forbidden"), "")
        for members, pool in pools:
            weights = [rules.weight_of(r.title, r.weight) for r in members]
            for r, max_units in zip(members, share_out(pool, weights), strict=True):
                fraction = Fraction(r.fraction) if r.fraction is not None else Fraction(int(r.passed))
                earned = round(max_units * fraction)
                output = r.message if not r.passed or r.fraction is not None else ""
                if voided:
                    earned = 0
                    output = f"VOID: {voided}" + (f"\n{output}" if output and output != voided else "")
                results.append(
                    TestResult(
                        name=f"{function}: {r.title}",
                        score=points(earned),
                        max_score=points(max_units),
                        output=output,
                        hint=r.hint,
                        details=r.details,
                        visibility=rules.visibility_of(r.title, r.visibility),
                        voided_by=voided,
                    )
                )
    return results
