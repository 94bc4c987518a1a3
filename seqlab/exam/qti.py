"""LMS delivery: the exam as a QTI 1.2 package (Canvas's dialect, also read by Moodle and Blackboard).

Why QTI 1.2 and not 2.1: Canvas (the LMS most of our users run) imports "QTI .zip file" in the
1.2 profile it also exports, with the question type in ``itemmetadata`` (``question_type``,
``points_possible``); its 2.x import goes through a converter that drops numeric tolerances.
Moodle's and Blackboard's QTI importers read the same 1.2 items.

Why not text2qti: it reads its own Markdown dialect (we would have to escape our rendered text
into it) and turns LaTeX into images served by the Canvas instance; we already render the
question text, so the items are written here with ``xml.etree`` in a few lines per kind.

Which questions travel:

- ``choice``      -> ``multiple_choice_question`` (the student's own option order);
- ``truefalse``   -> ``true_false_question``;
- ``numeric`` with a single number -> ``numerical_question``: full marks on the range key +-
  tolerance (``numeric_range``, decimal on the key's printed digits: the same bytes on every
  machine), then each named mistake's range adds its stated fraction (``<setvar action="Add">``);
- ``numeric`` with n numbers and per-entry credit on the paper -> n ``numerical_question`` items
  worth points/n each, the paper's own rule; a group drawing all n in a student's quiz, one group
  per entry in the class's (``qti_pool``). A named mistake of a list is not credited: the paper
  credits it only when the whole list is that mistake, which no one item sees.

Which do not: a vector graded all or nothing (an LMS scores each item alone), and formulas (no LMS
item type checks algebraic equivalence). They stay on the paper/HTML exam; ``qti-skipped.txt`` and
the command's output name them. Every quiz starts with a ``text_only_question`` of the rules for
the LMS medium (``quiz_rules``: the paper's time, aids, conventions and rounding, how to type into
the LMS, the partial credit the quiz gives and the mistakes it does not credit, the questions not
in it); every item carries its answer format and partial-credit line as the paper prints them.

The default package is the class's one quiz (``qti_pool``: every question a group the LMS draws
each student's variant from, imported once and published to the whole course). With
``--per-student``, this module's ``assessment_xml`` writes one quiz per student instead, each that
student's variant, the same parameters and keys as the paper exam, to assign to that student in
the LMS by hand. Math is MathML, as in the HTML exam (Canvas and Moodle keep MathML through their
HTML sanitizers and browsers draw it natively): no TeX is left for the LMS to typeset or show raw.
The zip is byte-reproducible.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext

from ..tolerance import Tolerance
from .draws import format_number
from .html import markdown_to_html
from .markdown import answer_format, paper_rules, partial_credit_rule, render_texts
from .marking import expected_entries
from .model import CHOICE, NUMERIC, TRUEFALSE, Variant, mistake_words
from .timing import check_fits
from .variants import ExamInstance

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"


@dataclass(frozen=True)
class Skipped:
    student: str
    question: str
    reason: str


def travels(v: Variant) -> str:
    """'' when the variant can become LMS items, else why not."""
    kind = v.question.kind
    if kind in (CHOICE, TRUEFALSE):
        return ""
    if kind == NUMERIC:
        if entries(v) > 1 and not v.partial.get("per_element"):
            return f"a vector of {entries(v)} numbers graded all or nothing: an LMS scores each entry's item alone"
        return ""
    return "a formula: no LMS item type checks algebraic equivalence"


def entries(v: Variant) -> int:
    return len(v.answer) if isinstance(v.answer, list) else 1


def _question_text(v: Variant, eq) -> str:
    """The question's text as the paper prints it, its answer format, the credit the quiz gives (mistakes_credited)."""
    rule = partial_credit_rule(v, eq, credited=set(mistakes_credited(v))) if eq is not None else ""
    return f"{v.text}\n\n*Answer:* {answer_format(v, 'lms')}" + (f"\n\n*Partial credit:* {rule}." if rule else "")


def safe_ident(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:120]


def _material(parent: ET.Element, html: str) -> None:
    material = ET.SubElement(parent, "material")
    ET.SubElement(material, "mattext", texttype="text/html").text = html


def _metadata(item: ET.Element, question_type: str, points: float) -> None:
    meta = ET.SubElement(ET.SubElement(item, "itemmetadata"), "qtimetadata")
    for label, entry in (("question_type", question_type), ("points_possible", f"{points:.10g}")):
        field = ET.SubElement(meta, "qtimetadatafield")
        ET.SubElement(field, "fieldlabel").text = label
        ET.SubElement(field, "fieldentry").text = entry


def _full_marks(resprocessing: ET.Element, condition: ET.Element) -> None:
    cond = ET.SubElement(resprocessing, "respcondition", {"continue": "No"})
    cond.append(condition)
    ET.SubElement(cond, "setvar", action="Set", varname="SCORE").text = "100"


def _outcomes(item: ET.Element) -> ET.Element:
    resprocessing = ET.SubElement(item, "resprocessing")
    ET.SubElement(
        ET.SubElement(resprocessing, "outcomes"),
        "decvar",
        maxvalue="100",
        minvalue="0",
        varname="SCORE",
        vartype="Decimal",
    )
    return resprocessing


# Guard digits below the margin's leading digit in the exported bounds: the LMS's range then matches
# the grader's to 1/10000 of its half-width, finer than any answer a student types can resolve.
BOUND_DIGITS = 4


def numeric_range(key: str, tolerance: Tolerance) -> tuple[str, str, str]:
    """The key and the accepted range ``key -+ (abs + rel * |key|)`` as an LMS item writes them.

    Everything is decimal arithmetic on the key as the paper writes it (``format_number``: 10
    significant digits, correctly rounded) and the tolerance as the exam file writes it, never on
    the float the key came from: that float's last bits are the BLAS's and the CPU's (a
    ``matrix_power`` on another machine lands a few ulps away), and ``repr`` would carry them into
    the package. So a QTI item depends on exactly what the paper key and the tolerance depend on.
    The bounds are rounded outward (floor, ceiling) to ``BOUND_DIGITS`` digits below the margin's
    leading digit, so the LMS never refuses an answer the grader accepts; with an exact tolerance
    both bounds are the key. Written positionally: LMS number fields do not all read exponents.
    """
    with localcontext() as ctx:
        ctx.prec = 50  # exact: the key has 10 digits, the tolerance a few
        k = Decimal(key)
        margin = Decimal(repr(tolerance.abs)) + Decimal(repr(tolerance.rel)) * abs(k)
        if margin == 0:
            return _plain(k), _plain(k), _plain(k)
        quantum = Decimal(1).scaleb(margin.adjusted() - BOUND_DIGITS)
        lo = (k - margin).quantize(quantum, rounding=ROUND_FLOOR)
        hi = (k + margin).quantize(quantum, rounding=ROUND_CEILING)
    return _plain(k), _plain(lo), _plain(hi)


def _plain(d: Decimal) -> str:
    """Positional, no exponent, no trailing zeros after the point: 1.5e-05 -> 0.000015, 2.50 -> 2.5."""
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


# The paper reads arithmetic in an answer (1/3, sqrt(2)/2); an LMS's number field reads a decimal
# number only, and not every LMS reads an exponent: said where the student types, in the quiz.
LMS_TYPING = (
    "Type each number as a decimal (0.3333, -12.5, 0.0025), with a point for decimals and no thousands "
    "separator or unit: the LMS's number field reads no arithmetic or fraction, and not every LMS reads "
    "an exponent. A list's entries are asked one item each, in the order the question asks. A choice "
    "question takes one option. There is no check script: the LMS itself refuses what its number "
    "field cannot read."
)
# What the quiz's own scoring gives, in place of the paper's partial-credit rule.
LMS_PARTIAL = (
    "A list of n numbers is asked as n items, each worth 1/n of the question's points and scored "
    "within the question's tolerance. A named mistake of a single-number question earns the fraction "
    "stated under it: the quiz's scoring carries it. Everything else earns full points or none."
)


def rules_item(inst: ExamInstance, stays: list[tuple[str, str]], ident: str = "") -> ET.Element:
    """The quiz's first item: its rules (``quiz_rules``), as a question that asks nothing; ``stays``:
    (question, why) for each question of the paper not in the quiz, so that a student never looks
    for them in the LMS."""
    item = ET.Element("item", ident=ident or safe_ident(f"{inst.student}-rules"), title="Rules of this exam")
    _metadata(item, "text_only_question", 0)
    text = "\n\n".join(f"**{name}.** {' '.join(body.split())}" for name, body in quiz_rules(inst, stays))
    _material(ET.SubElement(item, "presentation"), markdown_to_html(text))
    return item


def quiz_rules(inst: ExamInstance, stays: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The quiz's rules: the paper's for the LMS medium (time, aids, conventions, grading,
    rounding), how to type answers into the LMS, the partial credit its scoring gives and where
    that is less than the paper's, and the questions that stay on the paper."""
    rules = paper_rules(inst, "lms")
    rules.append(("Writing answers", LMS_TYPING))
    partial = LMS_PARTIAL
    lost = [(v.number, lost_in_quiz(v)) for v in inst.variants if not travels(v) and lost_in_quiz(v)]
    if lost:
        partial += " Unlike the paper, these named mistakes earn nothing here (each entry of a list is scored " + (
            "alone, and the mistake is one of the whole list): "
            + "; ".join(f"question {number}: {what}" for number, what in lost)
            + "."
        )
    rules.append(("Partial credit", partial))
    if stays:
        listed = "; ".join(f"{question}: {why}" for question, why in stays)
        rules.append(
            (
                "Not in this quiz",
                f"{len(stays)} question(s) of the paper cannot be asked and graded here, so they are answered "
                f"on the paper (or HTML) exam: {listed}.",
            )
        )
    return rules


def stays_line(v: Variant, why: str) -> tuple[str, str]:
    """A question that stays on the paper, as the quiz's rules name it."""
    return f"Question {v.number} ({v.question.title})", why


def variant_items(v: Variant, student: str, eq=None, *, whole_text: bool = False) -> list[ET.Element]:
    """The QTI items of a variant that travels: one, or one per entry of a vector (``travels``).
    ``whole_text``: every entry's item carries the whole question (in the class's one quiz the LMS
    draws each entry on its own, so an item may stand without its neighbours)."""
    if v.question.kind != NUMERIC or entries(v) == 1:
        return [variant_item(v, student, eq)]
    n, keys = entries(v), [format_number(x) for x in expected_entries(v)]
    items = []
    for i, key in enumerate(keys):
        item = ET.Element(
            "item", ident=safe_ident(f"{student}-{v.id}-{i + 1}"), title=f"{v.number}. {v.question.title} ({i + 1}/{n})"
        )
        _metadata(item, "numerical_question", v.points / n)
        presentation = ET.SubElement(item, "presentation")
        text = _question_text(v, eq) if i == 0 or whole_text else f"Question {v.number}, continued."
        _material(presentation, markdown_to_html(text + f"\n\nThis item takes **entry {i + 1} of the {n}**."))
        _numeric_response(item, presentation, key, v)
        items.append(item)
    return items


def variant_item(v: Variant, student: str, eq=None) -> ET.Element:
    """One QTI item for a variant that travels as one item (see ``travels``)."""
    item = ET.Element("item", ident=safe_ident(f"{student}-{v.id}"), title=f"{v.number}. {v.question.title}")
    kind = v.question.kind
    question_type = {
        CHOICE: "multiple_choice_question",
        TRUEFALSE: "true_false_question",
        NUMERIC: "numerical_question",
    }[kind]
    _metadata(item, question_type, v.points)
    presentation = ET.SubElement(item, "presentation")
    # a choice question's rendered text lists its options; in the LMS they are the response labels
    _material(presentation, markdown_to_html(v.params["stem"] if kind == CHOICE else _question_text(v, eq)))
    if kind in (CHOICE, TRUEFALSE):
        if kind == CHOICE:
            labels = [(chr(ord("A") + i), text) for i, text in enumerate(v.params["options"])]
        else:
            labels = [("true", "True"), ("false", "False")]
        response = ET.SubElement(presentation, "response_lid", ident="response1", rcardinality="Single")
        render = ET.SubElement(response, "render_choice")
        for ident, text in labels:
            _material(ET.SubElement(render, "response_label", ident=ident), markdown_to_html(text))
        condition = ET.Element("conditionvar")
        ET.SubElement(condition, "varequal", respident="response1").text = str(v.answer)
        _full_marks(_outcomes(item), condition)
        return item
    _numeric_response(item, presentation, v.key, v)
    return item


def _in_range(printed: str, tol: Tolerance) -> ET.Element:
    """The condition "the response is ``printed`` within ``tol``", as ``numeric_range`` bounds it."""
    key, lo, hi = numeric_range(printed, tol)
    condition = ET.Element("conditionvar")
    either = ET.SubElement(condition, "or")
    ET.SubElement(either, "varequal", respident="response1").text = key
    both = ET.SubElement(either, "and")
    ET.SubElement(both, "vargte", respident="response1").text = lo
    ET.SubElement(both, "varlte", respident="response1").text = hi
    return condition


def mistakes_credited(v: Variant) -> dict[str, float]:
    """The named mistakes with partial credit that the quiz's scoring carries: those of a single
    number. A list's entries are items scored one by one, and the paper credits a mistake only
    when the whole list is that mistake, which no one item can see (``lost_in_quiz``)."""
    fractions = v.partial.get("mistakes", {})
    if v.question.kind != NUMERIC or entries(v) != 1:
        return {}
    return {name: fractions[name] for name in v.mistakes if fractions.get(name)}


def lost_in_quiz(v: Variant, *, key: bool = False) -> str:
    """What partial credit of the paper a travelling variant loses in the quiz ("" when none); the
    mistakes by name with ``key``, else only their shares (the quiz's rules, which students read,
    must not point at the trap, as the paper does not)."""
    fractions = {name: f for name, f in v.partial.get("mistakes", {}).items() if f and name in v.mistakes}
    lost = sorted(set(fractions) - set(mistakes_credited(v)))
    what = mistake_words if key else (lambda name: "a named mistake")
    return ", ".join(f"{what(name)} ({round(fractions[name] * 100)}%)" for name in lost)


def _numeric_response(item: ET.Element, presentation: ET.Element, printed_key: str, v: Variant) -> None:
    """A number field, full marks within the tolerance; then, for a single number, each named
    mistake's range adds its fraction (``<setvar action="Add">``), the grader's rule: the first
    condition that holds ends the scoring (``continue="No"``), and the fair-draw rule keeps the
    key's and the mistakes' ranges apart."""
    tol = v.tolerance
    assert tol is not None  # numeric questions state their tolerance (model.register refuses one without)
    _material(presentation, f"<p><em>Answer:</em> one number, graded {tol.describe()} of the key.</p>")
    response = ET.SubElement(presentation, "response_str", ident="response1", rcardinality="Single")
    ET.SubElement(ET.SubElement(response, "render_fib", fibtype="Decimal"), "response_label", ident="answer1")
    resprocessing = _outcomes(item)
    _full_marks(resprocessing, _in_range(printed_key, tol))
    for name, fraction in mistakes_credited(v).items():
        value = v.mistakes[name].value
        cond = ET.SubElement(resprocessing, "respcondition", {"continue": "No", "title": name})
        cond.append(_in_range(format_number(float(value[0] if isinstance(value, list) else value)), tol))
        ET.SubElement(cond, "setvar", action="Add", varname="SCORE").text = f"{fraction * 100:.10g}"


def assessment_xml(inst: ExamInstance) -> tuple[bytes, list[Skipped]]:
    check_fits(inst)  # as every medium: no paper longer than its duration
    render_texts(inst)
    ident = safe_ident(f"seqlab-{inst.student}")
    root = ET.Element("questestinterop", xmlns=QTI_NS)
    assessment = ET.SubElement(root, "assessment", ident=ident, title=f"{inst.exam.title} ({inst.student})")
    section = ET.SubElement(assessment, "section", ident="root_section")
    skipped = [Skipped(inst.student, v.id, travels(v)) for v in inst.variants if travels(v)]
    by_id = inst.by_id()
    section.append(rules_item(inst, [stays_line(by_id[s.question], s.reason) for s in skipped]))
    for v, eq in zip(inst.variants, inst.questions):
        if travels(v):
            continue
        items = variant_items(v, inst.student, eq)
        if len(items) == 1:
            section.append(items[0])
            continue
        # a vector: one question group drawing all its entries' items, each worth points / n
        group = ET.SubElement(
            section, "section", ident=safe_ident(f"{inst.student}-{v.id}"), title=f"Question {v.number}"
        )
        selection = ET.SubElement(ET.SubElement(group, "selection_ordering"), "selection")
        ET.SubElement(selection, "selection_number").text = str(len(items))
        extension = ET.SubElement(selection, "selection_extension")
        ET.SubElement(extension, "points_per_item").text = f"{v.points / len(items):.10g}"
        group.extend(items)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n", skipped
