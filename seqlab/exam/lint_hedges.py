"""The bank lint's hedge rule: a claim the notes make with a hedge (通常 "usually", 常 "often",
一般 "typically", 直觉 "intuition") stated in an item without one (``lint_text`` runs it).

A hedged sentence is recorded with its terms (its English words and the Chinese ones ``GLOSSARY``
translates) and its claims (each clause or alternative after the hedge). An item states it as a
rule when one statement or option holds every term of the sentence and is about the first of
them, or (a statement or keyed option) says one claim as a phrase (``says_claim``).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from ..paths import COURSE_ROOT
from .errors import ExamError
from .lint_words import _STOP, content_words, stem

# The notes live beside the course (../shared/course-notes), not in it: a clean clone has none.
# Their hedged sentences are recorded in the course (written by `seqlab regenerate --only hedges`
# where the notes are at hand), so the lint reads the same hedges on every machine;
# tests/exam/test_lint_rules.py holds the record to the notes wherever they are present.
NOTES = COURSE_ROOT.parent / "shared" / "course-notes"
HEDGES = COURSE_ROOT / "exams" / "notes_hedges.json"
# the notes' hedges (the notes are Chinese with English terms) and an item's own
# (直觉 "intuition": the notes' own word for a picture, not a rule, such as "higher layers capture
# more abstract semantics")
_NOTES_HEDGE = re.compile(r"通常|往往|一般|常常|直觉|usually|often|typically", re.I)
# ("intuition", "picture": an item that says it gives the notes' intuition keeps their hedge)
_ITEM_HEDGE = re.compile(
    r"\b(usually|often|typically|generally|commonly|mostly|may|can be|tends?|intuition|picture)\b", re.I
)
# The Chinese words of the notes' hedged sentences that name a claim's terms, in the English the
# bank writes: a hedged sentence's terms are its English words and these.
GLOSSARY = {
    "损失": "loss",
    "求和": "sum",
    "之和": "sum",
    "参数": "parameter",
    "输入": "input",
    "输出": "output",
    "固定": "fixed",
    "状态": "state",
    "最终": "final",
    "更快": "faster",
    "较快": "faster",
    "较慢": "slower",
    "更强": "stronger",
    "不可微": "differentiable",
    "采样": "sampl",
    "隐藏层": "hidden",
    "激活函数": "activation",
    "底层": "lower",
    "高层": "higher",
    "局部": "local",
    "抽象": "abstract",
    # W8 §3.2's intuition "整个输入序列的信息被压缩到最后一个 h_T": an item saying the whole
    # input sequence "must be compressed into the final hidden state" states the picture as a rule
    "整个": "whole",
    "序列": "sequence",
    "压缩": "compressed",
    "最后": "final",
}


def ordered_terms(text: str) -> list[str]:
    """The terms of a notes' text (English words and glossary translations) in their order."""
    text = text.replace("time step", "step")
    found = [(m.start(), t) for m in re.finditer(r"[A-Za-z][A-Za-z0-9_-]*", text) for t in content_words(m.group(0))]
    found += [(text.find(zh), stem(en)) for zh, en in GLOSSARY.items() if zh in text]
    return list(dict.fromkeys(t for _, t in sorted(found)))


def hedges_from_notes(notes: Path = NOTES) -> list[list]:
    """Each hedged sentence of the notes, its terms (English words and glossary translations) and
    its hedged claims, as the record holds them: ``[sentence, sorted terms, claims]``. A claim is
    one clause or alternative after the hedge ("通常需要 reinforcement learning / policy gradient":
    [reinforcement, learn] and [policy, gradient]), its terms in order, two or more."""
    out = []
    for path in sorted(notes.glob("*.txt")):
        for sentence in re.split(r"[。！？\n|]", path.read_text(encoding="utf-8")):
            hedges = list(_NOTES_HEDGE.finditer(sentence))
            if not hedges:
                continue
            hedge = hedges[-1]  # the claim is what follows the last hedge
            terms = content_words(" ".join(re.findall(r"[A-Za-z][A-Za-z0-9_-]*", sentence)))
            terms |= {stem(en) for zh, en in GLOSSARY.items() if zh in sentence}
            claims = [c for c in map(ordered_terms, re.split(r"[，,/；;：:]", sentence[hedge.end() :])) if len(c) >= 2]
            if len(terms) >= 3:  # a hedge over one or two terms ("通常是 MLP") names no claim to match
                out.append([sentence.strip(), sorted(terms), claims])
    return out


def write_hedges(check: bool, notes: Path = NOTES, record: Path = HEDGES) -> list[str]:
    """Record the notes' hedges (``regenerate``); with ``check``, the record's name if stale."""
    if not notes.is_dir():
        raise ExamError(f"{notes}: the course notes are not here, so their hedges cannot be recorded")
    text = json.dumps(hedges_from_notes(notes), ensure_ascii=False, indent=0) + "\n"
    if record.is_file() and record.read_text(encoding="utf-8") == text:
        return []
    if not check:
        record.write_text(text, encoding="utf-8")
    return [record.name]


@functools.lru_cache(maxsize=1)
def hedged_claims(record: Path = HEDGES) -> tuple[tuple[str, frozenset[str], tuple[tuple[str, ...], ...]], ...]:
    """The notes' hedged sentences, their terms and their claims, as recorded in the course."""
    return tuple(
        (sentence, frozenset(terms), tuple(map(tuple, claims)))
        for sentence, terms, claims in json.loads(record.read_text(encoding="utf-8"))
    )


# A claim's terms said as one phrase: in the notes' order, within this many words more than the
# claim has ("higher layers build more abstract representations" for 高层...抽象, "needs policy
# gradients"). Wider, "the gradient of the loss ... is the sum of ... all time steps" would read
# as the hedged "the loss is the sum over steps"; the order keeps those apart too.
CLAIM_SLACK = 2


def claim_words(text: str) -> list[str]:
    """The stemmed words of ``text`` that carry a claim, in order; a word after "of" ("the gradient
    of the loss") is marked ``of:``: the text is about the word before it, not this one."""
    out: list[str] = []
    after_of = False
    for w in re.findall(r"[A-Za-z]+", text):
        low = w.lower()
        if low == "of":
            after_of = True
        elif low not in _STOP and len(w) >= 3:
            out.append(("of:" if after_of else "") + stem(w))
            after_of = False
    return out


def says_claim(words: list[str], claim: tuple[str, ...]) -> bool:
    """Whether ``claim``'s terms occur in ``words`` (``claim_words``) in order, within its length +
    ``CLAIM_SLACK``, its first term not said of another word."""
    for start, word in enumerate(words):
        if word != claim[0]:
            continue
        at, i = start, 1
        for j in range(start + 1, min(len(words), start + len(claim) + CLAIM_SLACK)):
            if i < len(claim) and words[j].removeprefix("of:") == claim[i]:
                at, i = j, i + 1
        if i == len(claim) and at - start < len(claim) + CLAIM_SLACK:
            return True
    return False


def unhedged(texts: list[str], phrases: bool = True) -> str:
    """A claim of ``texts`` the notes hedge: all its terms, and it is about the first of them (the
    text's first word that carries a claim is one of the terms: "the gradient of the loss is the
    sum of the steps' gradients" is about the gradient, not the hedged loss)."""
    for text in texts:
        if _ITEM_HEDGE.search(text):
            continue
        words = content_words(text)
        said = claim_words(text)
        first = {w.removeprefix("of:") for w in said[:1]}
        for sentence, terms, claims in hedged_claims():
            if (terms <= words and first <= terms) or (phrases and any(says_claim(said, c) for c in claims)):
                return f"{text[:60]!r} states as a rule what the notes hedge: {sentence[:60]!r}"
    return ""
