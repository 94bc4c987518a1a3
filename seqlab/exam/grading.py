"""Grading exam answers: per-question points, partial credit, feedback, reports.

An answers file is YAML (JSON is YAML too)::

    student: s1234567
    answers:
      opt.adam_steps: "-0.0127, 0.0198"
      attn.var_qk: "d"
      concept.bottleneck: "B"

Every answer goes through ``safeexpr`` before anything evaluates it; a rejected answer scores
zero with the reason as feedback. One ``TestResult`` per question (named
``exam.<question id>: <title>``) in the shared result model, so the Gradescope writer and the
gradebook work as for code grading.
"""
from __future__ import annotations

import csv
import hashlib
import io
import reprlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..results import GradingResult, TestResult
from .examfile import Exam
from .model import CHOICE, NUMERIC, SYMBOLIC, Variant
from .safeexpr import AnswerRejected, MAX_LENGTH, equivalent, parse, parse_numbers
from .variants import ExamInstance, StudentIdError, check_student_id, format_number, make_instance

MAX_FILE_BYTES = 16 * 1024 * 1024


class AnswersError(ValueError):
    """An answers file that cannot be graded; the message names the file and the problem."""


@dataclass
class Mark:
    score: float
    output: str
    verdict: str
    details: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- answers files

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
        data = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise AnswersError(f"{path}: not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    return answers_from_data(data, str(path), require_student=require_student)


def answers_from_data(data: Any, source: str = "<answers>", *,
                      require_student: bool = True) -> tuple[str | None, dict[str, Any]]:
    if not isinstance(data, dict):
        raise AnswersError(f"{source}: must be a mapping with 'student' and 'answers' "
                           f"(got {type(data).__name__})")
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
            student = str(data["student"])[:80]      # kept only to flag the claim
    answers = data.get("answers")
    if answers is None:
        answers = {}
    if not isinstance(answers, dict):
        raise AnswersError(f"{source}: 'answers' must map question ids to answers (got {type(answers).__name__})")
    unknown = set(data) - {"student", "answers"}
    if unknown:
        raise AnswersError(f"{source}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
                           "expected only 'student' and 'answers'")
    return student, {str(k): v for k, v in answers.items()}


def _as_text(raw: Any, kind: str) -> str | None:
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


# --------------------------------------------------------------------------- one question

def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def grade_variant(v: Variant, raw: Any, *, seed: int = 0) -> Mark:
    """Points and feedback for one answer; never raises for anything a student can type."""
    try:
        text = _as_text(raw, v.question.kind)
        if text is None or not text.strip():
            return Mark(0.0, "no answer", "missing")
        kind = v.question.kind
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
    except Exception as exc:  # noqa: BLE001 - a bug of ours must not cost the batch
        return Mark(0.0, f"could not grade this answer (internal error {type(exc).__name__}); "
                         "please ask the instructor to regrade", "error")


def _expected_list(v: Variant) -> list[float]:
    return [float(x) for x in v.answer] if isinstance(v.answer, list) else [float(v.answer)]


def count_problem(expected: int, got: int) -> str:
    """The wrong-shape message, the same in grading and in ``seqlab exam check``."""
    return f"expected {expected} number{'s' if expected > 1 else ''}, got {got}"


def _numeric(v: Variant, text: str) -> Mark:
    got = parse_numbers(text)
    expected = _expected_list(v)
    tol = v.tolerance
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
            notes.append(f"entr{'y' if len(copied) == 1 else 'ies'} {', '.join(copied)} can be copied from the "
                         "question and earn no partial credit")
    if v.mistakes:
        for name, mistake in v.mistakes.items():
            values = mistake.value if isinstance(mistake.value, list) else [mistake.value]
            if len(values) == len(got) and all(tol.accepts(a, float(e)) for a, e in zip(got, values)):
                notes.append(f"looks like: {mistake.feedback}")
                credit = max(credit, v.points * v.partial.get("mistakes", {}).get(name, 0.0))
                details["mistake"] = name   # item analysis counts named mistakes
                break
    wrong = [str(i + 1) for i, good in enumerate(ok) if not good]
    where = f"entr{'y' if len(wrong) == 1 else 'ies'} {', '.join(wrong)} " if len(expected) > 1 else ""
    msg = f"incorrect: {where}not {tol.describe()} of the key ({key})"
    return Mark(credit, "; ".join([msg] + notes), "partial" if credit else "incorrect", details)


def given_numbers(params: Any) -> list[float]:
    """Every number printed in a question: its parameters, flattened (strings and flags skipped)."""
    if isinstance(params, bool):
        return []
    if isinstance(params, (int, float)):
        return [float(params)]
    if isinstance(params, dict):
        return [x for value in params.values() for x in given_numbers(value)]
    if isinstance(params, (list, tuple)):
        return [x for value in params for x in given_numbers(value)]
    return []


def earning_entries(v: Variant) -> list[bool]:
    """The partial-credit rule for vector answers: an entry earns its share only when it takes the
    idea. An entry is copyable, and earns nothing, when writing 0 or a number printed in the
    question would be accepted for it (B and T of a shape, the masked zeros of a causal row)."""
    given = [0.0] + given_numbers(v.params)
    return [not any(v.tolerance.accepts(x, e) for x in given) for e in _expected_list(v)]


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
                notes.append(f"looks like: {mistake.feedback}")
                credit = v.points * v.partial.get("mistakes", {}).get(name, 0.0)
                details["mistake"] = name
                break
    msg = "incorrect: not equivalent to the key" + (" (could not be evaluated)" if verdict.how == "undefined" else "")
    return Mark(credit, "; ".join([msg + f" ({v.key})"] + notes), "partial" if credit else "incorrect",
                {"how": verdict.how, **details})


def _letter(options: int, text: str) -> str:
    letters = [chr(ord("A") + i) for i in range(options)]
    cleaned = text.strip().strip("()[]. ").upper()
    if cleaned not in letters:
        raise AnswerRejected(f"answer rejected: give one letter, {letters[0]}-{letters[-1]}")
    return cleaned


def _choice(v: Variant, text: str) -> Mark:
    cleaned = _letter(len(v.params["options"]), text)
    if cleaned == v.answer:
        return Mark(v.points, "correct", "correct")
    why = v.params.get("why", {}).get(cleaned, "")
    chosen = v.params["options"][ord(cleaned) - ord("A")]
    return Mark(0.0, f"incorrect: the answer is {v.answer}" + (f"; {cleaned}: {why}" if why else ""), "incorrect",
                {"mistake": f"chose: {chosen}"[:120]})


_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0"}


def _truefalse_value(text: str) -> str:
    cleaned = text.strip().strip(".").lower()
    if cleaned not in _TRUE | _FALSE:
        raise AnswerRejected("answer rejected: give true or false")
    return "true" if cleaned in _TRUE else "false"


def _truefalse(v: Variant, text: str) -> Mark:
    given = _truefalse_value(text)
    if given == v.answer:
        return Mark(v.points, "correct", "correct")
    why = v.params.get("why", "")
    return Mark(0.0, f"incorrect: the statement is {v.answer}" + (f"; {why}" if why else ""), "incorrect")


# --------------------------------------------------------------------------- one student

def grade_answers(exam: Exam, student: str, answers: dict[str, Any], *, instance: ExamInstance | None = None,
                  source: str = "") -> GradingResult:
    start = time.perf_counter()
    inst = instance or make_instance(exam, student, render=False)
    tests: list[TestResult] = []
    errors: list[str] = []
    unknown = sorted(set(answers) - set(exam.ids()))
    if unknown:
        shown = ", ".join(repr(u[:40]) for u in unknown[:10]) + (" ..." if len(unknown) > 10 else "")
        errors.append(f"answers for unknown question id(s) ignored: {shown}")
    not_drawn = sorted((set(answers) & set(exam.ids())) - {v.id for v in inst.variants})
    if not_drawn:
        errors.append(f"answers for question(s) not on this student's paper ignored: {', '.join(not_drawn[:10])}")
    for v in inst.variants:
        mark = grade_variant(v, answers.get(v.id), seed=_seed(exam.seed, inst.student, v.id))
        shown = _shown(answers.get(v.id))
        tests.append(TestResult(
            name=f"exam.{v.id}: {v.question.title}",
            score=round(mark.score, 4),
            max_score=v.points,
            output=mark.output,
            visibility=exam.visibility,
            details={"question": v.number, "verdict": mark.verdict, "answer": shown,
                     "sections": list(v.question.sections), **mark.details},
        ))
    meta = {"kind": "exam", "exam": exam.title, "student": inst.student, "exam_seed": str(exam.seed)}
    if source:
        meta["answers_file"] = source
    return GradingResult(tests=tests, submission=inst.student,
                         seed=exam.seed if isinstance(exam.seed, int) else None,
                         execution_time=time.perf_counter() - start, errors=errors, meta=meta)


def _shown(raw: Any) -> Any:
    """The answer as kept in the report: short, and never a full ``str()`` of a nested structure
    (a YAML alias bomb would be huge once printed)."""
    if raw is None or isinstance(raw, (bool, int, float)):
        return raw
    if isinstance(raw, str):
        return raw if len(raw) <= 200 else raw[:200] + f"... ({len(raw)} characters)"
    return reprlib.repr(raw)[:200]


def check_answers(exam: Exam, student: str, answers: dict[str, Any]) -> list[str]:
    """What ``seqlab exam check`` reports: every answer the grader could not read, by number,
    through the same parser and shape rules as grading. Never whether an answer is right."""
    inst = make_instance(exam, student, render=False)
    problems = []
    unknown = sorted(set(answers) - set(exam.ids()))
    if unknown:
        problems.append("unknown question id(s), these answers are not graded: "
                        + ", ".join(repr(u[:40]) for u in unknown[:10]))
    not_drawn = sorted((set(answers) & set(exam.ids())) - {v.id for v in inst.variants})
    if not_drawn:
        problems.append("question(s) not on your paper, these answers are not graded: " + ", ".join(not_drawn[:10]))
    return problems + check_readable(answer_shapes(inst), answers, quiet=True)


def answer_shapes(inst: ExamInstance) -> list[dict]:
    """What an answer must look like, per question: kind, number of entries, symbol names, options.
    Nothing about the key: the notebook embeds this so a student can run the check."""
    shapes = []
    for v in inst.variants:
        shape = {"number": v.number, "id": v.id, "kind": v.question.kind}
        if v.question.kind == NUMERIC:
            shape["entries"] = len(_expected_list(v))
        elif v.question.kind == SYMBOLIC:
            shape["symbols"] = [s.name for s in v.question.syms(v.params)]
        elif v.question.kind == CHOICE:
            shape["options"] = len(v.params["options"])
        shapes.append(shape)
    return shapes


def load_shapes(path: str | Path) -> tuple[str, list[dict]]:
    """(student, answer shapes) from the ``check-ID.json`` written next to a rendered exam."""
    import json

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
    """The readability check itself (CLI and notebook): one line per unreadable answer."""
    problems = []
    for shape in shapes:
        problem = readability_problem(shape, answers.get(shape["id"]))
        if problem:
            problems.append(f"answer {shape['number']} ({shape['id']}): {problem}")
    if not quiet:
        print("\n".join(problems) if problems else "all answers readable")
    return problems


def readability_problem(shape: dict, raw: Any) -> str:
    """"" when grading can read the answer, else why not (the grader's own message)."""
    import sympy

    try:
        kind = shape["kind"]
        text = _as_text(raw, kind)
        if text is None or not text.strip():
            return "no answer"
        if kind == NUMERIC:
            got, expected = len(parse_numbers(text)), shape["entries"]
            if got != expected:
                return count_problem(expected, got)
        elif kind == SYMBOLIC:
            parse(text, {name: sympy.Symbol(name) for name in shape["symbols"]})
        elif kind == CHOICE:
            _letter(shape["options"], text)
        else:
            _truefalse_value(text)
    except AnswerRejected as exc:
        return str(exc).removeprefix("answer rejected: ")
    except RecursionError:
        return "too deeply nested"
    return ""


def grade_file(exam: Exam, path: str | Path, student: str | None = None) -> GradingResult:
    file_student, answers = load_answers(path)
    if student is not None and check_student_id(student) != file_student:
        raise AnswersError(f"{path}: the file is for student {file_student!r}, not {student!r}")
    return grade_answers(exam, file_student, answers, source=str(path))


# --------------------------------------------------------------------------- many students

@dataclass
class BatchRow:
    """One answers file of a batch: graded (``result``) or not (``status`` error, ``reason``)."""

    file: str
    student: str
    status: str                       # "graded" | "error"
    reason: str = ""
    result: GradingResult | None = None
    flag: str = ""                    # e.g. the file's content claims another student's id


ANSWER_SUFFIXES = (".yaml", ".yml", ".json")


def answer_files(folder: Path) -> list[Path]:
    """The answers files of a hand-in folder: ``ID.yaml`` at the top, or one file per ``ID/`` folder."""
    folder = Path(folder)
    found = [p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in ANSWER_SUFFIXES]
    for sub in folder.iterdir():
        if sub.is_dir() and not sub.is_symlink():
            found += [p for p in sub.iterdir() if p.is_file() and p.suffix.lower() in ANSWER_SUFFIXES]
    return sorted(found)


HANDED_IN_PREFIX = "answers-"      # `seqlab exam render` hands each student answers-ID.yaml to fill in


def owner_from_name(folder: Path, path: Path) -> str:
    """Whose file this is, from where it was handed in: ``ID.yaml``, ``answers-ID.yaml`` (the file
    render writes) or ``ID/<any name>.yaml``."""
    rel = path.relative_to(folder)
    if len(rel.parts) > 1:
        return rel.parts[0]
    return path.stem.removeprefix(HANDED_IN_PREFIX)


def load_roster(path: str | Path) -> dict[str, str]:
    """A roster CSV with columns ``file`` (as under the hand-in folder) and ``student``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise AnswersError(f"{path}: cannot read the roster: {getattr(exc, 'strerror', None) or exc}") from None
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or not {"file", "student"} <= set(reader.fieldnames):
        raise AnswersError(f"{path}: the roster needs the columns 'file' and 'student'")
    roster: dict[str, str] = {}
    for line, row in enumerate(reader, start=2):
        name, sid = (row.get("file") or "").strip(), (row.get("student") or "").strip()
        try:
            roster[name] = check_student_id(sid)
        except StudentIdError as exc:
            raise AnswersError(f"{path}: line {line}: {exc}") from None
    return roster


def grade_folder(exam: Exam, folder: str | Path, roster: dict[str, str] | None = None) -> list[BatchRow]:
    """Grade every answers file in ``folder``; a bad file becomes an error row, never a stop.

    Whose file it is comes from the roster (file name -> id) or else the file or folder name,
    never from the content: a file that claims another id is graded as its owner's and flagged.
    Two files for the same student are both refused (which one counts is the instructor's call).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise AnswersError(f"{folder}: not a folder")
    rows: list[BatchRow] = []
    loaded: list[tuple[Path, str, str | None, dict[str, Any]]] = []
    for path in answer_files(folder):
        name = path.relative_to(folder).as_posix()
        if roster is not None:
            if name not in roster:
                rows.append(BatchRow(name, "", "error", reason=f"{path}: not in the roster; add it to grade it"))
                continue
            owner = roster[name]
        else:
            try:
                owner = check_student_id(owner_from_name(folder, path))
            except StudentIdError as exc:
                rows.append(BatchRow(name, "", "error", reason=f"{path}: the file name is no student id: {exc}"))
                continue
        try:
            claimed, answers = load_answers(path, require_student=False)
            loaded.append((path, owner, claimed, answers))
        except AnswersError as exc:
            rows.append(BatchRow(name, owner, "error", reason=str(exc)))
    files_of: dict[str, list[str]] = {}
    for path, owner, _, _ in loaded:
        files_of.setdefault(owner, []).append(path.relative_to(folder).as_posix())
    for path, owner, claimed, answers in loaded:
        name = path.relative_to(folder).as_posix()
        if len(files_of[owner]) > 1:
            others = ", ".join(f for f in files_of[owner] if f != name)
            rows.append(BatchRow(name, owner, "error",
                                 reason=f"{path}: student {owner!r} also has answers in {others}; keep one file"))
            continue
        result = grade_answers(exam, owner, answers, source=str(path))
        flag = ""
        if claimed is not None and claimed != owner:
            flag = f"the file claims student {claimed!r}; graded as its owner {owner!r}"
            result.errors.append(flag)
            result.meta["claimed_student"] = claimed
        rows.append(BatchRow(name, owner, "graded", result=result, flag=flag))
    return rows


def gradebook_csv(exam: Exam, rows: list[BatchRow]) -> str:
    """One row per answers file: student, status, totals, one column per question, reason."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    ids = exam.ids()
    writer.writerow(["student", "status", "total", "max_score", "percent", *ids, "flag", "file", "reason"])
    for row in sorted(rows, key=lambda r: (r.status != "graded", r.student, r.file)):
        if row.result is None:
            writer.writerow([row.student, row.status, 0, f"{exam.max_score:g}", "", *[""] * len(ids), row.flag,
                             row.file, row.reason[:300]])
            continue
        result = row.result
        by_id = {t.name.split(":", 1)[0][len("exam."):]: t.score for t in result.tests}
        # a question of a pool this student did not draw stays empty (not 0: it was not asked)
        writer.writerow([row.student, row.status, f"{result.score:g}", f"{result.max_score:g}",
                         f"{result.percent:.1f}", *[f"{by_id[q]:g}" if q in by_id else "" for q in ids], row.flag, row.file,
                         "; ".join(result.errors)[:300]])
    return buf.getvalue()
