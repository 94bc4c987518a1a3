"""Similar code in a class, per function: a lead for a human to check, never a penalty.

``seqlab grade-all SUBS --out DIR --similarity`` compares every pair of submissions, one
contract function at a time, and lists in the class report every pair from ``SHOWN_FROM`` on:
a summary per pair over all functions ("alice and bob: 30 of 30 functions"), every pair per
function with the shared code highlighted side by side (folded), and the submissions that copy
the reference solutions (similar to ``solutions/`` in most functions, or with solution markers
left in).

How (MOSS's method: Schleimer, Wilkerson, Aiken, "Winnowing", SIGMOD 2003):

* Each function's source is read from ``exercises/<module>.py`` with ``ast`` and ``tokenize``
  (student code is only parsed, never run). Its docstring, comments and layout tokens are
  dropped, names become ``V`` unless they follow a dot (so ``torch.softmax`` stays
  ``V.softmax``: renaming a variable or an import changes nothing, calling another operation
  does), strings become ``S``, numbers are compared by value, and a trailing comma before a
  closing bracket is dropped (what formatters add). Renaming and reformatting leave the
  token sequence unchanged.
* The program is read as it runs (``seqlab.fingerprints.inert_ranges``): a function defined
  under a constant test (the whole file under ``if True:``) is found like one at the top level;
  inside a function, a constant test's ``if``/``while`` keeps only its live branch, and ``pass``
  and statements that are a constant alone (docstrings anywhere, ``...``) are dropped; lines are
  counted as Python counts them (a comment of U+2028 characters moves nothing). Padding or
  wrapping a copy so leaves its tokens unchanged (``tests/batch/test_similarity_disguises.py``).
* Every run of ``KGRAM_TOKENS`` tokens is hashed (blake2b, so the fingerprints are the same on
  every run and machine, unlike Python's salted ``hash``), and winnowing keeps the minimum of
  every window of ``WINDOW`` hashes.
* The stub's own k-grams (signature, ``raise NotImplementedError()``) are removed first, so
  code that every student was handed never makes two students similar.
* A pair's score is the share of the smaller fingerprint set found in the other one (so
  padding a copy with extra code does not hide it).

copydetect (PyPI) implements the same idea per file; it is not used because it hashes with
Python's per-process salted ``hash()`` (the selected fingerprints, and so the scores, change from
run to run), it compares whole files rather than functions, and it pulls in matplotlib.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

from . import contract
from .fingerprints import (
    KGRAM_TOKENS,
    MAX_SOURCE_BYTES,
    WINDOW,
    FunctionCode,
    _kgram_hashes,
    read_functions,
    stub_kgrams,
    winnow,
)
from .paths import EXERCISES_DIR

# The score from which a pair is listed. Measured on the reference solutions against the
# independent correct implementations of tests/mutants (ALTERNATIVES): those score at most 0.28
# (adam, whose few lines leave little room to differ); a renamed and reformatted copy scores 1.0.
# Every pair from this score on is listed (a cap per function hid identical pairs); only the
# side-by-side views are bounded, SIDE_BY_SIDE pairs a function, most similar first, so a class
# of copies does not make a page of megabytes.
SHOWN_FROM = 0.5
SIDE_BY_SIDE = 10
# The reference solutions are compared as one more submission: a submission similar to them in
# at least this share of the contract's functions is flagged as a copy of the reference, as is
# any with solution markers left in. Measured on six complete honest submissions written blind
# (terse, typed, oop, ...): each is similar to the reference in 1 to 10 of the 30 functions (the
# short ones have few ways to be written); a copy is similar in all it holds. The share is of
# all functions, not of those written: an honest student who wrote only a few short functions
# would otherwise be flagged.
REFERENCE = "reference (solutions/)"
REFERENCE_SHARE = 0.5
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def _shared_segments(code: FunctionCode, shared: set[int]) -> list[tuple[str, bool]]:
    """The function's source cut into (text, shared?) pieces for the side-by-side view."""
    covered = [False] * len(code.tokens)
    for h in shared:
        for position in code.fingerprints[h]:
            for i in range(position, min(position + KGRAM_TOKENS, len(covered))):
                covered[i] = True
    # Shared tokens are marked line by line: a mark never spans a line break, so the docstring
    # or a comment between two shared tokens is never shown as shared.
    marks: list[list[int]] = []
    for i, hit in enumerate(covered):
        if not hit:
            continue
        start, end = code.spans[i]
        if marks and marks[-1][2] == i - 1 and "\n" not in code.source[marks[-1][1] : start]:
            marks[-1][1:] = [end, i]
        else:
            marks.append([start, end, i])
    segments, cursor = [], 0
    for start, end, _ in marks:
        if start > cursor:
            segments.append((code.source[cursor:start], False))
        segments.append((code.source[start:end], True))
        cursor = end
    if cursor < len(code.source):
        segments.append((code.source[cursor:], False))
    return segments


def _markers(root: Path) -> list[str]:
    """The topic files of a submission that still hold a solution marker."""
    found = []
    for module in dict.fromkeys(q.split(".")[0] for q in contract.FUNCTIONS):
        path = Path(root) / "exercises" / f"{module}.py"
        try:
            if path.is_file() and path.stat().st_size <= MAX_SOURCE_BYTES:
                text = path.read_bytes().decode("utf-8", errors="replace")
                if any(marker in text for marker in SOLUTION_MARKERS):
                    found.append(f"{module}.py")
        except OSError:
            continue
    return found


def _pair_view(by_name: dict[str, FunctionCode], score, count, a, b, segments: bool) -> dict:
    shared = set(by_name[a].fingerprints) & set(by_name[b].fingerprints)
    return {
        "a": a,
        "b": b,
        "score": score,
        "shared": count,
        "a_fingerprints": len(by_name[a].fingerprints),
        "b_fingerprints": len(by_name[b].fingerprints),
        "a_segments": _shared_segments(by_name[a], shared) if segments else None,
        "b_segments": _shared_segments(by_name[b], shared) if segments else None,
    }


def compare_class(
    submissions: dict[str, Path | None],
    *,
    stubs: Path = EXERCISES_DIR,
    shown_from: float = SHOWN_FROM,
    reference: Path | None = None,
) -> dict:
    """Every pair of submissions similar in a contract function, per function and per pair, and
    the copies of the reference. `submissions`: name -> folder holding `exercises/` (None when
    there is none: such a submission is simply not compared). `reference`: the folder of the
    reference solutions (the course's solutions/ by default)."""
    from .paths import SOLUTIONS_DIR

    excluded = stub_kgrams(stubs)
    codes: dict[str, dict[str, FunctionCode]] = defaultdict(dict)  # function -> name -> code
    problems = []
    roots = {name: root for name, root in sorted(submissions.items()) if root is not None}
    reference_dir = Path(reference) if reference is not None else SOLUTIONS_DIR
    for name, root, exercises in [(n, r, Path(r) / "exercises") for n, r in roots.items()] + [
        (REFERENCE, None, reference_dir)
    ]:
        for module in dict.fromkeys(q.split(".")[0] for q in contract.FUNCTIONS):
            functions, problem = read_functions(exercises, module)
            if problem and root is not None:
                problems.append(f"{name}: {problem}")
            for qualname, code in functions.items():
                fingerprints = winnow(_kgram_hashes(code.tokens))
                code.fingerprints = {h: p for h, p in fingerprints.items() if h not in excluded.get(qualname, ())}
                if code.fingerprints:  # a stub left as handed out has nothing of its own
                    codes[qualname][name] = code
    report = []
    per_pair: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for qualname in contract.FUNCTIONS:
        by_name = codes.get(qualname, {})
        # Every pair, set against set: the cost depends only on the class size (300 students are
        # about 45,000 pairs a function, seconds in all), never on how much code they share.
        sets = {name: frozenset(code.fingerprints) for name, code in by_name.items()}
        pairs = []
        for a, b in itertools.combinations(sorted(sets), 2):
            count = len(sets[a] & sets[b])
            if not count:
                continue
            score = count / min(len(sets[a]), len(sets[b]))
            if score >= shown_from:
                pairs.append((score, count, a, b))
                per_pair[(a, b)].append((qualname, score))
        pairs.sort(key=lambda p: (-p[0], -p[1], p[2], p[3]))
        students = [p for p in pairs if REFERENCE not in (p[2], p[3])]
        listed = [_pair_view(by_name, *p, segments=i < SIDE_BY_SIDE) for i, p in enumerate(students)]
        compared = len([n for n in by_name if n != REFERENCE])
        report.append({"name": qualname, "compared": compared, "pairs": listed})
    written = {name: {q for q, by in codes.items() if name in by} for name in [*roots, REFERENCE]}
    summary: list[dict[str, Any]] = []
    for (a, b), scored in per_pair.items():
        if REFERENCE in (a, b):
            continue
        both = len(written[a] & written[b])
        summary.append({"a": a, "b": b, "functions": [q for q, _ in scored], "of": both,
                        "mean": sum(sc for _, sc in scored) / len(scored)})  # fmt: skip
    summary.sort(key=lambda p: (-len(p["functions"]), -p["mean"], p["a"], p["b"]))
    copies = []
    for name, root in roots.items():
        similar = [q for (a, b), fs in per_pair.items() if REFERENCE in (a, b) and name in (a, b) for q, _ in fs]
        markers = _markers(root)
        if markers or len(similar) >= REFERENCE_SHARE * len(contract.FUNCTIONS):
            copies.append({"name": name, "functions": len(similar), "of": len(contract.FUNCTIONS), "markers": markers})
    return {
        "functions": report,
        "pairs": summary,
        "copies": copies,
        "problems": problems,
        "parameters": {
            "kgram_tokens": KGRAM_TOKENS,
            "window": WINDOW,
            "shown_from": shown_from,
            "side_by_side": SIDE_BY_SIDE,
            "reference_share": REFERENCE_SHARE,
        },
    }
