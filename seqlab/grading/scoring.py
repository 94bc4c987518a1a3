"""Records of test outcomes -> points, under the rules of grading_config.yaml.

* A function's points are shared by its tests in proportion to their weights (the grader's
  ``@grades(weight=...)``, unless ``test_weights`` in the config matches the test's title); the complexity
  test (``complexity=True``) takes ``complexity_points`` and the value tests share the rest.
* A test earns its share when it passes, or ``fraction`` of it when the grader awarded partial
  credit. Rules are gates, not gifts: a shape or purity failure fails the test it happens in.
* A forbidden operation voids the function: every test of it scores 0, with the reason.
"""

from __future__ import annotations

from .. import contract
from ..config import GradingConfig
from ..results import TestResult
from .plugin import TestRecord


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
        pools = [
            (values, rules.points - (rules.complexity_points if complexity else 0)),
            (complexity, rules.complexity_points),
        ]
        voided = static_voids.get(function) or next((r.message for r in group if r.rule == "forbidden"), "")
        for members, points in pools:
            weights = {r.nodeid: rules.weight_of(r.title, r.weight) for r in members}
            total_weight = sum(weights.values()) or 1.0
            for r in members:
                max_score = points * weights[r.nodeid] / total_weight
                earned = max_score * (r.fraction if r.fraction is not None else (1.0 if r.passed else 0.0))
                output = r.message if not r.passed or r.fraction is not None else ""
                if voided:
                    earned = 0.0
                    output = f"VOID: {voided}" + (f"\n{output}" if output and output != voided else "")
                results.append(
                    TestResult(
                        name=f"{function}: {r.title}",
                        score=round(earned, 6),
                        max_score=round(max_score, 6),
                        output=output,
                        hint=r.hint,
                        details=r.details,
                        visibility=rules.visibility_of(r.title, r.visibility),
                        voided_by=voided,
                    )
                )
    return results
