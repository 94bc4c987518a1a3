"""Per-student variants of exams/final.yaml: keys score 100%, ids differ, rendering reproducible."""

from __future__ import annotations

import itertools
import random

import pytest

from seqlab.exam.draws import StudentIdError
from seqlab.exam.examfile import ExamError, exam_from_dict, load_exam
from seqlab.exam.html import exam_html
from seqlab.exam.markdown import exam_markdown, key_markdown
from seqlab.exam.model import rng_for
from seqlab.exam.notebook import exam_notebook
from seqlab.exam.paper import grade_answers
from seqlab.exam.render import key_answers
from seqlab.exam.variants import make_instance
from seqlab.paths import DEFAULT_EXAM as FINAL_EXAM

EXAM = load_exam(FINAL_EXAM)
# 50 random student ids (a fixed seed, so the test itself is reproducible)
_rng = random.Random(20261215)
STUDENTS = [f"{_rng.choice('abcdefghjkmnpqrstuvwxyz')}{_rng.randrange(10**7):07d}" for _ in range(50)]


def test_fifty_students_keys_score_full_and_parameters_differ():
    assert len(set(STUDENTS)) == 50
    params_seen: dict[str, list] = {}
    for student in STUDENTS:
        inst = make_instance(EXAM, student)
        result = grade_answers(EXAM, student, key_answers(inst)["answers"], instance=inst)
        assert result.score == result.max_score == EXAM.max_score, (
            student,
            [(t.name, t.output) for t in result.tests if t.status != "passed"],
        )
        params_seen[student] = {v.id: v.params for v in inst.variants}  # by id: pools vary the paper
    for a, b in itertools.pairwise(STUDENTS):
        assert params_seen[a] != params_seen[b], (a, b)
    # each numeric question really varies across the class
    for eq in EXAM.questions:
        if eq.question.kind == "numeric":
            assert len({repr(params_seen[s][eq.id]) for s in STUDENTS if eq.id in params_seen[s]}) > 5, eq.id


def test_rendering_is_byte_for_byte_reproducible():
    import nbformat

    for student in STUDENTS[:3]:
        a, b = make_instance(EXAM, student), make_instance(EXAM, student)
        assert exam_markdown(a) == exam_markdown(b)
        assert exam_html(a) == exam_html(b)
        assert key_markdown(a) == key_markdown(b)
        assert nbformat.writes(exam_notebook(a)) == nbformat.writes(exam_notebook(b))
    assert exam_markdown(make_instance(EXAM, STUDENTS[0])) != exam_markdown(make_instance(EXAM, STUDENTS[1]))


def test_the_generator_is_a_stable_hash():
    # fixed values: a change of seeding (e.g. to Python's salted hash()) would break old exams
    import hashlib

    expected = int.from_bytes(hashlib.sha256(b"1:a:q").digest()[:16], "big")
    assert rng_for(1, "a", "q").getstate() == __import__("random").Random(expected).getstate()
    assert rng_for(1, "a", "q").random() != rng_for(1, "b", "q").random()


def test_bad_student_ids_are_refused():
    for bad in ("", "../x", "a b", "x" * 65, "é", None):
        with pytest.raises(StudentIdError):
            make_instance(EXAM, bad)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"title": "t", "seed": 1}, "parts: missing"),
        ({"title": "t", "seed": 1, "parts": [{"questions": ["nope"]}]}, "unknown question id 'nope'"),
        ({"title": "t", "seed": 1, "parts": [{"questions": [{"id": "opt.sgd_step", "points": -1}]}]}, "positive"),
        ({"title": "t", "seed": 1, "parts": [{"questions": ["opt.sgd_step", "opt.sgd_step"]}]}, "appears twice"),
        (
            {
                "title": "t",
                "seed": 1,
                "parts": [{"questions": [{"id": "opt.adam_steps", "partial": {"mistakes": {"typo": 0.5}}}]}],
            },
            "unknown mistake",
        ),
        (
            {
                "title": "t",
                "seed": 1,
                "parts": [{"questions": [{"id": "attn.var_qk", "partial": {"per_element": True}}]}],
            },
            "only numeric",
        ),
        (
            {"title": "t", "seed": 1, "parts": [{"questions": [{"id": "opt.sgd_step", "tolerance": {"rel": -1}}]}]},
            "tolerance",
        ),
        ({"title": "t", "seed": [1], "parts": [{"questions": ["opt.sgd_step"]}]}, "seed"),
    ],
)
def test_exam_file_errors_name_the_place(data, message):
    with pytest.raises(ExamError) as info:
        exam_from_dict(data, "bad.yaml")
    assert message in str(info.value) and str(info.value).startswith("bad.yaml:")


def test_rendered_exam_and_key_show_math_offline():
    """An exam room may have no network (the headless-Chromium test is tests/reports/test_browser.py):
    LaTeX becomes MathML at render time, no external URL, no raw TeX left in the visible text."""
    import html as html_module
    import re

    from seqlab.exam.examfile import all_questions_exam
    from seqlab.exam.html import key_html

    for inst in (make_instance(EXAM, STUDENTS[0]), make_instance(all_questions_exam(seed=5), STUDENTS[1])):
        page = exam_html(inst)
        key_page = key_html(inst)
        for text in (page, key_page):
            assert "<math" in text and "mathjax" not in text.lower()
            assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", text), "no request may leave the page"
            visible = re.sub(r"<annotation.*?</annotation>|<style>.*?</style>|<[^>]+>", "", text, flags=re.S)
            visible = html_module.unescape(visible)
            assert "$" not in visible and "\\(" not in visible and "\\[" not in visible
            assert not re.search(r"\\[A-Za-z]+", visible), re.search(r".{30}\\[A-Za-z]+.{10}", visible)
            assert "<mi>&</mi>" not in text
