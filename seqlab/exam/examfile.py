"""Exam files (``exams/*.yaml``): which questions, how many points, which partial credit.

```yaml
title: Sequence models, final exam
seed: 20261215              # with the student id, fixes every parameter of every variant
visibility: after_published # Gradescope visibility of per-question feedback
duration: 120               # minutes; no paper may take a median student longer (timing.py)
aids:                       # printed on every paper, in every medium
  calculator: a scientific calculator is allowed
  computer: only to read the paper and type the answers file
conventions: |              # stated once on the paper; every question's text follows them
  Classes and tokens are numbered from 0, time steps from 1 ...
parts:
  - title: Optimizers
    questions:
      - id: opt.adam_steps
        points: 4
        partial:
          per_element: true                     # vectors: credit per correct entry
          mistakes: {no_bias_correction: 0.5}   # a known mistake earns this fraction
        tolerance: {rel: 1.0e-3, abs: 1.0e-4}  # overrides the question's own
      - {id: rnn.shapes, form: bidirectional}  # questions with forms: the same form for everyone
```

``load_exam`` checks everything (unknown ids, unknown mistakes, bad points) and reports ``file:
where: what`` so the instructor can fix the file; a YAML syntax error names the line where the
parser found it. Whether a paper fits the duration is measured on its rendered text
(``timing.check_fits``), which every medium checks before it renders the paper.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .bank import load_bank
from .draws import sample_params
from .errors import ExamError, yaml_problem
from .model import CHOICE, NUMERIC, REGISTRY, TRUEFALSE, Question, Tolerance
from .pools import is_pool_entry, parse_pool

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


@dataclass(frozen=True)
class ExamQuestion:
    question: Question
    points: float
    part: str
    per_element: bool = False
    mistakes: dict[str, float] = field(default_factory=dict)
    tolerance: Tolerance | None = None
    form: str | None = None  # None: drawn from the exam seed (still one form per exam)
    pool: str = ""  # the pool it is drawn from (pools.py); "" = on every paper

    @property
    def id(self) -> str:
        return self.question.id


@dataclass(frozen=True)
class Exam:
    title: str
    seed: int | str
    questions: tuple[ExamQuestion, ...]
    parts: tuple[str, ...]
    instructions: str = ""
    visibility: str = "after_published"
    path: str = ""
    pools: tuple = ()  # pools.Pool: every candidate of a pool is in ``questions``
    duration: float = 0.0  # minutes; 0: not stated (the bank preview)
    aids: tuple[tuple[str, str], ...] = ()  # (aid, what is allowed), in the file's order
    conventions: str = ""

    @property
    def max_score(self) -> float:
        """Points of one student's paper: the questions outside pools plus ``draw * points`` per pool."""
        return sum(q.points for q in self.questions if not q.pool) + sum(p.max_score for p in self.pools)

    def ids(self) -> list[str]:
        return [q.id for q in self.questions]


def load_exam(path: str | Path) -> Exam:
    load_bank()
    path = Path(path)
    text = ""
    try:
        text = path.read_text(encoding="utf-8")
        return exam_from_dict(yaml.safe_load(text), str(path))
    except OSError as exc:
        raise ExamError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:  # the line to fix, where the parser knows it
        raise ExamError(f"{path}: {yaml_problem(exc, text)}") from None


def _err(source: str, where: str, what: str) -> ExamError:
    return ExamError(f"{source}: {where}: {what}")


def exam_from_dict(data: Any, source: str = "<exam>") -> Exam:
    load_bank()
    if not isinstance(data, dict):
        raise ExamError(f"{source}: the exam must be a mapping with title, seed and parts")
    for key in ("title", "seed", "parts"):
        if key not in data:
            raise _err(source, key, "missing")
    unknown = set(data) - {"title", "seed", "parts", "instructions", "visibility", "duration", "aids", "conventions"}
    if unknown:
        raise _err(source, ", ".join(sorted(unknown)), "unknown key(s)")
    seed = data["seed"]
    if isinstance(seed, bool) or not isinstance(seed, (int, str)):
        raise _err(source, "seed", "must be an integer or a string")
    visibility = data.get("visibility", "after_published")
    if visibility not in VISIBILITIES:
        raise _err(source, "visibility", f"must be one of {', '.join(VISIBILITIES)}")
    parts = data["parts"]
    if not isinstance(parts, list) or not parts:
        raise _err(source, "parts", "must be a non-empty list")
    questions: list[ExamQuestion] = []
    titles: list[str] = []
    seen: set[str] = set()
    pools: list = []
    seen_pools: set[str] = set()
    for i, part in enumerate(parts):
        where = f"parts[{i}]"
        if not isinstance(part, dict) or not isinstance(part.get("questions"), list):
            raise _err(source, where, "must be a mapping with a list of questions")
        title = str(part.get("title", f"Part {i + 1}"))
        titles.append(title)
        for j, entry in enumerate(part["questions"]):
            if is_pool_entry(entry):
                pool, members = parse_pool(entry, f"{where}.questions[{j}]", title, source, seen, seen_pools, _question)
                pools.append(pool)
                questions += members
                continue
            questions.append(_question(entry, f"{where}.questions[{j}]", title, source, seen))
    if not questions:
        raise _err(source, "parts", "no questions")
    exam = Exam(
        title=str(data["title"]),
        seed=seed,
        questions=tuple(questions),
        parts=tuple(titles),
        instructions=str(data.get("instructions", "")),
        visibility=visibility,
        path=source,
        pools=tuple(pools),
        duration=_duration(data.get("duration", 0), source),
        aids=_aids(data.get("aids") or {}, source),
        conventions=str(data.get("conventions") or "").strip(),
    )
    return exam


def _duration(value: Any, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise _err(source, "duration", "must be the exam's length in minutes")
    return float(value)


def _aids(value: Any, source: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, str) and v.strip() for v in value.values()):
        raise _err(source, "aids", "must map an aid (calculator, computer, notes) to what is allowed")
    return tuple((str(k), v.strip()) for k, v in value.items())


def _question(entry: Any, where: str, part: str, source: str, seen: set[str]) -> ExamQuestion:
    if isinstance(entry, str):
        entry = {"id": entry}
    if not isinstance(entry, dict) or "id" not in entry:
        raise _err(source, where, "must be a question id or a mapping with an id")
    unknown = set(entry) - {"id", "points", "partial", "tolerance", "form"}
    if unknown:
        raise _err(source, where, f"unknown key(s) {', '.join(sorted(unknown))}")
    qid = entry["id"]
    if qid not in REGISTRY:
        raise _err(source, where, f"unknown question id {qid!r}")
    if qid in seen:
        raise _err(source, where, f"question {qid!r} appears twice")
    seen.add(qid)
    q = REGISTRY[qid]
    form = entry.get("form")
    if form is not None and form not in q.forms:
        known_forms = ", ".join(q.forms) if q.forms else "none"
        raise _err(source, f"{where}.form", f"unknown form {form!r} (forms of {qid}: {known_forms})")
    points = entry.get("points", 1)
    if isinstance(points, bool) or not isinstance(points, (int, float)) or points <= 0:
        raise _err(source, f"{where}.points", "must be a positive number")
    partial = entry.get("partial") or {}
    if not isinstance(partial, dict):
        raise _err(source, f"{where}.partial", "must be a mapping")
    unknown = set(partial) - {"per_element", "mistakes"}
    if unknown:
        raise _err(source, f"{where}.partial", f"unknown rule(s) {', '.join(sorted(unknown))}")
    per_element = bool(partial.get("per_element", False))
    if per_element and q.kind != NUMERIC:
        raise _err(source, f"{where}.partial.per_element", f"only numeric questions have elements ({qid} is {q.kind})")
    mistakes = partial.get("mistakes") or {}
    if not isinstance(mistakes, dict):
        raise _err(source, f"{where}.partial.mistakes", "must map mistake names to fractions")
    if mistakes:
        if q.kind in (CHOICE, TRUEFALSE) or q.mistakes is None:
            raise _err(source, f"{where}.partial.mistakes", f"{qid} declares no known mistakes")
        known = {name for f in (q.forms or (None,)) for name in q.mistakes(sample_params(q, 0, "check", f))}
        for name, frac in mistakes.items():
            if name not in known:
                raise _err(
                    source,
                    f"{where}.partial.mistakes.{name}",
                    f"unknown mistake (known for {qid}: {', '.join(sorted(known))})",
                )
            if isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 <= frac <= 1:
                raise _err(source, f"{where}.partial.mistakes.{name}", "must be a fraction in [0, 1]")
    tolerance = None
    if "tolerance" in entry:
        tol = entry["tolerance"]
        if q.kind != NUMERIC:
            raise _err(source, f"{where}.tolerance", f"only numeric questions have a tolerance ({qid} is {q.kind})")
        if (
            not isinstance(tol, dict)
            or set(tol) - {"rel", "abs"}
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in tol.values())
        ):
            raise _err(source, f"{where}.tolerance", "must be {rel: number >= 0, abs: number >= 0}")
        tolerance = Tolerance(rtol=float(tol.get("rel", 0.0)), atol=float(tol.get("abs", 0.0)))
    return ExamQuestion(
        question=q,
        points=float(points),
        part=part,
        per_element=per_element,
        mistakes={k: float(v) for k, v in mistakes.items()},
        tolerance=tolerance,
        form=form,
    )


def all_questions_exam(seed: int | str = 0, points: float = 1.0) -> Exam:
    """Every question of the bank, one part per topic (tests, coverage, the bank preview); no partial
    credit is stated (an exam file states it, where the lint finds every entry earns it)."""
    load_bank()
    parts: dict[str, list[ExamQuestion]] = {}
    for q in REGISTRY.values():
        parts.setdefault(q.topic, []).append(ExamQuestion(question=q, points=points, part=q.topic))
    questions = tuple(eq for group in parts.values() for eq in group)
    return Exam(title="Question bank (every question)", seed=seed, questions=questions, parts=tuple(parts))
