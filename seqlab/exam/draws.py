"""One question's draw for one student: parameters from (exam seed, student id, question id).

Everything here is a pure function of its inputs, so drawing the same question for the same
student gives the same numbers on any machine: the generator is seeded by ``seqlab.seeds``
(never Python's salted ``hash``), parameters are plain decimals, and answers come from float64
reference code. It also holds how a key writes an answer, which grading and rendering share.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

import sympy

from ..errors import SeqlabError
from .lint_draws import degenerate
from .model import NUMERIC, REGISTRY, SYMBOLIC, Question, Tolerance, fair_draw, rng_for
from .three_figures import THREE_FIGURE_SHARE, hand_key, promises_three_figures, three_figure_miss

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


class StudentIdError(SeqlabError, ValueError):
    """A student id that cannot name a paper; the message quotes it."""


def check_student_id(student: object) -> str:
    if isinstance(student, int) and not isinstance(student, bool):
        student = str(student)
    if not isinstance(student, str) or not STUDENT_ID.fullmatch(student):
        raise StudentIdError(f"bad student id {str(student)[:80]!r}: use 1-64 letters, digits, '_', '.', '@', '-'")
    return student


# A valid draw is the rule, not luck: every generator's rules keep enough draws (opt.clip_vector
# keeps about 6 in 10; the bank's worst, rnn.bptt_param_grads, about 1 in 20 since degenerate
# draws and loose tolerances are refused too, so that 1000 tries all fail with odds under 1 in
# 10^22), so 1000 tries all failing means a rule is broken. A valid draw takes 20 tries at worst
# on average, a few milliseconds.
MAX_DRAWS = 1000
# not a valid student id (see STUDENT_ID), so the form never shares a generator with a student
FORM_KEY = "*form*"


class DrawError(SeqlabError, RuntimeError):
    """A generator found no valid draw: its validity rule cannot be met (the question's author
    fixes the rule; the message names the question)."""


def exam_form(q: Question, exam_seed, form: str | None = None) -> str | None:
    """The form every student of this exam gets: the exam file's choice, else one drawn from
    the exam seed alone (so the exam, not the student, decides how hard the question is)."""
    if not q.forms:
        return None
    if form is not None:
        return form
    return _seeded_form(q.id, exam_seed, q.forms)


@lru_cache(maxsize=4096)
def _seeded_form(question_id: str, exam_seed, forms: tuple[str, ...]) -> str:
    return rng_for(exam_seed, FORM_KEY, question_id).choice(forms)


def draw(
    q: Question, exam_seed, student: str, *, form: str | None = None, tolerance: Tolerance | None = None
) -> tuple[dict, object, dict]:
    """(params, answer, named mistakes) of the first valid draw (``model.fair_draw``) that is not
    degenerate (``lint_draws.degenerate``)."""
    rng = rng_for(exam_seed, student, q.id)
    form = exam_form(q, exam_seed, form)
    for _ in range(MAX_DRAWS):
        params = q.sample(rng, form) if q.forms else q.sample(rng)
        if q.kind == SYMBOLIC:
            answer, mistakes, fair = _symbolic_draw(q.id, json.dumps(params, sort_keys=True))
        else:
            # a question whose worked solution is written out (``three_figures.hand_key``) is judged
            # on its hand key, microseconds where the reference costs milliseconds a try, and on
            # 3-figure work last (its rounding paths are the dearest check); the reference's key is
            # computed once, for the draw that passes (and judged again below)
            hand = hand_key(q, params)
            answer = hand if hand is not None else q.answer(params)
            # a degenerate draw (a round key, a zero weight, a branch that skips the work) is drawn
            # again like an unfair one: every student's draw asks for the same work (``lint_draws``);
            # checked first, as it is cheap and the named mistakes are not
            if degenerate(q, params, answer) or (hand is None and not three_figures_pass(q, params, answer)):
                continue
            mistakes = q.mistakes(params) if q.mistakes else {}
            fair = fair_draw(q, params, answer, tolerance, mistakes)
            if fair and hand is not None:
                fair = three_figures_pass(q, params, hand)
                if fair:
                    answer = q.answer(params)
                    fair = fair_draw(q, params, answer, tolerance, mistakes)
        if fair and not degenerate(q, params, answer):
            return params, answer, mistakes
    raise DrawError(
        f"{q.id}: no valid draw in {MAX_DRAWS} tries for student {student!r}: its validity rule cannot be met"
    )


def three_figures_pass(q: Question, params: dict, answer) -> bool:
    """A question that promises to accept 3-figure work: the simulated student stays within
    ``THREE_FIGURE_SHARE`` of its relative tolerance on this draw (``three_figures``)."""
    return not promises_three_figures(q) or three_figure_miss(q, params, answer) <= THREE_FIGURE_SHARE


@lru_cache(maxsize=4096)
def _symbolic_draw(question_id: str, params_json: str) -> tuple[object, dict, bool]:
    """A formula question's parameters take a handful of values (a form, a step count): its key
    and validity are computed once per value, not once per student (sympy is the slow part)."""
    q = REGISTRY[question_id]
    params = json.loads(params_json)
    answer = q.answer(params)
    mistakes = q.mistakes(params) if q.mistakes else {}
    return answer, mistakes, fair_draw(q, params, answer, mistakes=mistakes)


def sample_params(q: Question, exam_seed, student: str, form: str | None = None) -> dict:
    return draw(q, exam_seed, student, form=form)[0]


def format_number(x: float) -> str:
    """How a key writes a number: integers as integers, others with 10 significant digits."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return format(x, ".10g")


@lru_cache(maxsize=4096)
def _formula_text(expr) -> str:
    """sympy's printer is slow and a formula key repeats across students: print each once."""
    return sympy.sstr(expr)


def format_answer(kind: str, answer) -> str:
    if kind == NUMERIC:
        return (
            ", ".join(format_number(v) for v in answer) if isinstance(answer, (list, tuple)) else format_number(answer)
        )
    if kind == SYMBOLIC:
        return _formula_text(answer)
    return str(answer)


@contextmanager
def one_thread() -> Iterator[None]:
    """The reference calls work on tensors of a few numbers: thread pools only add overhead
    (tens of milliseconds per call on a loaded 2-core machine), so use one thread meanwhile."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
