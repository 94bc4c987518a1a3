"""The character-level lab's text: a small probabilistic grammar of sentences, written for this
course, and its characters as token ids.

Nothing is downloaded: every text is drawn from the grammar with a seed (``random.Random``,
whose sequence is fixed across Python versions for ``random()``, so a seed gives the same text
everywhere). The grammar has what a character model can learn in a few seconds of CPU: a
closed set of words (spelling), agreement of "a"/"an" with the next word and of the verb with
a plural subject (a dependency a few characters back), clauses joined by "and" and "that", and
a full stop before a capital-free new sentence. A unigram model of the characters is the
trivial baseline it must beat.
"""

from __future__ import annotations

import random

import torch

ALPHABET = " .abcdefghijklmnopqrstuvwxyz"  # every character a sentence can contain; id = index
V = len(ALPHABET)

_DETERMINERS = (("the", 4), ("a", 3), ("every", 1), ("one", 1))
_PLURAL_DETERMINERS = (("the", 3), ("some", 2), ("many", 1), ("two", 1))
_ADJECTIVES = ("small", "long", "hidden", "gated", "quiet", "old", "early", "recurrent", "open")
_NOUNS = ("cell", "gate", "model", "state", "token", "student", "river", "signal", "word", "layer")
_VERBS = ("remember", "forget", "read", "write", "carry", "learn", "pass", "follow", "keep")
_THIRD_PERSON = {"carry": "carries", "pass": "passes"}
_ADVERBS = ("slowly", "again", "quickly", "well", "often")


def _pick(rng: random.Random, weighted) -> str:
    words, weights = zip(*weighted, strict=True)
    return rng.choices(words, weights=weights)[0]


def _noun_phrase(rng: random.Random, plural: bool) -> str:
    words = [_pick(rng, _PLURAL_DETERMINERS if plural else _DETERMINERS)]
    if rng.random() < 0.5:
        words.append(rng.choice(_ADJECTIVES))
    noun = rng.choice(_NOUNS)
    words.append(noun + "s" if plural else noun)
    if words[0] == "a" and words[1][0] in "aeiou":
        words[0] = "an"
    return " ".join(words)


def _verb_phrase(rng: random.Random, plural: bool, depth: int) -> str:
    verb = rng.choice(_VERBS)
    words = [verb if plural else _THIRD_PERSON.get(verb, verb + "s")]
    roll = rng.random()
    if roll < 0.6:
        words.append(_noun_phrase(rng, rng.random() < 0.3))
    elif roll < 0.85:
        words.append(rng.choice(_ADVERBS))
    if depth < 2 and rng.random() < 0.25:
        words += ["and", _verb_phrase(rng, plural, depth + 1)]
    return " ".join(words)


def sentence(rng: random.Random) -> str:
    plural = rng.random() < 0.3
    subject = _noun_phrase(rng, plural)
    if rng.random() < 0.2:
        subject += " that " + _verb_phrase(rng, plural, 2)
    return f"{subject} {_verb_phrase(rng, plural, 0)}."


def text(seed: int, n_chars: int) -> str:
    """At least ``n_chars`` characters of sentences from ``seed``, cut to exactly ``n_chars``."""
    rng = random.Random(seed)
    parts, length = [], -1  # n sentences joined by n - 1 spaces
    while length < n_chars:
        parts.append(sentence(rng))
        length += len(parts[-1]) + 1
    return " ".join(parts)[:n_chars]


def encode(chars: str, permutation: torch.Tensor | None = None) -> torch.Tensor:
    """Characters -> token ids ``(N,)`` int64; ``permutation[i]`` is the id of ``ALPHABET[i]``
    (a task instance: the same text under another permutation is another task)."""
    ids = torch.tensor([ALPHABET.index(c) for c in chars], dtype=torch.int64)
    return ids if permutation is None else permutation[ids]


def decode(tokens, permutation: torch.Tensor | None = None) -> str:
    """Token ids back to characters (the inverse of ``encode`` under the same permutation)."""
    ids = torch.as_tensor(tokens, dtype=torch.int64).reshape(-1)
    if permutation is not None:
        ids = torch.argsort(permutation)[ids]
    return "".join(ALPHABET[int(i)] for i in ids)
