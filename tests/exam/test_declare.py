"""The bank's declaration vocabulary (seqlab/exam/bank/declare.py): what each line declares, and
the mistakes in writing one that it refuses with a message."""

from __future__ import annotations

import pytest

from seqlab.exam.bank.declare import (
    cites,
    equivalents,
    exercises,
    forms,
    formula,
    mistake,
    numeric,
    own_entries,
    text,
    valid_when,
)
from seqlab.exam.model import FOUR_DIGITS, NUMERIC, REGISTRY, SYMBOLIC
from seqlab.exam.safeexpr import Sym


@pytest.fixture
def scratch_ids():
    """Ids registered by a test are taken out of the bank again, whatever the test does."""
    ids: list[str] = []
    yield ids
    for qid in ids:
        REGISTRY.pop(qid, None)


def _sample(rng, form):
    return {"x": rng.randint(1, 9), "form": form}


def test_each_line_declares_one_fact_and_mistakes_keep_their_order(scratch_ids):
    scratch_ids.append("test.declared")

    @numeric("test.declared", _sample, FOUR_DIGITS, hint="one number")
    @cites("W8 §8.2", "L5 §15")
    @exercises("attention.scaled_dot_product_attention")
    @forms("small", "large")
    @valid_when(lambda p: p["x"] != 5)
    @mistake("doubled", "the answer is not doubled", doubled=True)
    @mistake("negated", "the sign is kept", lambda p: -p["x"])
    @text("{% block question %}Double {{ p.x }}.{% endblock %}")
    @mistake("only_large", "shown only in the large form", lambda p: 0.0, when=lambda p: p["form"] == "large")
    @own_entries()
    def declared(p, doubled=False):
        """A declared question.

        More prose here is documentation, not title."""
        return float(p["x"] * (2 if doubled else 1))

    q = REGISTRY["test.declared"]
    assert (q.kind, q.title, q.tolerance, q.answer_hint) == (NUMERIC, "A declared question", FOUR_DIGITS, "one number")
    assert q.sections == ("W8 §8.2", "L5 §15") and q.exercises == ("attention.scaled_dot_product_attention",)
    assert q.forms == ("small", "large") and q.text == "{% block question %}Double {{ p.x }}.{% endblock %}\n"
    assert q.topic == "test_declare" and q.answer is declared and q.sample is _sample
    assert q.valid({"x": 4}) and not q.valid({"x": 5})
    small, large = {"x": 3, "form": "small"}, {"x": 3, "form": "large"}
    assert {n: m.value for n, m in q.mistakes(small).items()} == {"doubled": 6.0, "negated": -3}
    assert list(q.mistakes(large)) == ["doubled", "negated", "only_large"]
    assert q.mistakes(small)["doubled"].feedback == "the answer is not doubled"
    assert q.own_entries


def test_a_formula_declares_its_symbols_and_equivalent_forms(scratch_ids):
    scratch_ids.append("test.formula")

    def symbols(p):
        return (Sym("w", 0.5, 2.0),)

    @formula("test.formula", lambda rng: {"k": 3}, symbols)
    @text("{% block question %}$w^{{ p.k }}${% endblock %}")
    @cites("L5 §5.1")
    @equivalents(lambda p: [f"w*w^{p['k'] - 1}"])
    def power(p):
        """A power."""
        return symbols(p)[0].sympy() ** p["k"]

    q = REGISTRY["test.formula"]
    assert (q.kind, q.symbols, q.mistakes, q.tolerance) == (SYMBOLIC, symbols, None, None)
    assert q.equivalents({"k": 3}) == ["w*w^2"]


def test_a_fact_above_the_kind_line_is_refused(scratch_ids):
    scratch_ids.append("test.misplaced")
    with pytest.raises(ValueError, match="declared above the question's kind"):

        @exercises("rnn.rnn_cell")
        @numeric("test.misplaced", lambda rng: {}, FOUR_DIGITS)
        @text("{% block question %}?{% endblock %}")
        @cites("L5 §5.1")
        def misplaced(p):
            """Misplaced."""
            return 1.0


def test_a_question_without_its_title_is_refused(scratch_ids):
    scratch_ids.append("test.refused")

    def answer(p):
        return 1.0

    with pytest.raises(ValueError, match="docstring is the question's title"):
        numeric("test.refused", lambda rng: {}, FOUR_DIGITS)(text("{% block question %}?{% endblock %}")(answer))
    assert "test.refused" not in REGISTRY


def test_a_question_without_its_text_is_refused(scratch_ids):
    """The text is part of the declaration: no file elsewhere can hold it."""
    scratch_ids.append("test.textless")

    def answer(p):
        """Textless."""
        return 1.0

    with pytest.raises(ValueError, match="declare its text with @text"):
        numeric("test.textless", lambda rng: {}, FOUR_DIGITS)(cites("L5 §5.1")(answer))
    assert "test.textless" not in REGISTRY


def test_a_fact_declared_twice_is_refused():
    with pytest.raises(ValueError, match="sections declared twice"):

        @cites("L5 §5.1")
        @cites("L5 §5.2")
        def twice(p):
            """Twice."""


@pytest.mark.parametrize(
    "how", [{}, {"value": lambda p: 0.0, "scaled": False}], ids=["neither value nor switch", "both"]
)
def test_a_mistake_is_its_value_or_the_answer_switched_never_both(how):
    with pytest.raises(ValueError, match="its value function or the answer's switch"):
        mistake("wrong", "feedback", **how)


TOY_TOPIC = '''"""A course's topic of one question: the whole of what a new question takes."""

from seqlab.exam.bank.declare import cites, numeric, text
from seqlab.exam.model import FOUR_DIGITS


@numeric("toy.double", lambda rng: {"x": rng.randint(2, 90) / 10}, FOUR_DIGITS, hint="one number")
@text(
    r"""
    {% block question %}What is twice $x = {{ p.x|num }}$?{% endblock %}
    {% block solution %}$2x = {{ answer|num }}$.{% endblock %}
    """
)
@cites("L5 §5.1")
def double(p):
    """Twice a number."""
    return 2 * p["x"]
'''


def test_a_new_question_is_one_file_in_the_course_and_one_exam_line(scratch_ids, tmp_path):
    """The walkthrough for a question: its declaration (text, key, rules) in a module of the
    course's ``exams/questions/`` and its line in an exam file; nothing else is written (no
    template file, no table, nothing in the tool's package)."""
    import sys

    from seqlab.exam.bank import load_questions
    from seqlab.exam.examfile import exam_from_dict
    from seqlab.exam.markdown import exam_markdown, key_markdown
    from seqlab.exam.paper import grade_answers
    from seqlab.exam.render import key_answers
    from seqlab.exam.variants import make_instance

    scratch_ids.append("toy.double")
    questions = tmp_path / "exams" / "questions"
    questions.mkdir(parents=True)
    (questions / "toy.py").write_text(TOY_TOPIC, encoding="utf-8")
    try:
        load_questions(questions, prefix="toy_course_questions")
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] == "toy_course_questions"]:
            del sys.modules[name]
    assert REGISTRY["toy.double"].topic == "toy" and REGISTRY["toy.double"].template == ""

    exam = exam_from_dict({"title": "toy", "seed": 3, "duration": 5, "parts": [{"questions": ["toy.double"]}]})
    inst = make_instance(exam, "s1")
    assert "What is twice $x = " in exam_markdown(inst) and "$2x = " in key_markdown(inst)
    assert grade_answers(exam, "s1", key_answers(inst)["answers"]).percent == 100.0
    assert [
        p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    ] == ["exams/questions/toy.py"]
