"""Marking one answer: points, verdict and feedback for one question of one paper, per kind.

Every answer goes through ``safeexpr`` before anything evaluates it; a rejected answer scores
zero with the reason as feedback. The shape rules here (how many numbers, which letters, which
symbols) are also what ``seqlab exam check`` applies, so a student's check and the grade agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .check_script import UNIT_SPELLINGS, read_as_teacher
from .draws import format_number
from .model import CHOICE, NUMERIC, SYMBOLIC, Variant, given_numbers
from .safeexpr import MAX_LENGTH, AnswerRejected, equivalent, parse, parse_numbers
from .variants import ExamInstance


@dataclass
class Mark:
    score: float
    output: str
    verdict: str
    details: dict[str, Any] = field(default_factory=dict)


def answer_text(raw: Any, kind: str) -> str | None:
    """A YAML value as answer text (numbers and booleans as typed; lists for numeric answers)."""
    if raw is None:
        return None
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, (int, float)):
        return repr(raw)
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list) and kind == NUMERIC:
        if len(raw) > 64 or not all(isinstance(x, (int, float, str)) and not isinstance(x, bool) for x in raw):
            raise AnswerRejected("answer rejected: a list must hold at most 64 numbers")
        if any(isinstance(x, str) and len(x) > MAX_LENGTH for x in raw):
            raise AnswerRejected(f"answer rejected: longer than {MAX_LENGTH} characters")
        text = ", ".join(x if isinstance(x, str) else repr(x) for x in raw)
        if len(text) > MAX_LENGTH:
            raise AnswerRejected(f"answer rejected: longer than {MAX_LENGTH} characters")
        return text
    raise AnswerRejected(f"answer rejected: expected text, got {type(raw).__name__}")


def asks_integer(v: Variant) -> bool:
    """A single number graded as an exact value (a count): a comma in it can only group thousands."""
    tol = v.tolerance
    if v.question.kind != NUMERIC or tol is None or tol.rtol != 0 or tol.atol != 0:
        return False
    return len(expected_entries(v)) == 1


def grade_variant(v: Variant, raw: Any, *, seed: int = 0) -> Mark:
    """Points and feedback for one answer; never raises for anything a student can type."""
    try:
        text = answer_text(raw, v.question.kind)
        if text is None or not text.strip():
            return Mark(0.0, "no answer", "missing")
        kind = v.question.kind
        entries = len(expected_entries(v)) if kind == NUMERIC else 1
        text = read_as_teacher(text, kind, entries, asked_unit(v), AnswerRejected, "answer rejected: ", asks_integer(v))
        if kind == NUMERIC:
            return _numeric(v, text)
        if kind == SYMBOLIC:
            return _symbolic(v, text, seed)
        if kind == CHOICE:
            return _choice(v, text)
        return _truefalse(v, text)
    except AnswerRejected as exc:
        return Mark(0.0, str(exc), "rejected")
    except RecursionError:
        return Mark(0.0, "answer rejected: too deeply nested", "rejected")
    except Exception as exc:
        return Mark(
            0.0,
            f"could not grade this answer (internal error {type(exc).__name__}); please ask the instructor to regrade",
            "error",
        )


# The unit a numeric question asks for, which an answer may carry ("4560 MiB"): the one its hint
# names ("one number, in MiB (2^20 bytes)"), or the one it declares (``declare.unit``: nats for a
# loss taken with the natural log, whose hint names no unit, and "1.4208 nats" is the key as a
# teacher reads it). Any other unit is refused with a message (``check_script.read_as_teacher``),
# never converted or scored 0 silently.
_HINT_UNIT = re.compile(r"\bin (" + "|".join(UNIT_SPELLINGS) + r")\b")


def asked_unit(v: Variant) -> str:
    if v.question.kind != NUMERIC:
        return ""
    if v.question.unit:
        return v.question.unit
    found = _HINT_UNIT.search(v.question.answer_hint)
    return found.group(1) if found else ""


def expected_entries(v: Variant) -> list[float]:
    return [float(x) for x in v.answer] if isinstance(v.answer, list) else [float(v.answer)]


def count_problem(expected: int, got: int) -> str:
    """The wrong-shape message, the same in grading and in ``seqlab exam check``."""
    return f"expected {expected} number{'s' if expected > 1 else ''}, got {got}"


def _numeric(v: Variant, text: str) -> Mark:
    got = parse_numbers(text)
    expected = expected_entries(v)
    tol = v.tolerance
    assert tol is not None  # numeric questions state their tolerance (model.register refuses one without)
    key = ", ".join(format_number(x) for x in expected)
    if len(got) != len(expected):
        return Mark(0.0, f"{count_problem(len(expected), len(got))}; key: {key}", "wrong-count")
    ok = [tol.accepts(a, e) for a, e in zip(got, expected)]
    if all(ok):
        return Mark(v.points, "correct", "correct")
    credit, notes, details = 0.0, [], {}
    if v.partial.get("per_element") and len(expected) > 1:
        earning = earning_entries(v)
        # each entry is worth 1/n of the points; a copyable entry's share is never paid out, so
        # only a fully right answer reaches full marks
        credit = v.points * sum(o and e for o, e in zip(ok, earning)) / len(ok)
        notes.append(f"{sum(ok)} of {len(ok)} entries correct")
        copied = [str(i + 1) for i, e in enumerate(earning) if not e]
        if copied:
            notes.append(
                f"entr{'y' if len(copied) == 1 else 'ies'} {', '.join(copied)} can be copied from the "
                "question and earn no partial credit"
            )
    if v.mistakes:
        for name, mistake in v.mistakes.items():
            values = mistake.value if isinstance(mistake.value, list) else [mistake.value]
            if len(values) == len(got) and all(tol.accepts(a, float(e)) for a, e in zip(got, values)):
                notes.append(known_mistake(name, mistake.feedback))
                credit = max(credit, v.points * v.partial.get("mistakes", {}).get(name, 0.0))
                details["mistake"] = name  # item analysis counts named mistakes
                break
    wrong = [str(i + 1) for i, good in enumerate(ok) if not good]
    where = f"entr{'y' if len(wrong) == 1 else 'ies'} {', '.join(wrong)} " if len(expected) > 1 else ""
    msg = f"incorrect: {where}not {tol.describe()} of the key ({key})"
    return Mark(credit, "; ".join([msg] + notes), "partial" if credit else "incorrect", details)


def known_mistake(name: str, feedback: str) -> str:
    """The note for an answer a named mistake gives: which mistake, then its fix. (The seventh
    audit read "looks like: the scores must be divided by sqrt(d)" as describing the answer.)"""
    return f"matches a known mistake ({name.replace('_', ' ')}); the fix: {feedback}"


def earning_entries(v: Variant) -> list[bool]:
    """The partial-credit rule for vector answers: an entry earns its share only when it takes the
    idea. An entry is copyable, and earns nothing, when writing 0 or a number printed in the
    question would be accepted for it (B and T of a shape, the masked zeros of a causal row)."""
    given = [0.0] + given_numbers(v.params)
    tol = v.tolerance
    assert tol is not None  # numeric questions state their tolerance (model.register refuses one without)
    return [not any(tol.accepts(x, e) for x in given) for e in expected_entries(v)]


def _symbolic(v: Variant, text: str, seed: int) -> Mark:
    syms = v.question.syms(v.params)
    table = {s.name: s.sympy() for s in syms}
    answer = parse(text, table)
    expected = v.answer
    if answer == expected:
        return Mark(v.points, "correct", "correct", {"how": "identical"})
    spec = {s.name: s for s in syms}
    verdict = equivalent(expected, answer, spec, seed=seed)
    if verdict.equivalent:
        return Mark(v.points, "correct (equivalent form)", "correct", {"how": verdict.how})
    credit, notes, details = 0.0, [], {}
    if v.mistakes:
        for name, mistake in v.mistakes.items():
            if answer == mistake.value or equivalent(mistake.value, answer, spec, seed=seed).equivalent:
                notes.append(known_mistake(name, mistake.feedback))
                credit = v.points * v.partial.get("mistakes", {}).get(name, 0.0)
                details["mistake"] = name
                break
    msg = "incorrect: not equivalent to the key" + (" (could not be evaluated)" if verdict.how == "undefined" else "")
    return Mark(
        credit,
        "; ".join([msg + f" ({v.key})"] + notes),
        "partial" if credit else "incorrect",
        {"how": verdict.how, **details},
    )


def choice_letter(options: int, text: str) -> str:
    letters = [chr(ord("A") + i) for i in range(options)]
    cleaned = text.strip().strip("()[]. ").upper()
    if cleaned not in letters:
        raise AnswerRejected(f"answer rejected: give one letter, {letters[0]}-{letters[-1]}")
    return cleaned


def _choice(v: Variant, text: str) -> Mark:
    cleaned = choice_letter(len(v.params["options"]), text)
    if cleaned == v.answer:
        return Mark(v.points, "correct", "correct")
    why = v.params.get("why", {}).get(cleaned, "")
    chosen = v.params["options"][ord(cleaned) - ord("A")]
    return Mark(
        0.0,
        f"incorrect: the answer is {v.answer}" + (f"; {cleaned}: {why}" if why else ""),
        "incorrect",
        {"mistake": f"chose: {chosen}"[:120]},
    )


_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0"}


def truefalse_value(text: str) -> str:
    cleaned = text.strip().strip(".").lower()
    if cleaned not in _TRUE | _FALSE:
        raise AnswerRejected("answer rejected: give true or false")
    return "true" if cleaned in _TRUE else "false"


def _truefalse(v: Variant, text: str) -> Mark:
    given = truefalse_value(text)
    if given == v.answer:
        return Mark(v.points, "correct", "correct")
    why = v.params.get("why", "")
    return Mark(0.0, f"incorrect: the statement is {v.answer}" + (f"; {why}" if why else ""), "incorrect")


def answer_shapes(inst: ExamInstance) -> list[dict]:
    """What an answer must look like, per question: kind, number of entries, symbol names, options.
    Nothing about the key: the notebook embeds this so a student can run the check."""
    shapes = []
    for v in inst.variants:
        shape = {"number": v.number, "id": v.answer_id, "kind": v.question.kind}
        if v.question.kind == NUMERIC:
            shape["entries"] = len(expected_entries(v))
            if asked_unit(v):
                shape["unit"] = asked_unit(v)
            if asks_integer(v):
                shape["integer"] = True
        elif v.question.kind == SYMBOLIC:
            shape["symbols"] = [s.name for s in v.question.syms(v.params)]
        elif v.question.kind == CHOICE:
            shape["options"] = len(v.params["options"])
        shapes.append(shape)
    return shapes
