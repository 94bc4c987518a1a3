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
- ``numeric`` with a single number -> ``numerical_question`` with the range key +- tolerance
  (the exam's tolerance: ``abs + rel * |key|``), in decimal on the key's printed digits
  (``numeric_range``), so the package has the same bytes on every machine.

Which do not, and why: vector answers (an LMS numeric item holds one number, and splitting a
vector into items would change the question and its partial credit), and symbolic answers (no
LMS item type checks algebraic equivalence). They stay on the paper/HTML exam; the package's
``qti-skipped.txt`` (beside the zip) and the command's output list them.

One quiz per student (``--students``): each is that student's variant, the same parameters and
keys as the paper exam, assigned to that student in the LMS. Or (``--variant-pool``) one quiz in
which each question is a question group holding the variants of the listed ids, one drawn per
attempt by the LMS (Canvas's "pick 1 from the group"). Math is MathML, as in the HTML
exam (Canvas and Moodle keep MathML through their HTML sanitizers and browsers draw it natively):
no TeX is left for the LMS to typeset or show raw. The zip is byte-reproducible.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from pathlib import Path

from ..tolerance import Tolerance
from .html import markdown_to_html
from .model import CHOICE, NUMERIC, TRUEFALSE, Variant
from .variants import ExamInstance

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed: the same exam gives the same bytes


@dataclass(frozen=True)
class Skipped:
    student: str
    question: str
    reason: str


def travels(v: Variant) -> str:
    """'' when the variant can become an LMS item, else why not."""
    kind = v.question.kind
    if kind in (CHOICE, TRUEFALSE):
        return ""
    if kind == NUMERIC:
        if isinstance(v.answer, list) and len(v.answer) > 1:
            return f"a vector of {len(v.answer)} numbers: an LMS numeric item holds one number"
        return ""
    return "a formula: no LMS item type checks algebraic equivalence"


def _ident(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:120]


def _html(markdown: str) -> str:
    return markdown_to_html(markdown)


def _material(parent: ET.Element, html: str) -> None:
    material = ET.SubElement(parent, "material")
    ET.SubElement(material, "mattext", texttype="text/html").text = html


def _metadata(item: ET.Element, question_type: str, points: float) -> None:
    meta = ET.SubElement(ET.SubElement(item, "itemmetadata"), "qtimetadata")
    for label, entry in (("question_type", question_type), ("points_possible", f"{points:g}")):
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


def variant_item(v: Variant, student: str) -> ET.Element:
    """One QTI item for a variant that travels (see ``travels``)."""
    item = ET.Element("item", ident=_ident(f"{student}-{v.id}"), title=f"{v.number}. {v.question.title}")
    kind = v.question.kind
    question_type = {
        CHOICE: "multiple_choice_question",
        TRUEFALSE: "true_false_question",
        NUMERIC: "numerical_question",
    }[kind]
    _metadata(item, question_type, v.points)
    presentation = ET.SubElement(item, "presentation")
    # a choice question's rendered text lists its options; in the LMS they are the response labels
    _material(presentation, _html(v.params["stem"] if kind == CHOICE else v.text))
    if kind in (CHOICE, TRUEFALSE):
        if kind == CHOICE:
            labels = [(chr(ord("A") + i), text) for i, text in enumerate(v.params["options"])]
        else:
            labels = [("true", "True"), ("false", "False")]
        response = ET.SubElement(presentation, "response_lid", ident="response1", rcardinality="Single")
        render = ET.SubElement(response, "render_choice")
        for ident, text in labels:
            _material(ET.SubElement(render, "response_label", ident=ident), _html(text))
        condition = ET.Element("conditionvar")
        ET.SubElement(condition, "varequal", respident="response1").text = str(v.answer)
        _full_marks(_outcomes(item), condition)
        return item
    tol = v.tolerance
    assert tol is not None  # numeric questions state their tolerance (model.register refuses one without)
    key, lo, hi = numeric_range(v.key, tol)
    _material(presentation, f"<p><em>Answer:</em> one number, graded {tol.describe()} of the key.</p>")
    response = ET.SubElement(presentation, "response_str", ident="response1", rcardinality="Single")
    ET.SubElement(ET.SubElement(response, "render_fib", fibtype="Decimal"), "response_label", ident="answer1")
    condition = ET.Element("conditionvar")
    either = ET.SubElement(condition, "or")
    ET.SubElement(either, "varequal", respident="response1").text = key
    both = ET.SubElement(either, "and")
    ET.SubElement(both, "vargte", respident="response1").text = lo
    ET.SubElement(both, "varlte", respident="response1").text = hi
    _full_marks(_outcomes(item), condition)
    return item


def assessment_xml(inst: ExamInstance) -> tuple[bytes, list[Skipped]]:
    ident = _ident(f"seqlab-{inst.student}")
    root = ET.Element("questestinterop", xmlns=QTI_NS)
    assessment = ET.SubElement(root, "assessment", ident=ident, title=f"{inst.exam.title} ({inst.student})")
    section = ET.SubElement(assessment, "section", ident="root_section")
    skipped = []
    for v in inst.variants:
        why = travels(v)
        if why:
            skipped.append(Skipped(inst.student, v.id, why))
            continue
        section.append(variant_item(v, inst.student))
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n", skipped


def variant_pool_xml(instances: list[ExamInstance]) -> tuple[bytes, list[Skipped]]:
    """One quiz whose every question is a question group of the students' variants: the LMS draws
    one variant per attempt. For an LMS that cannot assign a quiz per student; the LMS, not the
    student id, then decides who gets which variant, and the LMS grades. A pool of the exam file
    becomes one group drawing ``draw`` of all its candidates' variants."""
    exam = instances[0].exam
    root = ET.Element("questestinterop", xmlns=QTI_NS)
    assessment = ET.SubElement(root, "assessment", ident="seqlab-variants", title=f"{exam.title} (variants)")
    top = ET.SubElement(assessment, "section", ident="root_section")
    groups: dict[str, tuple[ET.Element, set[bytes]]] = {}
    skipped = []
    pools = {p.name: p for p in exam.pools}
    for eq in exam.questions:
        name = eq.pool or eq.id
        if name in groups:
            continue
        group = ET.SubElement(top, "section", ident=_ident(f"group-{name}"), title=name)
        selection = ET.SubElement(ET.SubElement(group, "selection_ordering"), "selection")
        ET.SubElement(selection, "selection_number").text = str(pools[name].draw if eq.pool else 1)
        extension = ET.SubElement(selection, "selection_extension")
        ET.SubElement(extension, "points_per_item").text = f"{eq.points:g}"
        groups[name] = (group, set())
    for inst in instances:
        for v, eq in zip(inst.variants, inst.questions):
            why = travels(v)
            if why:
                skipped.append(Skipped(inst.student, v.id, why))
                continue
            group, seen = groups[eq.pool or eq.id]
            item = variant_item(v, inst.student)
            presentation, processing = item.find("presentation"), item.find("resprocessing")
            assert presentation is not None and processing is not None  # variant_item writes both
            body = ET.tostring(presentation) + ET.tostring(processing)
            if body in seen:  # two students with the same parameters: one variant is enough
                continue
            seen.add(body)
            group.append(item)
    for group, seen in groups.values():
        if not seen:
            top.remove(group)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n", skipped


def manifest_xml(idents: list[str]) -> bytes:
    root = ET.Element("manifest", identifier="seqlab-exam", xmlns=CP_NS)
    ET.SubElement(root, "organizations")
    resources = ET.SubElement(root, "resources")
    for ident in idents:
        resource = ET.SubElement(
            resources, "resource", identifier=ident, type="imsqti_xmlv1p2", href=f"{ident}/{ident}.xml"
        )
        ET.SubElement(resource, "file", href=f"{ident}/{ident}.xml")
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _add(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


def write_qti(
    instances: list[ExamInstance], out: Path, name: str = "exam-qti.zip", *, variant_pool: bool = False
) -> tuple[Path, list[Skipped]]:
    """One zip with one quiz per student (or, with ``variant_pool``, one quiz drawing from the
    students' variants); returns its path and the questions that cannot travel."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    idents: list[str] = []
    skipped_all: list[Skipped] = []
    with zipfile.ZipFile(path, "w") as zf:
        if variant_pool:
            data, skipped_all = variant_pool_xml(instances)
            _add(zf, "seqlab-variants/seqlab-variants.xml", data)
            idents.append("seqlab-variants")
        for inst in instances if not variant_pool else ():
            ident = _ident(f"seqlab-{inst.student}")
            data, skipped = assessment_xml(inst)
            _add(zf, f"{ident}/{ident}.xml", data)
            idents.append(ident)
            skipped_all += skipped
        _add(zf, "imsmanifest.xml", manifest_xml(idents))
    # beside the package, not in it: an LMS importer may refuse files the manifest does not list
    lines = ["Questions that stay on the paper/HTML exam (an LMS quiz cannot check them):"]
    lines += sorted({f"{s.question}: {s.reason}" for s in skipped_all}) or ["none"]
    (out / "qti-skipped.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, skipped_all
