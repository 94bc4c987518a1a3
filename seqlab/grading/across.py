"""What the tests of one function say together: the sizes that separate its passing tests from
its failing ones ("right for B=1 only"), said once, in the output of its first failed test; and
a known mistake one test names that another test rules out, taken back."""

from __future__ import annotations

from typing import Any

from ..results import TestResult


def shape_note(cases: list[tuple[dict[str, Any], bool]]) -> str:
    """Across one function's tests, ``(sizes, passed)`` each: the sizes for which the tests with
    that size 1 pass and every test with a larger one fails ("right for B=1 only"), and a dtype
    whose tests all pass while the other's fail, or ""."""
    sized = [
        ({k: v for k, v in s.items() if isinstance(v, (int, str)) and not isinstance(v, bool)}, p) for s, p in cases
    ]
    sized = [(s, p) for s, p in sized if s]
    if not any(p for _, p in sized) or all(p for _, p in sized):
        return ""
    found = {}
    for k in sorted(set.intersection(*(set(s) for s, _ in sized))):
        good = sorted({s[k] for s, p in sized if p})
        bad = sorted({s[k] for s, p in sized if not p})
        # Only a size of 1 against larger ones: with a handful of tests, other sizes separate
        # passing from failing tests by chance (B=2 passing, B=3 failing says nothing).
        if good == [1] and 1 not in bad:
            found[k] = f"the tests with {k}=1 pass and every test with {k}={', '.join(map(str, bad))} fails"
        elif k == "dtype" and len(good) == len(bad) == 1 and good != bad:  # float64 right, float32 not
            found[k] = f"the {good[0]} tests pass and the {bad[0]} ones fail"
    if not found:
        return ""
    advice = f": look at what depends on {next(iter(found))}" if len(found) == 1 else ""
    return "Across the tests of this function, " + "; ".join(list(found.values())[:3]) + advice + "."


def note_shapes(tests: list[TestResult]) -> None:
    """Add each function's :func:`shape_note` to the output of its first failed test."""
    by_function: dict[str, list[TestResult]] = {}
    for t in tests:
        by_function.setdefault(t.function, []).append(t)
    for group in by_function.values():
        note = shape_note([(t.details.get("sizes") or {}, t.status == "passed") for t in group])
        failed = [t for t in group if t.status != "passed" and not t.voided_by]
        if note and failed:
            failed[0].output = f"{failed[0].output}\n{note}" if failed[0].output else note


def drop_ruled_out(tests: list[TestResult]) -> None:
    """A hint that names a table row (``name: explanation``) or a probe (the reference with one
    input changed) that another failed test of the same function ruled out (computed there, and
    not what the student's output is: seqlab.grading.mistakes.LazyMistakes.evidence) is taken
    back: it matched by a coincidence of one case's sizes, and a name is said only where it is
    a fact about the output, so in every case that tried it."""
    rows: dict[str, set[str]] = {}
    probes: dict[str, set[str]] = {}
    for t in tests:
        rows.setdefault(t.function, set()).update(t.details.pop("rows_ruled_out", None) or ())
        probes.setdefault(t.function, set()).update(t.details.pop("probes_ruled_out", None) or ())
    for t in tests:
        row = any(t.hint.startswith(f"{name}: ") for name in rows.get(t.function, ()))
        # seqlab.grading.diagnose says a probe as "... computed with {what}: {meaning}"
        probe = any(f"computed with {what}: " in t.hint for what in probes.get(t.function, ()))
        if t.hint and (row or probe):
            t.hint = ""
