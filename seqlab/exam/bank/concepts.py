"""Concept questions (multiple choice, true/false), loaded from ``exams/concepts.yaml``.

Each student gets one of the interchangeable right answers and a shuffled draw of the
distractors (choice), or one of the statements (true/false); the letter of the right option is
the answer. Feedback for a wrong letter is that distractor's "why".
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from ...errors import SeqlabError
from ...paths import COURSE_ROOT
from ..model import CHOICE, TRUEFALSE, Question, register

CONCEPTS_PATH = COURSE_ROOT / "exams" / "concepts.yaml"


class ConceptError(SeqlabError, ValueError):
    """A malformed entry of the concept questions' file; the message names the entry."""


def option_text(text: str) -> str:
    """Every option is shown without a final period: punctuation must not tell the right one apart."""
    return str(text).strip().rstrip(".").rstrip()


def _choice_sampler(entry: dict):
    n = int(entry.get("options", 4))

    def sample(rng) -> dict:
        right = option_text(rng.choice(entry["correct"]))
        wrong = rng.sample(entry["wrong"], n - 1)
        options = [{"text": right, "why": ""}] + [{"text": option_text(w["text"]), "why": w["why"]} for w in wrong]
        rng.shuffle(options)
        letters = [chr(ord("A") + i) for i in range(n)]
        correct = letters[[o["text"] for o in options].index(right)]
        return {
            "stem": entry["stem"],
            "options": [o["text"] for o in options],
            "correct": correct,
            "why": {letter: o["why"] for letter, o in zip(letters, options) if o["why"]},
        }

    return sample


def _truefalse_sampler(entry: dict):
    def sample(rng) -> dict:
        s = rng.choice(entry["statements"])
        return {"text": s["text"], "truth": "true" if s["answer"] else "false", "why": s.get("why", "")}

    return sample


def _check(entry: object, where: str) -> dict:
    if not isinstance(entry, dict):
        raise ConceptError(f"{where}: must be a mapping")
    for key in ("id", "kind", "title", "sections"):
        if key not in entry:
            raise ConceptError(f"{where}: missing {key!r}")
    if entry["kind"] == CHOICE:
        n = int(entry.get("options", 4))
        if not entry.get("stem") or not entry.get("correct"):
            raise ConceptError(f"{where} ({entry['id']}): a choice needs a stem and correct answers")
        if len(entry.get("wrong", [])) < n - 1 or n > 26:
            raise ConceptError(f"{where} ({entry['id']}): needs at least {n - 1} wrong options")
        texts = [option_text(t) for t in entry["correct"]] + [option_text(w["text"]) for w in entry["wrong"]]
        if len(set(texts)) != len(texts):
            raise ConceptError(f"{where} ({entry['id']}): duplicate option text")
    elif entry["kind"] == TRUEFALSE:
        statements = entry.get("statements") or []
        if not statements or not all(isinstance(s.get("answer"), bool) and s.get("text") for s in statements):
            raise ConceptError(f"{where} ({entry['id']}): statements need text and a true/false answer")
    else:
        raise ConceptError(f"{where} ({entry['id']}): kind must be choice or truefalse")
    return entry


# An item's ``stated_by``: the ways another question's rendered text (its TeX and words) states
# this item's key, as regular expressions: "softmax_j(q_i^T k_j ...)" and "sum_j alpha_ij v_j"
# state what attention compares and sums. The lint (``lint_text.stated_keys``) refuses a paper on
# which another question's text matches one: the key is printed there, however worded.
STATED_BY: dict[str, tuple[re.Pattern[str], ...]] = {}


def load(path: Path = CONCEPTS_PATH) -> list[Question]:
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ConceptError(f"{path}: must be a list of questions")
    out = []
    for i, raw in enumerate(data):
        entry = _check(raw, f"{path}: entry {i}")
        try:
            STATED_BY[entry["id"]] = tuple(re.compile(x) for x in entry.get("stated_by", ()))
        except re.error as exc:
            raise ConceptError(f"{path}: entry {i} ({entry['id']}): stated_by: {exc}") from exc
        kind = entry["kind"]
        sample = _choice_sampler(entry) if kind == CHOICE else _truefalse_sampler(entry)
        answer = (lambda p: p["correct"]) if kind == CHOICE else (lambda p: p["truth"])
        out.append(
            register(
                Question(
                    id=entry["id"],
                    kind=kind,
                    title=entry["title"],
                    sections=tuple(entry["sections"]),
                    sample=sample,
                    answer=answer,
                    template=f"questions/concept_{kind}.md.j2",
                    exercises=tuple(entry.get("exercises", ())),
                    topic="concepts",
                )
            )
        )
    return out


QUESTIONS = load()
