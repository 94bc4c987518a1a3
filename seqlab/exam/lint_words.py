"""The words of the bank lint's text rules: which words of a text carry a claim, stemmed."""

from __future__ import annotations

import re

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
