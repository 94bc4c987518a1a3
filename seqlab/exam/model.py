"""Questions, their registry, and the variant one student gets.

A question is a small generator: a ``sample(rng) -> params`` drawing the parameters (plain
data: numbers, lists, strings), an ``answer(params)`` computing the answer from them by code
(calling the reference solutions where one applies), and a jinja2 template for the text.
Generators are declared in the course's ``exams/questions/<topic>.py`` with the bank's vocabulary
(``seqlab/exam/bank/declare.py``: ``@numeric``/``@formula`` over one line per fact), loaded by
``bank.load_bank`` and registered here.

Kinds and their answers:

- ``numeric``    a float, or a list of floats (vectors, shapes); compared with a tolerance;
- ``symbolic``   a sympy expression over the question's symbols; compared by equivalence;
- ``choice``     a letter; ``truefalse``: "true"/"false".

Fairness by construction: every draw must be *valid* before a student sees it. The general rule
(``fair_draw``) holds for every numeric and symbolic question: each of the question's named
mistakes is distinguishable from the key (for numbers, more than ``MISTAKE_MARGIN`` tolerances
away in some entry, and the mistakes apart from each other too; for formulas, different at
sample points), and no nonzero key entry is so small that the answer 0 would be accepted; a
question declared with ``own_entries`` also has no key entry that 0 or a printed number would
match (so per-entry credit on it pays for every entry, see ``marking.earning_entries``). A
question adds its own rule with ``valid=`` (documented next to its generator). A draw that
breaks either rule is thrown away and the same generator draws again, so the variant stays a
pure function of (exam seed, student id). A question with harder and easier *forms* lists them
in ``forms``; the form is fixed per exam (drawn from the exam seed alone, or named in the exam
file), never per student.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..seeds import derived_rng
from ..tolerance import Tolerance
from . import sections as _sections
from .errors import QuestionError
from .safeexpr import Sym

NUMERIC, SYMBOLIC, CHOICE, TRUEFALSE = "numeric", "symbolic", "choice", "truefalse"
KINDS = (NUMERIC, SYMBOLIC, CHOICE, TRUEFALSE)


EXACT = Tolerance(0.0, 0.0)
FOUR_DIGITS = Tolerance(1e-3, 1e-4)


# How a partial-credit rule names a mistake to students (exam text, notebook, key). It says what
# was done wrong, not how to do it right; names not listed are shown with spaces for '_'.
MISTAKE_WORDS = {
    "no_bias_correction": "skipping the bias correction",
    "adagrad_sum": "summing squared gradients as AdaGrad does",
    "no_bias": "leaving out the bias vectors",
    "no_tanh": "leaving out the tanh derivative",
    "no_deriv": "leaving out the tanh derivatives",
    "one_bias": "counting one bias vector instead of two",
    "notes_form": "using the notes' GRU form (r applied before the matrix product)",
    "no_scaling": "leaving out the 1/sqrt(d) scaling",
    "std": "giving the standard deviation instead of the variance",
    "one_head": "counting one head",
    "no_norms": "leaving out the LayerNorm parameters",
    "one_layer": "counting one layer",
    "unbiased": "dividing by n - 1 in the variance",
}


def mistake_words(name: str) -> str:
    return MISTAKE_WORDS.get(name, name.replace("_", " "))


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: the value (or expression) it gives and what it looks like."""

    value: Any
    feedback: str


@dataclass(frozen=True)
class Question:
    """One generator of the bank (module doc): its draw, its answer and its text template first,
    then how it is shown, where it sits in the course, and how an answer to it is judged."""

    id: str
    kind: str
    sample: Callable[..., dict]  # (rng), or (rng, form) for a question with forms
    answer: Callable[[dict], Any]
    template: str
    title: str
    sections: tuple[str, ...]
    tolerance: Tolerance | None = None
    symbols: Callable[[dict], tuple[Sym, ...]] | None = None
    mistakes: Callable[[dict], dict[str, Mistake]] | None = None
    # for tests and the key: other correct forms (symbolic) of the answer
    equivalents: Callable[[dict], list[str]] | None = None
    exercises: tuple[str, ...] = ()
    topic: str = ""
    answer_hint: str = ""  # how to write the answer, shown under the question
    # the question's own validity rule on top of ``fair_draw``'s general one (see the module doc)
    valid: Callable[[dict], bool] | None = None
    # forms of unequal difficulty: ``sample(rng, form)`` draws one; every student of an exam gets the same
    forms: tuple[str, ...] = ()
    # no key entry is 0 or a number the question prints: per-entry credit then pays every entry
    own_entries: bool = False
    # the text template written in the declaration (``declare.text``); "" = the ``template`` file
    text: str = ""
    # the draws that skip part of the asked work (``declare.skips_work``): (why, rule(params, entries))
    skips_work: tuple[str, Callable[[dict, Any], bool]] | None = None
    # the unit an answer may carry where the hint names none (``declare.unit``: "nats")
    unit: str = ""
    # notes' sections examined as steps of the work, each by a named mistake (``declare.graded_steps``)
    # (pairs, not a dict: a frozen Question stays hashable)
    graded_steps: tuple[tuple[str, str], ...] = ()
    # the worked solution's (operations, values written) for a variant (``declare.work``, ``timing``)
    work: Callable[[Variant], tuple[int, int]] | None = None
    # the worked solution in plain Python with a rounding hook (``declare.by_hand``): (params, r)
    by_hand: Callable[..., Any] | None = None

    def syms(self, params: dict) -> tuple[Sym, ...]:
        return tuple(self.symbols(params)) if self.symbols else ()


REGISTRY: dict[str, Question] = {}


def register(q: Question) -> Question:
    if q.id in REGISTRY:
        raise QuestionError(f"duplicate question id {q.id!r}")
    if q.kind not in KINDS:
        raise QuestionError(f"{q.id}: unknown kind {q.kind!r}")
    if not q.sections:
        raise QuestionError(f"{q.id}: no notes section tag")
    for tag in q.sections:
        _sections.validate_tag(tag)
    if q.kind == NUMERIC and q.tolerance is None:
        raise QuestionError(f"{q.id}: a numeric question states its tolerance")
    if q.kind == SYMBOLIC and q.symbols is None:
        raise QuestionError(f"{q.id}: a symbolic question declares its symbols")
    REGISTRY[q.id] = q
    return q


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


def _entries(value) -> list[float]:
    return [float(x) for x in value] if isinstance(value, (list, tuple)) else [float(value)]


# A named mistake must miss the key by more than MISTAKE_MARGIN tolerances in some entry, not just
# by one: a student who makes the mistake and rounds to four significant digits (an error of up to
# 5e-4 relative, half the usual 1e-3 tolerance) must still not be accepted, nor should a key
# computed with a slightly different but correct float path fall next to a mistake.
MISTAKE_MARGIN = 2.0


def _apart(a: list[float], b: list[float], tol: Tolerance) -> bool:
    """``a`` misses ``b`` by more than MISTAKE_MARGIN tolerances (of ``b``) in some entry; lists of
    different lengths are apart. With exact tolerances this is plain inequality."""
    return len(a) != len(b) or any(abs(x - y) > MISTAKE_MARGIN * (tol.atol + tol.rtol * abs(y)) for x, y in zip(a, b))


def _entrywise_apart(a: list[float], b: list[float], tol: Tolerance) -> bool:
    """Each entry of ``a`` equals ``b``'s to float precision or misses it by MISTAKE_MARGIN tolerances."""
    if len(a) != len(b):
        return True
    return all(
        abs(x - y) <= 1e-9 * max(1.0, abs(y)) or abs(x - y) > MISTAKE_MARGIN * (tol.atol + tol.rtol * abs(y))
        for x, y in zip(a, b)
    )


def fair_draw(
    q: Question,
    params: dict,
    answer: Any,
    tolerance: Tolerance | None = None,
    mistakes: dict[str, Mistake] | None = None,
) -> bool:
    """The general validity rule (module doc) and the question's own ``valid`` rule.
    ``mistakes``: the question's named mistakes for these params, when already computed."""
    # the question's own rule first: it is cheap, and a draw it refuses needs no mistakes computed
    if q.valid is not None and not q.valid(params):
        return False
    if mistakes is None:
        mistakes = q.mistakes(params) if q.mistakes else {}
    if q.kind == NUMERIC:
        tol = tolerance or q.tolerance
        assert tol is not None  # numeric questions state their tolerance (model.register refuses one without)
        expected = _entries(answer)
        # an entry that is exactly 0 is the key (a masked weight); a tiny nonzero one would accept 0
        if any(e != 0.0 and tol.accepts(0.0, e) for e in expected):
            return False
        # a question whose entries are its own: a draw where one could be copied is drawn again
        given = [0.0, *given_numbers(params)]
        if q.own_entries and any(tol.accepts(x, e) for e in expected for x in given):
            return False
        values = [_entries(m.value) for m in mistakes.values()]
        if not all(_apart(v, expected, tol) for v in values):
            return False
        # and in each entry a mistake is either exact (the mistake does not touch it: h_t for
        # h_{t-1} leaves dL/du right) or apart: never an entry it gets wrong within the tolerance,
        # which per-entry credit would pay on one draw and not on another (the third audit)
        if not all(_entrywise_apart(v, expected, tol) for v in values):
            return False
        # the mistakes also differ from each other, so the feedback (and item analysis) names the
        # one the student made, not the first that happens to coincide with it
        return all(_apart(a, b, tol) and _apart(b, a, tol) for i, a in enumerate(values) for b in values[i + 1 :])
    if q.kind == SYMBOLIC and q.mistakes:
        from .safeexpr import mistake_differs

        spec = {s.name: s for s in q.syms(params)}
        return all(mistake_differs(answer, m.value, spec) for m in mistakes.values())
    return True


def rng_for(exam_seed: int | str, student: str, question_id: str) -> random.Random:
    """The generator for one (exam, student, question): ``seqlab.seeds``, never Python's ``hash``."""
    return derived_rng(exam_seed, student, question_id)


@dataclass
class Variant:
    """One question as one student sees it."""

    question: Question
    number: int
    points: float
    params: dict
    answer: Any  # float | list[float] | sympy.Expr | str
    key: str  # the answer written as a student would write it
    partial: dict = field(default_factory=dict)
    tolerance: Tolerance | None = None
    text: str = ""  # rendered question text (Markdown)
    solution: str = ""  # rendered worked solution (Markdown), for the key
    form: str | None = None  # the form of a question that has several (one per exam)
    mistakes: dict = field(default_factory=dict)  # the named mistakes for these params, computed once

    @property
    def id(self) -> str:
        return self.question.id

    @property
    def answer_id(self) -> str:
        """The id a student sees and answers under: its number only ("q33"). A bank id names a
        concept ("concept.bottleneck" over the option about the bottleneck) and gives it away;
        the instructor's key keeps the bank id beside it."""
        return f"q{self.number}"
