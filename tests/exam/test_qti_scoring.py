"""The quiz scores as the paper marks: each item's QTI 1.2 response processing, evaluated here as
the specification defines it, gives the key, each named mistake and a wrong answer the points the
paper's grader gives them, and where it cannot (a named mistake of a list), the quiz's rules say so.

No QTI 1.2 validator or LMS importer can run here (tests/exam/_qti_dtd.py checks the structure
against the DTD's content models); this evaluates what an importer would keep: ``resprocessing``
with ``SCORE`` starting at 0, each ``respcondition`` in order, its ``setvar`` applied when its
``conditionvar`` holds, and scoring stopped by ``continue="No"``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from seqlab.exam.draws import format_number
from seqlab.exam.examfile import load_exam
from seqlab.exam.marking import expected_entries, grade_variant
from seqlab.exam.model import CHOICE, NUMERIC, mistake_words
from seqlab.exam.qti import assessment_xml, lost_in_quiz, mistakes_credited, travels
from seqlab.exam.qti_pool import one_quiz_xml
from seqlab.exam.variants import make_instance
from seqlab.paths import DEFAULT_EXAM

from ._qti_dtd import qti_problems

Q = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
STUDENTS = ["s001"]  # one paper in make test; 20 under the bank mark


def _holds(condition: ET.Element, response: str, numeric: bool) -> bool:
    tag = condition.tag.removeprefix(Q)
    if tag in ("conditionvar", "and"):
        return all(_holds(c, response, numeric) for c in condition)
    if tag == "or":
        return any(_holds(c, response, numeric) for c in condition)
    if tag == "not":
        return not _holds(condition[0], response, numeric)
    if tag == "other":
        return True
    value = condition.text or ""
    if tag == "varequal":
        return float(response) == float(value) if numeric else response == value
    compare = {"vargte": float.__ge__, "varlte": float.__le__, "vargt": float.__gt__, "varlt": float.__lt__}
    return compare[tag](float(response), float(value))


def item_score(item: ET.Element, response: str) -> float:
    """The points an item gives ``response``: SCORE (0-100) as its response processing sets it,
    times the item's ``points_possible``."""
    fields = {f.findtext(f"{Q}fieldlabel"): f.findtext(f"{Q}fieldentry") for f in item.iter(f"{Q}qtimetadatafield")}
    numeric = fields["question_type"] == "numerical_question"
    score = 0.0
    for cond in item.iter(f"{Q}respcondition"):
        if not _holds(cond.find(f"{Q}conditionvar"), response, numeric):
            continue
        for setvar in cond.findall(f"{Q}setvar"):
            value = float(setvar.text or 0)
            score = {"Set": value, "Add": score + value, "Subtract": score - value}[setvar.get("action")]
        if cond.get("continue", "No") == "No":
            break
    return float(fields["points_possible"]) * score / 100


def quiz_score(items: dict[str, ET.Element], v, student: str, entries: list[str]) -> float:
    """The quiz's points for a variant answered with ``entries`` (one per item of a list)."""
    if len(entries) == 1:
        return item_score(items[f"{student}-{v.id}"], entries[0])
    return sum(item_score(items[f"{student}-{v.id}-{i + 1}"], e) for i, e in enumerate(entries))


def _answers(v) -> dict[str, list[str]]:
    """The key, each named mistake and wrong answers, as the entries a student types."""
    if v.question.kind == CHOICE:
        wrong = next(chr(ord("A") + i) for i in range(len(v.params["options"])) if chr(ord("A") + i) != v.answer)
        return {"key": [v.answer], "wrong": [wrong]}
    if v.question.kind != NUMERIC:
        return {"key": [v.answer], "wrong": ["false" if v.answer == "true" else "true"]}
    key = [format_number(x) for x in expected_entries(v)]
    out = {"key": key, "wrong": [format_number(2 * float(k) + 7) for k in key]}
    if len(key) > 1:  # one entry wrong: the per-entry credit of the others
        out["one entry wrong"] = [format_number(2 * float(key[0]) + 7), *key[1:]]
    for name, mistake in v.mistakes.items():
        value = mistake.value if isinstance(mistake.value, list) else [mistake.value]
        out[f"mistake {name}"] = [format_number(float(x)) for x in value]
    return out


@pytest.fixture(scope="module")
def papers():
    exam = load_exam(DEFAULT_EXAM)
    return [make_instance(exam, s) for s in STUDENTS]


def test_the_quiz_scores_every_answer_as_the_paper_marks_it(papers):
    scores_as_the_paper(papers)


@pytest.mark.bank  # 20 papers' quizzes written and scored: a few seconds a paper on a loaded machine
def test_20_quizzes_score_every_answer_as_the_papers_mark_it():
    exam = load_exam(DEFAULT_EXAM)
    scores_as_the_paper([make_instance(exam, f"q{i:03d}") for i in range(20)])


def scores_as_the_paper(papers) -> None:
    credited = lost = 0
    for inst in papers:
        xml, _ = assessment_xml(inst)
        assert qti_problems(xml) == []
        root = ET.fromstring(xml)
        items = {item.get("ident"): item for item in root.iter(f"{Q}item")}
        rules = "".join(items[f"{inst.student}-rules"].itertext())
        for v in inst.variants:
            if travels(v):
                continue
            for what, entries in _answers(v).items():
                paper = grade_variant(v, ", ".join(entries)).score
                quiz = quiz_score(items, v, inst.student, entries)
                name = what.removeprefix("mistake ")
                fraction = v.partial["mistakes"].get(name, 0) if what.startswith("mistake ") else 0
                if fraction and name not in mistakes_credited(v):
                    # a named mistake of a list: not in the quiz, and the quiz's rules say so
                    # (the quiz may still pay the entries the mistake has right, as the paper may)
                    assert quiz <= paper + 1e-6 and mistake_words(name) in lost_in_quiz(v, key=True), (v.id, what)
                    assert f"question {v.number}: {lost_in_quiz(v)}" in " ".join(rules.split())
                    assert mistake_words(name) not in rules, (v.id, name)
                    lost += quiz < paper - 1e-6
                    continue
                # points_possible is written to 10 significant digits (11/3 = 3.666666667 a item): a
                # list's items sum to the points within 1e-6, far below any mark
                assert quiz == pytest.approx(paper, abs=1e-6), (inst.student, v.id, what, entries, quiz, paper)
                credited += what.startswith("mistake ") and paper > 0
    # the final has single-number mistakes the quiz credits and list mistakes it says it does not
    assert credited >= 2 * len(papers) and lost >= len(papers)


def test_the_class_quiz_carries_the_same_mistake_credit(papers):
    xml, _ = one_quiz_xml(papers)
    assert qti_problems(xml) == []
    adds = [s for s in ET.fromstring(xml).iter(f"{Q}setvar") if s.get("action") == "Add"]
    fractions = {f"{f * 100:.10g}" for inst in papers for v in inst.variants for f in mistakes_credited(v).values()}
    assert adds and {s.text for s in adds} == fractions
