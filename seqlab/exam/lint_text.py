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

import re
from dataclasses import dataclass

from .lint_hedges import HEDGES, NOTES, hedged_claims, hedges_from_notes, unhedged, write_hedges
from .lint_words import _STOP, SYNONYMS, content_words, stem
from .model import CHOICE, TRUEFALSE, Variant

# the hedge rule's names, where callers have always found them
__all__ = [
    "HEDGES",
    "NOTES",
    "SYNONYMS",
    "TextFinding",
    "content_words",
    "contradictions",
    "giveaways",
    "hedged_claims",
    "hedges_from_notes",
    "item_texts",
    "lint_texts",
    "mistake_giveaways",
    "stated_keys",
    "stem",
    "title_answers",
    "write_hedges",
]

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


def mistake_giveaways(variants: list[Variant]) -> list[TextFinding]:
    """Another item's statement, option or stem stating the fact a question's named mistake
    tests: most of the words of the mistake's correction (its feedback), four or more and two of
    them not the paper's generic words, are in one text of the other item. The audit's pair: "the
    parameter count does not depend on the sequence length" in a true/false statement, on the
    paper whose parameter count question gives T for the mistake of multiplying by it."""
    out = []
    generic = generic_words(variants)
    for b in variants:
        for name, m in sorted((b.mistakes or {}).items()):
            fact = content_words(m.feedback)
            for a in variants:
                if a is b or a.question.kind not in (CHOICE, TRUEFALSE):
                    continue  # a calculation's stem sets a scene; a statement or option claims
                claims, _ = item_texts(a)
                texts = claims + ([a.params["stem"]] if a.question.kind == CHOICE else [])
                for text in texts:
                    said = fact & content_words(text)
                    # 60%, as for a key, and 4 words: the audit's statement carries 6 of the
                    # correction's 8; a text on the same topic shares 2 or 3 ("add", "residual")
                    # (two of them not the paper's generic words: "step", "parameter" are everywhere)
                    if len(said) >= 4 and len(said) / len(fact) >= 0.6 and len(said - generic) >= 2:
                        what = f"states what question {b.number}'s mistake {name!r} tests ({', '.join(sorted(said))})"
                        out.append(TextFinding(a.number, a.id, "giveaway", what))
                        break
    return out


def stated_keys(variants: list[Variant]) -> list[TextFinding]:
    """Another question's rendered text (stem, TeX included) matching a way the bank declares
    that states this item's key (``concepts.STATED_BY``): a calculation that prints
    "softmax_j(q_i^T k_j / sqrt(d_k))" and "y_i = sum_j alpha_ij v_j" answers the item asking what
    attention compares and sums, though it shares none of the key's words."""
    from .bank.concepts import STATED_BY

    out = []
    for b in variants:
        for pattern in STATED_BY.get(b.id, ()):
            for a in variants:
                # a calculation's stem: a concept item's options are judged by ``giveaways``
                calculation = a.question.kind not in (CHOICE, TRUEFALSE)
                found = pattern.search(a.text) if calculation else None
                if found:
                    what = f"states question {b.number}'s key: {found.group(0)[:50]!r}"
                    out.append(TextFinding(a.number, a.id, "giveaway", what))
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
    found = giveaways(variants) + mistake_giveaways(variants) + stated_keys(variants)
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
