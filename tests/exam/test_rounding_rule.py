"""The rounding rule on the paper holds on every draw: honest 3-significant-figure work scores.

``rnn.bptt_param_grads`` says in its text that intermediate results rounded to 3 significant
figures are accepted. Here its worked solution (the steps the key's solution block prints) is
computed with every intermediate a student writes down rounded to 3 significant figures: to
nearest, and along 20 more rounding paths where each intermediate lands anywhere within half a
unit of its 3rd figure (another order of operations, rounding up where another rounds down). For
1000 students of ``exams/final.yaml`` every path is accepted by the question's declared
tolerance, and the same work under the paper-wide 0.1% tolerance fails on most draws (the audit's
unequal papers: one student lost 3 of 3 entries, another none).
"""

from __future__ import annotations

import math
import random

import pytest

from seqlab.exam.bank import load_bank
from seqlab.exam.draws import draw
from seqlab.exam.examfile import load_exam
from seqlab.exam.marking import grade_variant
from seqlab.exam.model import FOUR_DIGITS, REGISTRY, Variant
from seqlab.paths import DEFAULT_EXAM

load_bank()
QUESTION = REGISTRY["rnn.bptt_param_grads"]
SEED = load_exam(DEFAULT_EXAM).seed
PATHS = 20  # rounding paths beside round-to-nearest, per draw


def three_figures(x: float) -> float:
    return float(f"{x:.3g}") if x else 0.0


def any_three_figure_path(rng: random.Random):
    """An intermediate as another honest order of work may give it: within half a unit of its 3rd figure."""

    def rounded(x: float) -> float:
        if not x:
            return 0.0
        half = 0.5 * 10 ** (math.floor(math.log10(abs(x))) - 2)
        return x + rng.uniform(-half, half)

    return rounded


def worked_solution(p: dict, r) -> list[float]:
    """dL/du, dL/dw, dL/db by the solution's steps, each written-down value passed through ``r``."""
    h = [p["h0"]]
    for x in p["x"]:
        h.append(r(math.tanh(r(r(p["u"] * x) + r(p["w"] * h[-1]) + p["b"]))))
    dl_dh = []
    for step in (1, 2):
        logits = [r(p["V"][k] * h[step] + p["c"][k]) for k in (0, 1)]
        exps = [r(math.exp(z)) for z in logits]
        total = r(sum(exps))
        probs = [r(e / total) for e in exps]
        probs[p["y"][step - 1]] = r(probs[p["y"][step - 1]] - 1)
        dl_dh.append(r(r(p["V"][0] * probs[0]) + r(p["V"][1] * probs[1])))
    deriv = [r(1 - r(h[s] ** 2)) for s in (1, 2)]
    delta2 = r(dl_dh[1] * deriv[1])
    delta1 = r(r(dl_dh[0] + r(p["w"] * delta2)) * deriv[0])
    grads = [r(delta1 * p["x"][0]) + r(delta2 * p["x"][1]), r(delta1 * h[0]) + r(delta2 * h[1]), delta1 + delta2]
    return [three_figures(g) for g in grads]  # the final answer, to 3 figures as well


def _worst(students: list[str]) -> tuple[float, int]:
    """(worst miss in units of the declared tolerance over every path, draws the 0.1% one fails)."""
    tol = QUESTION.tolerance
    assert tol is not None
    rng = random.Random(0)
    worst, strict_fails = 0.0, 0
    for student in students:
        p, key, _ = draw(QUESTION, SEED, student)
        paths = [worked_solution(p, three_figures)] + [
            worked_solution(p, any_three_figure_path(rng)) for _ in range(PATHS)
        ]
        for got in paths:
            worst = max(worst, max(abs(g - k) / (tol.atol + tol.rtol * abs(k)) for g, k in zip(got, key)))
        strict_fails += not all(FOUR_DIGITS.accepts(g, k) for g, k in zip(paths[0], key))
    return worst, strict_fails


def test_the_worked_solution_is_the_key_in_full_precision():
    for i in range(20):
        p, key, _ = draw(QUESTION, SEED, f"u{i:05d}")
        exact = worked_solution(p, lambda x: x)
        assert all(abs(a - k) <= 5e-3 * abs(k) for a, k in zip(exact, key))  # only the final 3-figure rounding


def test_three_figure_work_scores_full_marks_on_a_paper():
    p, key, mistakes = draw(QUESTION, SEED, "u00007")
    variant = Variant(QUESTION, 1, 5.0, p, key, "", {"per_element": True}, QUESTION.tolerance, mistakes=mistakes)
    answer = ", ".join(f"{x:.3g}" for x in worked_solution(p, three_figures))
    assert grade_variant(variant, answer).verdict == "correct", answer


def test_three_figure_work_is_accepted_on_the_first_draws():
    worst, _ = _worst([f"u{i:05d}" for i in range(15)])
    assert worst <= 1.0


@pytest.mark.bank
def test_three_figure_work_is_accepted_on_1000_draws_and_failed_by_the_strict_tolerance():
    worst, strict_fails = _worst([f"u{i:05d}" for i in range(1000)])
    print(f"worst miss: {worst:.3f} of the tolerance; 0.1% tolerance fails {strict_fails} of 1000 draws")
    # measured 0.86 of the tolerance when it was declared: every path of every draw is accepted
    assert worst <= 1.0
    assert strict_fails > 500  # why the question declares its own tolerance


def _paper_rule_holds(students: list[str]) -> list[str]:
    """Where the paper-wide rule (full precision, the final answer to 4 significant figures,
    integers exactly) would not score: every numeric question of the bank, every form."""
    broken = []
    for q in REGISTRY.values():
        if q.kind != "numeric":
            continue
        assert q.tolerance is not None
        for form in q.forms or (None,):
            for student in students:
                _, key, _ = draw(q, SEED, student, form=form)
                entries = key if isinstance(key, list) else [key]
                if q.tolerance.rtol == 0 and q.tolerance.atol == 0:
                    written = entries  # an exact key is an integer, given exactly
                    if any(float(e) != int(e) for e in entries):
                        broken.append(f"{q.id} ({student}): an exact key that is no integer: {key}")
                    continue
                written = [float(f"{float(e):.4g}") for e in entries]
                if not all(q.tolerance.accepts(w, float(e)) for w, e in zip(written, entries)):
                    broken.append(f"{q.id} ({student}): {written} for {key}")
    return broken


def test_the_paper_rule_scores_on_every_numeric_question():
    assert _paper_rule_holds(["u00000", "u00001"]) == []


@pytest.mark.bank
def test_the_paper_rule_scores_on_every_numeric_question_for_1000_students():
    assert _paper_rule_holds([f"u{i:05d}" for i in range(1000)]) == []
