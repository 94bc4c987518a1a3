"""Answers read as a teacher reads them (``check_script.read_as_teacher``), generated.

From the key of real questions of a paper of ``exams/final.yaml`` (one asked in MiB, one a
natural-log loss, a three-entry vector, a plain number), Hypothesis writes the answer the ways a
teacher reads as the same number: the unit asked for, a Unicode minus or dash, spaces of every
width, thousands grouped by spaces or by unambiguous commas, scientific notation (``e``, ``*10^``,
``×10^``, ``·10³``). Each scores as the plain key, in the grader and in the check the student runs
(``check-ID.py``, executed as written). Answers beyond the tolerance never score, written in any
of those forms; a lone comma inside a number, a raised dot between digits and a unit other than
the one asked for are refused with a message saying how to write it, never scored silently.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.exam.answers import readability_problem
from seqlab.exam.examfile import load_exam
from seqlab.exam.marking import answer_shapes, asked_unit, expected_entries, grade_variant
from seqlab.exam.render import check_script
from seqlab.exam.variants import make_instance
from seqlab.paths import DEFAULT_EXAM

INST = make_instance(load_exam(DEFAULT_EXAM), "t0042")
BY_ID = {v.id: v for v in INST.variants}
SHAPES = {v.id: s for v, s in zip(INST.variants, answer_shapes(INST))}  # shapes carry the paper's ids (q1, ...)
# the check a student runs, as render writes it, executed (not imported): the file itself is tested
SCRIPT: dict = {"__name__": "check_t0042"}
exec(compile(check_script(INST), "check-t0042.py", "exec"), SCRIPT)  # our own rendered file, run as written
QUESTIONS = ["ssm.kv_cache", "rnn.ce_loss", "rnn.bptt_param_grads", "opt.momentum_steps", "tf.decoder_params"]

DASHES = ["-", "\u2212", "\u2013", "\u2012", "\u2010", "\ufe63", "\uff0d"]
SPACES = ["", " ", "\u2009", "\u00a0", "\u202f", "\u2007"]
SUPER = str.maketrans("0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b")


def _group(digits: str, sep: str) -> str:
    head = len(digits) % 3 or 3
    return digits[:head] + "".join(sep + digits[i : i + 3] for i in range(head, len(digits), 3))


@st.composite
def written(draw, x: float) -> str:
    """``x`` (rounded to 7 significant figures, well inside every tolerance) as a teacher reads it."""
    minus = draw(st.sampled_from(DASHES)) if x < 0 else ""
    mag = abs(x)
    form = draw(st.sampled_from(["plain", "grouped", "e", "times10", "super"]))
    if form in ("plain", "grouped"):
        text = f"{mag:.7g}" if "e" not in f"{mag:.7g}" else f"{mag:.6f}"
        whole, _, frac = text.partition(".")
        if form == "grouped" and len(whole) > 3:
            sep = draw(st.sampled_from(["\u2009", "\u00a0", "\u202f", " ", ","]))
            if sep == "," and whole.count(",") == 0 and len(whole) <= 6 and not frac:
                frac = "0"  # one comma alone could be a decimal comma: a point after it settles it
            whole = _group(whole, sep)
        body = whole + ("." + frac if frac else "")
    else:
        exponent = math.floor(math.log10(mag)) if mag else 0
        mantissa = f"{mag / 10**exponent:.6f}"
        if form == "e":
            body = f"{mantissa}{draw(st.sampled_from(['e', 'E']))}{exponent}"
        elif form == "times10":
            times = draw(st.sampled_from(["*", "\u00d7", " \u00d7 ", "\u00b7", "x", " x "]))
            body = f"{mantissa}{times}10^{exponent}" if exponent >= 0 else f"{mantissa}{times}10^({exponent})"
        else:
            body = f"{mantissa}\u00b710{str(exponent).translate(SUPER)}"
    pad = draw(st.sampled_from(SPACES))
    return f"{pad}{minus}{body}{pad}"


def moved(v, e: float, factor: float) -> float:
    """``e`` moved ``factor`` (> 1) times the tolerance's width, and 1% more: beyond the tolerance
    (and still so once written to 7 figures)."""
    width = v.tolerance.atol + v.tolerance.rtol * abs(e)
    return e + math.copysign(abs(factor) * width + 0.01 * abs(e) + 1e-3, factor)


@st.composite
def teacher_answer(draw, question: str, factor: float = 0.0) -> str:
    v = BY_ID[question]
    entries = [moved(v, e, factor) if factor else e for e in expected_entries(v)]
    unit = asked_unit(v)
    parts = []
    for e in entries:
        text = draw(written(e))
        if unit and draw(st.booleans()):
            text += draw(st.sampled_from(SPACES)) + draw(st.sampled_from([unit, "nat"] if unit == "nats" else [unit]))
        parts.append(text)
    return ", ".join(parts)


def test_the_questions_under_test_ask_what_this_file_assumes():
    assert asked_unit(BY_ID["ssm.kv_cache"]) == "MiB" and SHAPES["ssm.kv_cache"]["unit"] == "MiB"
    assert asked_unit(BY_ID["rnn.ce_loss"]) == "nats"
    assert asked_unit(BY_ID["rnn.bptt_param_grads"]) == "" and len(expected_entries(BY_ID["rnn.bptt_param_grads"])) == 3
    assert any(e < 0 for q in QUESTIONS for e in expected_entries(BY_ID[q]))  # a minus sign is exercised


# make test keeps to a few examples per question (the whole suite has a time budget); the bank run
# draws many more of the same properties
# No deadline: a grading takes milliseconds, and a loaded machine (CI beside other work) once
# took 540 ms on one, which is a fact about the machine, not a slow grader.
FEW, MANY = settings(max_examples=12, deadline=None), settings(max_examples=400, deadline=None)


@pytest.mark.parametrize("question", QUESTIONS)
@FEW
@given(data=st.data())
def test_a_teachers_equivalent_scores_as_the_plain_key(question, data):
    equivalent_scores(question, data)


@pytest.mark.bank
@pytest.mark.parametrize("question", QUESTIONS)
@MANY
@given(data=st.data())
def test_many_teachers_equivalents_score_as_the_plain_key(question, data):
    equivalent_scores(question, data)


def equivalent_scores(question, data):
    v = BY_ID[question]
    text = data.draw(teacher_answer(question))
    mark = grade_variant(v, text)
    assert (mark.verdict, mark.score) == ("correct", v.points), (text, mark.output)
    assert readability_problem(SHAPES[question], text) == ""
    assert SCRIPT["answer_problem"](SHAPES[question], text) == "", text


FACTORS = st.sampled_from([1.0, -1.0, 1.5, -3.0, 20.0])


@pytest.mark.parametrize("question", QUESTIONS)
@FEW
@given(data=st.data(), factor=FACTORS)
def test_an_answer_beyond_the_tolerance_never_scores_full_marks_in_any_form(question, data, factor):
    beyond_never_scores(question, data, factor)


@pytest.mark.bank
@pytest.mark.parametrize("question", QUESTIONS)
@MANY
@given(data=st.data(), factor=FACTORS)
def test_many_answers_beyond_the_tolerance_never_score_full_marks(question, data, factor):
    beyond_never_scores(question, data, factor)


def beyond_never_scores(question, data, factor):
    v = BY_ID[question]
    assert v.tolerance is not None
    assert all(not v.tolerance.accepts(moved(v, e, factor), e) for e in expected_entries(v))
    text = data.draw(teacher_answer(question, factor))
    mark = grade_variant(v, text)
    assert mark.verdict in ("incorrect", "partial") and mark.score < v.points, (text, mark.output)
    assert readability_problem(SHAPES[question], text) == ""  # read, then judged wrong: not refused


@settings(max_examples=30, deadline=None)
@given(whole=st.integers(1, 999), frac=st.integers(0, 999), width=st.integers(1, 3))
def test_a_lone_comma_inside_a_number_is_refused_with_how_to_write_it(whole, frac, width):
    v = BY_ID["rnn.ce_loss"]
    tail = str(frac).zfill(width)[-width:]
    text = f"{whole},{tail}"
    mark = grade_variant(v, text)
    assert mark.verdict == "rejected" and mark.score == 0
    assert f"write {whole}.{tail} for a decimal" in mark.output
    assert (f"or {whole}{tail} for thousands" in mark.output) == (width == 3)
    # the student's check says the same before hand-in
    assert SCRIPT["answer_problem"](SHAPES[v.id], text) == mark.output.removeprefix("answer rejected: ")
    # and following the message gives a readable answer
    assert SCRIPT["answer_problem"](SHAPES[v.id], f"{whole}.{tail}") == ""


def test_a_full_stop_ending_the_answer_is_read_past():
    """ "1.453 nat." is "1.453 nat" to a teacher, and to the grader and the check alike."""
    v = BY_ID["rnn.ce_loss"]
    key = expected_entries(v)[0]
    for text in (f"{key:.6f}.", f"{key:.6f} nats.", f"{key:.6f} nat."):
        mark = grade_variant(v, text)
        assert mark.verdict == "correct", (text, mark.output)
        assert SCRIPT["answer_problem"](SHAPES[v.id], text) == ""


@pytest.mark.parametrize(
    ("question", "text", "says"),
    [
        ("ssm.kv_cache", "10.4 GiB", "this question asks for MiB, not 'GiB'"),
        ("ssm.kv_cache", "10656 MB", "this question asks for MiB, not 'MB'"),
        ("rnn.ce_loss", "2.05 bits", "this question asks for nats, not 'bits'"),
        ("opt.momentum_steps", "0.1 MiB, 0.2", "this question asks for a plain number: write it without 'MiB'"),
        ("rnn.ce_loss", "1\u00b75", "a raised dot between digits"),
        ("rnn.bptt_param_grads", "0,5, 1,5, 2,5", "write 0.5 for a decimal"),
    ],
)
def test_ambiguous_or_wrong_unit_forms_are_refused_with_a_message(question, text, says):
    mark = grade_variant(BY_ID[question], text)
    assert mark.verdict == "rejected" and says in mark.output, mark.output
    assert says in SCRIPT["answer_problem"](SHAPES[question], text)


def test_the_issue_s_answers_score():
    """The hand-ins that scored 0: the unit asked for, the loss in nats, a minus copied from the
    HTML exam, thin spaces; and a comma that can only group thousands."""
    memory = BY_ID["ssm.kv_cache"]
    key = memory.key
    for text in (f"{key} MiB", f"{key}MiB", f"{key}\u00a0MiB"):
        assert grade_variant(memory, text).verdict == "correct", text
    loss = BY_ID["rnn.ce_loss"]
    assert grade_variant(loss, f"{loss.key} nats").verdict == "correct"
    negative = next(v for q, v in BY_ID.items() if q in QUESTIONS and any(e < 0 for e in expected_entries(v)))
    assert grade_variant(negative, negative.key.replace("-", "\u2212")).verdict == "correct"
    assert SCRIPT["read_as_teacher"]("93,251,000", "numeric") == "93251000"
    assert SCRIPT["read_as_teacher"]("93\u2009251", "numeric") == "93251"


def test_the_rules_the_student_reads_before_the_exam_state_each_reading():
    from seqlab.exam.html import exam_html
    from seqlab.exam.markdown import exam_markdown

    for page in (exam_markdown(INST), exam_html(INST)):
        for rule in (
            "\u22120.5",
            "93 251",
            "1,234,567",
            "1.2\u00d710^3",
            "93,251",
            "0,5",
            "4560 MiB",
            "nats",
            "3 significant",
        ):
            assert rule in page, rule
