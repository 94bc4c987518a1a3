"""What to fix first: the failing functions that other functions of the student's run.

A function depends on another when its reference calls it (``contract.DECLARED_CALLEES``) or,
for a lab, when the lab trains with it (``Lab.uses`` and ``Lab.through`` in
``seqlab.labs.LABS``). The grader answers a caller's calls to a declared callee with the
reference's results (``seqlab.student.callees``), so a broken callee costs its callers nothing
in their own tests, but it costs every lab that trains with it and every notebook cell that runs
it: fixing it first is what makes the rest of the student's code work together.

The order is the dependencies': a failing function comes after the failing functions it depends
on (fix those first, its failures may be theirs), then the one more functions depend on
(transitively), then the course's order. Each line says who depends on it and which of them
lost points too. Reads a GradingResult and the contract only (no torch), like every report.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .. import contract
from ..results import GradingResult

# At most this many lines (six rather than five and "1 more"). The section sits above the score
# table, so it must be read before it: the all-stub report's section, the longest lines there are,
# measured 650 px at 375 px wide (a phone's screen is 667) and 340 px at 1280 (report-stubs in
# tests/reports/test_browser.py). And as the deepest dependencies come first, the first five are
# the ones the others wait on: an all-stub submission fails 22 functions that others run, and
# listing them all would say nothing a student can start from. The rest are counted in a last line.
SHOWN = 5


@dataclass(frozen=True)
class FixFirst:
    function: str
    score: float
    max_score: float
    why: str  # one line: who depends on it, and which of them lost points too


@dataclass(frozen=True)
class FixFirstView:
    entries: list[FixFirst]
    more: int  # failing functions that others depend on, beyond SHOWN

    def __bool__(self) -> bool:
        return bool(self.entries)


@cache
def dependencies() -> dict[str, tuple[str, ...]]:
    """``function -> the contract functions it runs``: its declared callees, a lab's used ones."""
    from ..labs import LABS

    found = {f: tuple(callees) for f, callees in contract.DECLARED_CALLEES.items()}
    for function, lab in LABS.items():
        found[function] = tuple(dict.fromkeys(found.get(function, ()) + lab.uses + lab.through))
    return found


def _dependents() -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for function, used in dependencies().items():
        for name in used:
            table.setdefault(name, []).append(function)
    return table


def _transitive(function: str, dependents: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    stack = list(dependents.get(function, ()))
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(dependents.get(name, ()))
    return seen


def _names(names: list[str]) -> str:
    """Names without their module (the contract's function names are unique across modules)."""
    short = [name.split(".", 1)[-1] for name in names]
    return short[0] if len(short) == 1 else ", ".join(short[:-1]) + " and " + short[-1]


def _why(callers: list[str], labs: list[str], failing: set[str], every_lab: int) -> str:
    parts = []
    if callers:
        parts.append(f"{_names(callers)} {'calls' if len(callers) == 1 else 'call'} it")
    if len(labs) == every_lab > 1:
        parts.append("every lab trains with it")
    elif labs:
        parts.append(f"the {_names(labs)} {'lab trains' if len(labs) == 1 else 'labs train'} with it")
    lost = [name for name in callers + labs if name in failing]
    why = "; ".join(parts)
    if lost:
        everyone = len(lost) == len(callers) + len(labs)
        why += f" ({'all' if everyone and len(lost) > 1 else _names(lost)} lost points too)"
    elif callers and not labs:
        why += " (their tests here get the reference's results for it; your own runs of them get yours)"
    return why


def fix_first(result: GradingResult) -> FixFirstView:
    """The failing functions of ``result`` that others depend on, in the order to fix them."""
    from ..labs import LABS

    failing = {t.function for t in result.tests if t.status == "failed"}
    points = result.by_function()
    dependents = _dependents()
    candidates = [f for f in points if f in failing and dependents.get(f)]
    order = {name: i for i, name in enumerate(contract.FUNCTIONS)}
    level: dict[str, int] = {}

    def depth(function: str, path: tuple[str, ...] = ()) -> int:
        if function not in level:
            below = [c for c in dependencies().get(function, ()) if c in failing and c not in path]
            level[function] = 1 + max((depth(c, path + (function,)) for c in below), default=-1)
        return level[function]

    ranked = sorted(
        candidates,
        key=lambda f: (depth(f), -len(_transitive(f, dependents)), order.get(f, len(order)), f),
    )
    # a "1 more" line would take the room of the line it stands for
    shown = ranked if len(ranked) <= SHOWN + 1 else ranked[:SHOWN]
    entries = []
    for function in shown:
        users = sorted(dependents[function], key=lambda u: order.get(u, len(order)))
        callers = [u for u in users if u not in LABS]
        labs = [u for u in users if u in LABS]
        score, max_score = points[function]
        entries.append(FixFirst(function, score, max_score, _why(callers, labs, failing, len(LABS))))
    return FixFirstView(entries, len(ranked) - len(shown))
