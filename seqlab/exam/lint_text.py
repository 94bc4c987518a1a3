"""The bank lint's rules on words: giveaways, keys their own explanation contradicts, hedges lost.

Three rules over the rendered text of concept items (and every question's stem), beside the
number and formula rules of ``lint.py``:

- ``giveaway``: another question's stem or title carries this question's key in words: most of
  the key's own words (those its stem and title do not already use) are in the other question's
  title and stem, and more of them than of any distractor's, so the other question answers it
  ("generates text by sampling ... feeds it back as the next input" over "sampling a character
  ... and feeding it back"). Also a true/false title that answers its statement: the title names
  a property (``OPPOSITES``) whose opposite a false statement asserts ("Weight sharing over time"
  over "keeps a separate copy of W_hh for each time step").
- ``contradiction``: the item's right answers and explanations count the same thing differently
  ("three gate blocks" beside "two gates, update and reset", both said of the GRU), or an
  explanation calls two things the same and then names how they differ ("gives the same outputs,
  only permuted" under a key that they cannot be told apart): the item reads two ways.
- ``hedge``: a claim the notes make with a hedge (通常 "usually", 常 "often", 一般 "typically")
  stated in an item without one: every term of the notes' sentence (its English words and the
  Chinese ones ``GLOSSARY`` translates) is in one statement or option of the item.

What they do not see: a paraphrase with none of the key's words or of ``SYNONYMS`` (the
reviewer's), and a count said of a subject the sentence does not name.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..paths import COURSE_ROOT
from .errors import ExamError
from .model import CHOICE, TRUEFALSE, Variant

# The notes live beside the course (../shared/course-notes), not in it: a clean clone has none.
# Their hedged sentences are recorded in the course (written by `seqlab regenerate --only hedges`
# where the notes are at hand), so the lint reads the same hedges on every machine;
# tests/exam/test_lint_rules.py holds the record to the notes wherever they are present.
NOTES = COURSE_ROOT.parent / "shared" / "course-notes"
HEDGES = COURSE_ROOT / "exams" / "notes_hedges.json"

# words that carry no claim: a key's content is what is left
_STOP_WORDS = """a an the of to in on at by for from with without and or but not no is are was were be been
    being it its it's this that these those as into than then so such can could may might must will
    would do does did has have had which what when where who whom whose how why all any each every
    both one only also just very more most less same other another their there they them his her he
    she we you your our us i if while over under about after before up down out off own per via
    many much"""
_STOP = set(_STOP_WORDS.split())
# Words the bank writes for one idea, read as one: the paraphrases the audit met
# ("above the threshold" for "exceeds the threshold", "draws" for "samples").
SYNONYMS = {"above": "exceed", "over": "exceed", "draw": "sampl", "drawn": "sampl", "feed": "feed"}
# A property a true/false title may name, and the words by which a statement asserts its
# opposite: a false statement with one of them under a title naming the property is answered by
# its title. Each pair is one the bank's topics use; a title naming a property with no entry here
# is not judged.
OPPOSITES = {
    "invarian": ("tell", "distinguish", "differ"),
    "shar": ("separate", "independent"),
    "vanish": ("explod", "grow"),
    "explod": ("vanish", "shrink"),
    "carr": ("reset",),
}
# the notes' hedges (the notes are Chinese with English terms) and an item's own
# (直觉 "intuition": the notes' own word for a picture, not a rule, such as "higher layers capture
# more abstract semantics")
_NOTES_HEDGE = re.compile(r"通常|往往|一般|常常|直觉|usually|often|typically", re.I)
_ITEM_HEDGE = re.compile(r"\b(usually|often|typically|generally|commonly|mostly|may|can be|tends?)\b", re.I)
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
}
_NUMBER_WORDS = {
    w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"])
}
_SUBJECTS = re.compile(r"\b(GRU|LSTM|RNN|Transformer|encoder|decoder|Mamba|SSM)\b", re.I)


@dataclass(frozen=True)
class TextFinding:
    number: int
    id: str
    rule: str
    what: str


def stem(word: str) -> str:
    word = word.lower().strip("'")
    for suffix in ("ings", "ing", "ies", "ed", "es", "s", "ly"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return SYNONYMS.get(word, word)


def content_words(text: str) -> set[str]:
    """The stemmed words that carry a claim: no function words, no symbols (``h_t``, ``x1``)."""
    words = re.findall(r"[A-Za-z][A-Za-z0-9_]*", text.replace("time step", "step"))
    return {stem(w) for w in words if w.lower() not in _STOP and len(w) >= 3 and w.isalpha()}


def keyed_texts(v: Variant) -> tuple[list[str], list[str]]:
    """(the key's texts, the distractors' texts) of a concept item; ([], []) for others."""
    p = v.params
    if v.question.kind == CHOICE:
        right = ord(v.answer) - ord("A")
        return [p["options"][right]], [o for i, o in enumerate(p["options"]) if i != right]
    if v.question.kind == TRUEFALSE and v.answer == "true":
        return [p["text"]], []
    return [], []


def _stem_of(v: Variant) -> str:
    p = v.params
    if v.question.kind == CHOICE:
        return p.get("stem", "")
    if v.question.kind == TRUEFALSE:
        return ""
    return v.text


# A word in the stems and titles of this share of a paper's questions is the course's vocabulary
# ("decoder", "input", "RNN"), which every question on the topic uses: sharing it gives nothing away.
GENERIC_SHARE = 0.06


def generic_words(variants: list[Variant]) -> set[str]:
    df: dict[str, int] = {}
    for v in variants:
        for w in content_words(_stem_of(v) + " " + v.question.title):
            df[w] = df.get(w, 0) + 1
    floor = max(3, GENERIC_SHARE * len(variants))
    return {w for w, n in df.items() if n >= floor}


def giveaways(variants: list[Variant]) -> list[TextFinding]:
    """Another question's stem and title carrying this one's key (module doc)."""
    out = []
    generic = generic_words(variants)
    for b in variants:
        keys, others = keyed_texts(b)
        if not keys:
            continue
        own = content_words(_stem_of(b) + " " + b.question.title) | generic
        key_words = content_words(keys[0]) - own
        if len(key_words) < 3:  # a key of one or two new words is named by any text on its topic
            continue
        for a in variants:
            if a is b:
                continue
            there = content_words(_stem_of(a) + " " + a.question.title)
            share = len(key_words & there) / len(key_words)
            rivals = [len((content_words(o) - own) & there) / max(1, len(content_words(o) - own)) for o in others]
            # 60%: the audit's pair shares 5 of the key's 6 words, a stem on the same topic 1 or 2
            if share >= 0.6 and all(share > r for r in rivals):
                shared = ", ".join(sorted(key_words & there))
                out.append(TextFinding(a.number, a.id, "giveaway", f"carries question {b.number}'s key ({shared})"))
    return out


def title_answers(v: Variant) -> str:
    """A true/false title naming a property whose opposite the (false) statement asserts."""
    if v.question.kind != TRUEFALSE or v.answer != "false":
        return ""
    title = content_words(v.question.title)
    said = content_words(v.params["text"])
    for prop, opposites in OPPOSITES.items():
        if any(w.startswith(prop) for w in title) and any(s.startswith(o) for s in said for o in opposites):
            return f"the title names {prop}..., the false statement its opposite: the title answers it"
    return ""


_COUNT = re.compile(r"\b(zero|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+([A-Za-z]+)")
_LIST3 = re.compile(r"\b\w+, \w+,? and \w+ ([A-Za-z]+)")
# "update and reset gates": two named, a plural noun; never "state and three weight blocks"
_NOT_NUMBER = r"(?!(?:one|two|three|four|five|six|seven|eight|nine|ten)\b)"
_LIST2 = re.compile(rf"(?<!,)\s\b{_NOT_NUMBER}\w+ and {_NOT_NUMBER}\w+ ([A-Za-z]+s)\b")


def counts(text: str) -> set[tuple[str, str, int]]:
    """(subject, counted noun, count) said in each clause: "three gate blocks" of the GRU."""
    out = set()
    for clause in re.split(r"[.;:]|\bwhere\b|\bwhile\b|\bto the\b", text):
        subject = _SUBJECTS.findall(clause)
        who = subject[0].upper() if subject else ""
        for number, noun in _COUNT.findall(clause):
            n = _NUMBER_WORDS.get(number.lower(), int(number) if number.isdigit() else -1)
            out.add((who, stem(noun), n))
        for noun in _LIST3.findall(clause):
            out.add((who, stem(noun), 3))
        for noun in _LIST2.findall(_LIST3.sub("", clause)):
            out.add((who, stem(noun), 2))
    return {c for c in out if c[1] not in _STOP and not c[1].isdigit()}


_SAME_BUT = re.compile(r"\bsame\b[^.;]*?,\s*(only|but|except)\b", re.I)


def contradictions(v: Variant, explanations: list[str]) -> str:
    keys, _ = keyed_texts(v)
    if v.question.kind == TRUEFALSE:
        keys = [v.params["text"]]
    said: dict[tuple[str, str], set[int]] = {}
    for text in keys + explanations:
        for who, noun, n in counts(text):
            said.setdefault((who, noun), set()).add(n)
    for (who, noun), ns in sorted(said.items()):
        if who and len(ns) > 1:
            return f"the {who}'s {noun}s are counted {' and '.join(map(str, sorted(ns)))} in its key and explanations"
    for text in explanations:
        found = _SAME_BUT.search(text)
        if found:
            return f"the explanation calls them the same and names a difference: {found.group(0)!r}"
    return ""


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


def item_texts(v: Variant) -> tuple[list[str], list[str]]:
    """(the claims an item makes: statement, right options, stem; its explanations)."""
    p = v.params
    if v.question.kind == TRUEFALSE:
        return [p["text"]], [p.get("why", "")]
    if v.question.kind == CHOICE:
        keys, _ = keyed_texts(v)
        return keys + [p["stem"]], list(p.get("why", {}).values())
    return [v.text], []


def lint_texts(variants: list[Variant]) -> list[TextFinding]:
    found = giveaways(variants)
    for v in variants:
        claims, explanations = item_texts(v)
        for rule, what in (
            ("giveaway", title_answers(v)),
            ("contradiction", contradictions(v, explanations) if v.question.kind in (CHOICE, TRUEFALSE) else ""),
            # a claim's phrase in a calculation's stem is its setting ("a hidden state of size H and
            # outputs"), not a statement to judge
            ("hedge", unhedged(claims, phrases=v.question.kind in (CHOICE, TRUEFALSE))),
        ):
            if what:
                found.append(TextFinding(v.number, v.id, rule, what))
    return found
