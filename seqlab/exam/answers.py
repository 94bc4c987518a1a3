"""Reading answers files: what a student handed in, checked before anything is graded.

An answers file is YAML (JSON is YAML too)::

    student: s1234567
    answers:
      opt.adam_steps: "-0.0127, 0.0198"
      attn.var_qk: "d"
      concept.bottleneck: "B"

A file that cannot be read raises ``AnswersError`` naming the file and the problem; the
readability check (``seqlab exam check``) uses the grader's own parsers; the check students run
without seqlab (``check_script``, also the notebook's check cell) is held to the same verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sympy
import yaml

from .check_script import report
from .draws import StudentIdError, check_student_id
from .errors import AnswersError, yaml_problem
from .marking import answer_text, choice_letter, count_problem, truefalse_value
from .model import CHOICE, NUMERIC, SYMBOLIC
from .safeexpr import AnswerRejected, parse, parse_numbers

MAX_FILE_BYTES = 16 * 1024 * 1024


def load_answers(path: str | Path, *, require_student: bool = True) -> tuple[str | None, dict[str, Any]]:
    """``(student, {question_id: answer})`` from an answers file, or ``AnswersError``.

    ``student`` is what the file *claims*; only a batch's roster decides whose file it is.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise AnswersError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES:
        raise AnswersError(f"{path}: file too large ({size} bytes; at most {MAX_FILE_BYTES})")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise AnswersError(f"{path}: not UTF-8 text") from None
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise AnswersError(f"{path}: {yaml_problem(exc, text)}") from None
    return answers_from_data(data, str(path), require_student=require_student)


def answers_from_data(
    data: Any, source: str = "<answers>", *, require_student: bool = True
) -> tuple[str | None, dict[str, Any]]:
    if not isinstance(data, dict):
        raise AnswersError(f"{source}: must be a mapping with 'student' and 'answers' (got {type(data).__name__})")
    student = None
    if "student" not in data:
        if require_student:
            raise AnswersError(f"{source}: missing 'student'")
    else:
        try:
            student = check_student_id(data["student"])
        except StudentIdError as exc:
            if require_student:
                raise AnswersError(f"{source}: {exc}") from None
            student = str(data["student"])[:80]  # kept only to flag the claim
    answers = data.get("answers")
    if answers is None:
        answers = {}
    if not isinstance(answers, dict):
        raise AnswersError(f"{source}: 'answers' must map question ids to answers (got {type(answers).__name__})")
    unknown = set(data) - {"student", "answers"}
    if unknown:
        raise AnswersError(
            f"{source}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; expected only 'student' and 'answers'"
        )
    return student, {str(k): v for k, v in answers.items()}


def load_shapes(path: str | Path) -> tuple[str, list[dict]]:
    """(student, answer shapes) from the ``check-ID.json`` written next to a rendered exam."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        student = check_student_id(data["student"])
        shapes = [dict(q) for q in data["questions"]]
        if not all({"number", "id", "kind"} <= set(q) for q in shapes):
            raise ValueError("a question lacks number, id or kind")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, StudentIdError) as exc:
        raise AnswersError(f"{path}: not a check file written by `seqlab exam render`: {exc}") from None
    return student, shapes


def check_readable(shapes: list[dict], answers: dict[str, Any], *, quiet: bool = False) -> list[str]:
    """The readability check itself: one line per unreadable answer, by question number, and one
    line for every question not answered yet (a list of 40 "no answer" lines buries the two real
    problems)."""
    problems = report(shapes, lambda shape: readability_problem(shape, answers.get(shape["id"])))
    if not quiet:
        print("\n".join(problems) if problems else "all answers readable")
    return problems


def readability_problem(shape: dict, raw: Any) -> str:
    """ "" when grading can read the answer, else why not (the grader's own message)."""
    try:
        kind = shape["kind"]
        text = answer_text(raw, kind)
        if text is None or not text.strip():
            return "no answer"
        if kind == NUMERIC:
            got, expected = len(parse_numbers(text)), shape["entries"]
            if got != expected:
                return count_problem(expected, got)
        elif kind == SYMBOLIC:
            parse(text, {name: sympy.Symbol(name) for name in shape["symbols"]})
        elif kind == CHOICE:
            choice_letter(shape["options"], text)
        else:
            truefalse_value(text)
    except AnswerRejected as exc:
        return str(exc).removeprefix("answer rejected: ")
    except RecursionError:
        return "too deeply nested"
    return ""
