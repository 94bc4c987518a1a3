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

from ..studentfiles import read_bytes, shown
from .check_script import read_as_teacher, report
from .draws import StudentIdError, check_student_id
from .errors import AnswersError, yaml_problem
from .marking import answer_text, choice_letter, count_problem, truefalse_value
from .model import CHOICE, NUMERIC, SYMBOLIC
from .safeexpr import AnswerRejected, parse, parse_numbers

# An answers file of a 40-question exam is some kilobytes; this leaves room for any honest one
# and bounds what one file may cost the class's run (it is read whole and parsed).
MAX_FILE_BYTES = 1024 * 1024
# YAML's structure bounds, checked on the parser's events before anything is built:
# * no anchors or aliases: an answers file needs none, and a 621-byte file of nested aliases (a
#   "billion laughs") builds a structure whose every use (printing a claimed id, reading an answer)
#   expands it exponentially -- it exhausted memory in `exam grade-all`;
# * nesting at most MAX_YAML_DEPTH (the file nests 2 deep, a list answer 3): deeper nesting makes
#   every recursive reader of it raise RecursionError;
# * at most MAX_YAML_NODES values (an exam asks some tens of questions).
MAX_YAML_DEPTH = 16
MAX_YAML_NODES = 20_000


def _line(event) -> str:
    mark = getattr(event, "start_mark", None)
    return f"line {mark.line + 1}: " if mark is not None else ""


def _check_yaml_events(text: str, loader) -> None:
    """Raise ``ValueError`` naming the first event that breaks the bounds above."""
    depth = nodes = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise ValueError(
                f"{_line(event)}YAML anchors and aliases (&name, *name) are not allowed in an answers file"
            )
        if isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            nodes += 1
            if nodes > MAX_YAML_NODES:
                raise ValueError(f"more than {MAX_YAML_NODES} values")
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise ValueError(f"{_line(event)}nested more than {MAX_YAML_DEPTH} deep")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def load_answers(path: str | Path, *, require_student: bool = True) -> tuple[str | None, dict[str, Any]]:
    """``(student, {question_id: answer})`` from an answers file, or ``AnswersError``.

    ``student`` is what the file *claims*; only a batch's roster decides whose file it is. The
    file is read through ``seqlab.studentfiles`` (never through a symbolic link: a link to the key
    would score it; at most MAX_FILE_BYTES) and its YAML within the bounds above.
    """
    path = Path(path)
    where = shown(str(path))
    raw = read_bytes(path, MAX_FILE_BYTES, AnswersError)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise AnswersError(f"{where}: not UTF-8 text") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_yaml_events(text, loader)
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise AnswersError(f"{where}: {yaml_problem(exc, text)}") from None
    except ValueError as exc:  # the bounds above; and a scalar PyYAML cannot build (a date out of range)
        raise AnswersError(f"{where}: not accepted as an answers file: {exc}") from None
    except RecursionError:
        raise AnswersError(f"{where}: nested too deep to read") from None
    return answers_from_data(data, where, require_student=require_student)


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
            f"{source}: unknown key(s) {', '.join(sorted(shown(str(k))[:40] for k in unknown))}; "
            f"expected only 'student' and 'answers'"
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
        entries = shape.get("entries", 1)
        text = read_as_teacher(
            text, kind, entries, shape.get("unit", ""), AnswerRejected, "answer rejected: ", shape.get("integer", False)
        )
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
