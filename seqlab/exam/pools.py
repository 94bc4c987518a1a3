"""Question pools: "draw k of these n questions" inside a part of an exam file.

```yaml
parts:
  - title: Part C
    questions:
      - {id: attn.var_qk, points: 2}
      - pool: generation          # a name, unique in the exam (it seeds the draw)
        draw: 1                   # how many of the questions below each student gets
        points: 2                 # default points of the pool's questions
        questions:
          - {id: rnn.greedy_decode}
          - {id: tf.sampling_temperature}
```

Like PrairieLearn's zones/alternatives. The draw is a pure function of (exam seed, student id,
pool name), so the same id always gets the same paper, on any machine. Drawn questions keep the
order they have in the file, so the numbering follows the file.

Fairness: every question of a pool is worth the same points and is of the same kind (numeric,
symbolic, choice, true/false), otherwise two students could sit papers of different weight or
different difficulty class; ``parse_pool`` refuses such a pool with a message naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..seeds import derived_rng
from .errors import ExamError

POOL_KEYS = {"pool", "draw", "points", "questions"}


@dataclass(frozen=True)
class Pool:
    """Draw ``draw`` of the questions ``ids``, each worth ``points``; ``name`` seeds the draw.
    (``parse_pool`` has checked that the questions are of one kind and worth the same.)"""

    name: str
    draw: int
    ids: tuple[str, ...]
    points: float

    @property
    def max_score(self) -> float:
        return self.draw * self.points


def is_pool_entry(entry: Any) -> bool:
    return isinstance(entry, dict) and "pool" in entry


def parse_pool(
    entry: dict,
    where: str,
    part: str,
    source: str,
    seen: set[str],
    seen_pools: set[str],
    parse_question: Callable[..., Any],
) -> tuple[Pool, list[Any]]:
    """The pool and its questions (tagged with the pool's name), or ``ExamError`` naming the problem.
    ``parse_question`` is the exam file's own (``examfile``, which calls this): the questions are its
    ``ExamQuestion``, this module only reads their id, points and kind and names their pool."""

    def err(at: str, what: str) -> ExamError:
        return ExamError(f"{source}: {at}: {what}")

    unknown = set(entry) - POOL_KEYS
    if unknown:
        raise err(
            where,
            f"unknown key(s) {', '.join(sorted(map(str, unknown)))} in a pool "
            f"(a pool has {', '.join(sorted(POOL_KEYS))})",
        )
    name = entry["pool"]
    if not isinstance(name, str) or not name.strip():
        raise err(f"{where}.pool", "must be a non-empty name")
    if name in seen_pools:
        raise err(f"{where}.pool", f"pool name {name!r} used twice (the name seeds the draw)")
    seen_pools.add(name)
    items = entry.get("questions")
    if not isinstance(items, list) or len(items) < 2:
        raise err(f"{where}.questions", f"pool {name!r} needs a list of at least 2 questions")
    draw = entry.get("draw", 1)
    if isinstance(draw, bool) or not isinstance(draw, int) or not 1 <= draw < len(items):
        raise err(
            f"{where}.draw",
            f"pool {name!r}: must be an integer from 1 to {len(items) - 1} "
            f"(it has {len(items)} questions; drawing all of them is not a pool)",
        )
    default_points = entry.get("points")
    questions = []
    for j, item in enumerate(items):
        if isinstance(item, str):
            item = {"id": item}
        if isinstance(item, dict) and default_points is not None and "points" not in item:
            item = {**item, "points": default_points}
        if is_pool_entry(item):
            raise err(f"{where}.questions[{j}]", "pools cannot be nested")
        questions.append(parse_question(item, f"{where}.questions[{j}]", part, source, seen))
    points = {q.points for q in questions}
    if len(points) > 1:
        detail = ", ".join(f"{q.id}: {q.points:g}" for q in questions)
        raise err(where, f"pool {name!r}: every question must be worth the same points ({detail})")
    kinds = {q.question.kind for q in questions}
    if len(kinds) > 1:
        detail = ", ".join(f"{q.id}: {q.question.kind}" for q in questions)
        raise err(where, f"pool {name!r}: every question must be of the same kind ({detail})")
    pool = Pool(name=name, draw=draw, ids=tuple(q.id for q in questions), points=points.pop())
    return pool, [replace(q, pool=name) for q in questions]


def drawn_ids(pool: Pool, exam_seed: int | str, student: str) -> frozenset[str]:
    """The pool's questions this student gets: SHA-256 seeded, never Python's salted ``hash``."""
    rng = derived_rng(exam_seed, student, "pool", pool.name)
    return frozenset(rng.sample(pool.ids, pool.draw))
