"""Equal difficulty by construction, checked over 1000 students.

For every numeric and symbolic question of exams/final.yaml and of the whole bank (every form):
each named mistake is distinguishable from the key (a numeric one by more than MISTAKE_MARGIN
tolerances, and from the other mistakes too), and the answer 0 is never accepted for a nonzero
key entry. For every multiple-choice question: the right option is not given away by
its length or its punctuation.
"""

from __future__ import annotations

import re

import pytest

from seqlab.exam.bank import load_bank
from seqlab.exam.draws import exam_form, one_thread, sample_params
from seqlab.exam.examfile import Exam, ExamQuestion, load_exam
from seqlab.exam.model import CHOICE, MISTAKE_MARGIN, NUMERIC, REGISTRY, SYMBOLIC
from seqlab.exam.safeexpr import equivalent
from seqlab.exam.variants import make_variant
from seqlab.paths import DEFAULT_EXAM

load_bank()
STUDENTS = [f"u{i:05d}" for i in range(1000)]  # the "at least 1000 student ids"
FINAL = load_exam(DEFAULT_EXAM)


def _as_list(value) -> list[float]:
    return [float(x) for x in value] if isinstance(value, list) else [float(value)]


def _apart(a: list[float], b: list[float], tol) -> bool:
    """Some entry of ``a`` misses ``b`` by more than MISTAKE_MARGIN tolerances: a student who makes
    the mistake and rounds to four digits is still not accepted."""
    return len(a) != len(b) or any(abs(x - y) > MISTAKE_MARGIN * (tol.abs + tol.rel * abs(y)) for x, y in zip(a, b))


_EQUIVALENT: dict[tuple[str, str, str], bool] = {}


def _symbolic_mistake_accepted(v, name: str) -> bool:
    """Formula parameters take few distinct values: decide each (question, params, mistake) once,
    with the grader's own full equivalence test (numeric points, then simplify)."""
    key = (v.id, repr(sorted(v.params.items())), name)
    if key not in _EQUIVALENT:
        mistake = v.mistakes[name]
        spec = {s.name: s for s in v.question.syms(v.params)}
        _EQUIVALENT[key] = equivalent(v.answer, mistake.value, spec, seed=1).equivalent
    return _EQUIVALENT[key]


def _unfair(exam: Exam, eq: ExamQuestion) -> list[str]:
    """Every problem of one question over all STUDENTS, as 'student: mistake ...' lines."""
    problems = []
    q = eq.question
    with one_thread():
        for student in STUDENTS:
            v = make_variant(exam, eq, student, 1)
            if q.kind == NUMERIC:
                expected = _as_list(v.answer)
                for e in expected:
                    if e != 0.0 and v.tolerance.accepts(0.0, e):
                        problems.append(f"{student}: 0 accepted for the key entry {e!r}")
                # the mistakes grading compares against (computed once, with the draw)
                assert set(v.mistakes) == set(q.mistakes(v.params) if q.mistakes else {})
                wrong = {name: _as_list(m.value) for name, m in v.mistakes.items()}
                for name, got in wrong.items():
                    if not _apart(got, expected, v.tolerance):
                        problems.append(
                            f"{student}: mistake {name} gives the key (within {MISTAKE_MARGIN:g} tolerances)"
                        )
                names = sorted(wrong)
                for i, a in enumerate(names):
                    for b in names[i + 1 :]:
                        if not (_apart(wrong[a], wrong[b], v.tolerance) and _apart(wrong[b], wrong[a], v.tolerance)):
                            problems.append(f"{student}: mistakes {a} and {b} give the same answer")
            elif q.kind == SYMBOLIC and q.mistakes:
                for name in v.mistakes:
                    if _symbolic_mistake_accepted(v, name):
                        problems.append(f"{student}: mistake {name} is equivalent to the key")
    return problems


def _bank_cases() -> list[tuple[str, str | None]]:
    return [(q.id, form) for q in REGISTRY.values() if q.kind in (NUMERIC, SYMBOLIC) for form in (q.forms or (None,))]


@pytest.mark.parametrize("qid", [eq.id for eq in FINAL.questions if eq.question.kind in (NUMERIC, SYMBOLIC)])
def test_final_exam_mistakes_distinguishable_and_zero_never_accepted(qid):
    eq = next(e for e in FINAL.questions if e.id == qid)
    problems = _unfair(FINAL, eq)
    assert not problems, f"{qid}: {len(problems)} unfair variant(s): {problems[:5]}"


@pytest.mark.parametrize("qid, form", _bank_cases())
def test_bank_mistakes_distinguishable_and_zero_never_accepted(qid, form):
    q = REGISTRY[qid]
    eq = ExamQuestion(question=q, points=1.0, part="bank", per_element=q.kind == NUMERIC, form=form)
    exam = Exam(title="bank", seed=7, questions=(eq,), parts=("bank",))  # other draws than the final's
    problems = _unfair(exam, eq)
    assert not problems, f"{qid} ({form}): {len(problems)} unfair variant(s): {problems[:5]}"


def test_every_student_of_an_exam_gets_the_same_form():
    for eq in FINAL.questions:
        if eq.question.forms:
            forms = {make_variant(FINAL, eq, s, 1).form for s in STUDENTS[:20]}
            assert forms == {exam_form(eq.question, FINAL.seed, eq.form)} and None not in forms, eq.id
    # and the form really reaches the parameters: the shapes question asks one case of everyone
    eq = next(e for e in FINAL.questions if e.id == "rnn.shapes")
    assert len({make_variant(FINAL, eq, s, 1).params["case"] for s in STUDENTS[:50]}) == 1


# --------------------------------------------------------------------------- multiple choice

# words that soften a claim: an option that alone hedges reads as the careful, right one
HEDGE = re.compile(
    r"\b(often|usually|typically|generally|tends?|may|might|mostly|sometimes|likely|can|could|almost)\b", re.IGNORECASE
)
# surface features that must never single out the right option (it alone has one)
SURFACE = {
    "ends with a period": lambda o: o.rstrip().endswith("."),
    "hedges": lambda o: bool(HEDGE.search(o)),
    "has a semicolon": lambda o: ";" in o,
    "has a colon": lambda o: ":" in o,
    "has parentheses": lambda o: "(" in o,
}
CHOICE_IDS = sorted(q.id for q in REGISTRY.values() if q.kind == CHOICE)


def _option_cues(qid: str, seed) -> tuple[float, float, list[str]]:
    """(share strictly longest, share strictly shortest, every variant where a surface feature
    singles out the right option) over STUDENTS."""
    q = REGISTRY[qid]
    longest = shortest = 0
    singled: list[str] = []
    for student in STUDENTS:
        p = sample_params(q, seed, student)
        options, right = p["options"], ord(p["correct"]) - ord("A")
        others = [len(o) for i, o in enumerate(options) if i != right]
        longest += len(options[right]) > max(others)
        shortest += len(options[right]) < min(others)
        for name, has in SURFACE.items():
            marks = [has(o) for o in options]
            if marks[right] and sum(marks) == 1:
                singled.append(f"{student}: only the right option {name}")
    return longest / len(STUDENTS), shortest / len(STUDENTS), singled


@pytest.mark.parametrize("seed", [FINAL.seed, 7])  # the final exam's draws and another exam's
@pytest.mark.parametrize("qid", CHOICE_IDS)
def test_the_right_option_does_not_stand_out(qid, seed):
    n = len(sample_params(REGISTRY[qid], seed, STUDENTS[0])["options"])
    # the bound: chance (1/n) plus 10 points of slack for finite, hand-written option sets;
    # the same bound for the shortest, or "never pick the longest" would become the cue
    bound = 1 / n + 0.10
    longest, shortest, singled = _option_cues(qid, seed)
    assert longest <= bound, f"{qid}: the right option is strictly the longest in {longest:.0%} of variants"
    assert shortest <= bound, f"{qid}: the right option is strictly the shortest in {shortest:.0%} of variants"
    assert not singled, f"{qid}: {len(singled)} variant(s), e.g. {singled[:3]}"


def test_final_exam_choice_questions_are_all_checked():
    assert {eq.id for eq in FINAL.questions if eq.question.kind == CHOICE} <= set(CHOICE_IDS)


def test_each_question_rule_holds_and_an_impossible_rule_is_reported():
    from seqlab.exam.draws import DrawError, draw
    from seqlab.exam.model import Question

    ruled = [q for q in REGISTRY.values() if q.valid is not None]
    assert ruled, "at least one question adds a rule of its own"
    for q in ruled:
        for student in STUDENTS[:100]:
            params, _, _ = draw(q, FINAL.seed, student, form=q.forms[0] if q.forms else None)
            assert q.valid(params), (q.id, student)
    base = REGISTRY["opt.sgd_step"]
    never = Question(**{**base.__dict__, "id": "test.never", "valid": lambda p: False})
    with pytest.raises(DrawError, match=r"test\.never: no valid draw"):
        draw(never, 1, "s1")
