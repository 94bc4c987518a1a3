"""`seqlab exam qti`: a QTI 1.2 zip (Canvas's dialect) whose layout, XML and answers are checked."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import replace
from decimal import Decimal

import pytest
import yaml

from seqlab.cli import main
from seqlab.exam.draws import format_answer
from seqlab.exam.examfile import all_questions_exam, load_exam
from seqlab.exam.markdown import render_texts
from seqlab.exam.qti import numeric_range, travels, variant_item
from seqlab.exam.variants import make_instance
from seqlab.paths import DEFAULT_EXAM as FINAL_EXAM
from seqlab.tolerance import Tolerance

from ._qti_dtd import manifest_problems, qti_problems

NS = {"q": "http://www.imsglobal.org/xsd/ims_qtiasiv1p2", "cp": "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"}
STUDENTS = ("s001", "z9876543")


def _export(tmp_path, name="out"):
    roster = tmp_path / "students.txt"
    roster.write_text("# roster\n" + "\n".join(STUDENTS) + "\n", encoding="utf-8")
    out = tmp_path / name
    args = ["exam", "qti", "--exam", str(FINAL_EXAM), "--students", str(roster), "--out", str(out), "--per-student"]
    assert main(args) == 0
    return out


# What Canvas's QTI 1.2 importer reads (the structure its own exports have): item types named in
# itemmetadata, points_possible, the text as HTML mattext, and question groups as sections with a
# selection (selection_number, points_per_item). The packages are also checked against the ASI
# DTD's content models (tests/exam/_qti_dtd.py: no XSD validator can be had here).
CANVAS_TYPES = {"multiple_choice_question", "true_false_question", "numerical_question", "text_only_question"}


def _fields(item):
    return {
        f.findtext("q:fieldlabel", namespaces=NS): f.findtext("q:fieldentry", namespaces=NS)
        for f in item.iter(f"{{{NS['q']}}}qtimetadatafield")
    }


def _check_numeric(item, key_text, tolerance):
    """The paper's key, and a range that holds all the grader accepts around it and is no more than
    1/10000 of the margin wider on each side."""
    condition = item.find("q:resprocessing/q:respcondition/q:conditionvar", NS)
    assert item.find("q:presentation/q:response_str/q:render_fib", NS).get("fibtype") == "Decimal"
    key = Decimal(key_text)
    margin = Decimal(repr(tolerance.abs)) + Decimal(repr(tolerance.rel)) * abs(key)
    low = Decimal(condition.find("q:or/q:and/q:vargte", NS).text)
    high = Decimal(condition.find("q:or/q:and/q:varlte", NS).text)
    assert Decimal(condition.find("q:or/q:varequal", NS).text) == key
    assert low <= key - margin and key + margin <= high
    assert high - low <= 2 * margin * (1 + Decimal("1e-4"))


def test_qti_package_layout_xml_and_every_items_answer(tmp_path):
    out = _export(tmp_path)
    exam = load_exam(FINAL_EXAM)
    with zipfile.ZipFile(out / "exam-qti.zip") as zf:
        names = set(zf.namelist())
        manifest = ET.fromstring(zf.read("imsmanifest.xml"))
        resources = manifest.findall("cp:resources/cp:resource", NS)
        assert len(resources) == len(STUDENTS)
        hrefs = {r.get("href") for r in resources}
        assert names == hrefs | {"imsmanifest.xml"}
        assert all(r.get("type") == "imsqti_xmlv1p2" for r in resources)
        assert not manifest_problems(zf.read("imsmanifest.xml"), names)
        for student in STUDENTS:
            inst = make_instance(exam, student)
            root = ET.fromstring(zf.read(f"seqlab-{student}/seqlab-{student}.xml"))
            assessment = root.find("q:assessment", NS)
            assert student in assessment.get("title")
            top = assessment.find("q:section", NS)
            rules = top.find("q:item", NS)
            assert _fields(rules) == {"question_type": "text_only_question", "points_possible": "0"}
            assert "round only the final answer" in rules.findtext(".//q:mattext", namespaces=NS)
            for item in assessment.iter(f"{{{NS['q']}}}item"):
                fields = _fields(item)
                assert fields["question_type"] in CANVAS_TYPES and float(fields["points_possible"]) >= 0
                assert item.find("q:presentation/q:material/q:mattext", NS).get("texttype") == "text/html"
            assert not qti_problems(zf.read(f"seqlab-{student}/seqlab-{student}.xml"))
            travelling = [v for v in inst.variants if not travels(v)]
            assert len(travelling) >= 37  # of the final's 42 questions on a paper (5 are formulas or shapes)
            for v in travelling:
                if isinstance(v.answer, list) and len(v.answer) > 1:
                    # a vector: one group drawing all its entries, each worth points / n
                    group = top.find(f"q:section[@ident='{student}-{v.id}']", NS)
                    entries = group.findall("q:item", NS)
                    assert (
                        group.findtext(".//q:selection_number", namespaces=NS)
                        == str(len(v.answer))
                        == str(len(entries))
                    )
                    assert float(group.findtext(".//q:points_per_item", namespaces=NS)) * len(entries) == pytest.approx(
                        v.points
                    )
                    for entry, value in zip(entries, v.answer):
                        assert _fields(entry)["question_type"] == "numerical_question"
                        _check_numeric(entry, format_answer("numeric", value), v.tolerance)
                    continue
                item = top.find(f"q:item[@ident='{student}-{v.id}']", NS)
                fields = _fields(item)
                assert float(fields["points_possible"]) == v.points
                condition = item.find("q:resprocessing/q:respcondition/q:conditionvar", NS)
                assert item.find("q:resprocessing/q:respcondition/q:setvar", NS).text == "100"
                if v.question.kind in ("choice", "truefalse"):
                    labels = [label.get("ident") for label in item.iter(f"{{{NS['q']}}}response_label")]
                    key = condition.find("q:varequal", NS).text
                    assert key == v.answer and key in labels, v.id
                    assert fields["question_type"] == (
                        "multiple_choice_question" if v.question.kind == "choice" else "true_false_question"
                    )
                else:
                    assert fields["question_type"] == "numerical_question"
                    _check_numeric(item, v.key, v.tolerance)
    skipped = (out / "qti-skipped.txt").read_text(encoding="utf-8")
    assert "attn.var_qk: a formula" in skipped


MATHML = re.compile(r'<math xmlns="http://www.w3.org/1998/Math/MathML".*?</math>', re.S)


def test_qti_math_is_well_formed_mathml_and_no_tex_is_left(tmp_path):
    out = _export(tmp_path)
    formulas = 0
    with zipfile.ZipFile(out / "exam-qti.zip") as zf:
        for student in STUDENTS:
            root = ET.fromstring(zf.read(f"seqlab-{student}/seqlab-{student}.xml"))
            for mattext in root.iter(f"{{{NS['q']}}}mattext"):
                found = MATHML.findall(mattext.text)
                for mathml in found:
                    ET.fromstring(mathml)  # raises on broken MathML
                # the TeX kept for screen readers sits in the annotation; nothing else may be TeX
                shown = re.sub(r"<annotation[^>]*>.*?</annotation>", "", mattext.text, flags=re.S)
                assert not re.search(r"\\[(\[]|\$|\\(frac|begin|sqrt|mathbf)", shown), shown[:300]
                formulas += len(found)
    assert formulas > 0


def test_qti_export_is_byte_reproducible(tmp_path):
    a, b = _export(tmp_path, "a"), _export(tmp_path, "b")
    assert (a / "exam-qti.zip").read_bytes() == (b / "exam-qti.zip").read_bytes()


def test_formulas_and_all_or_nothing_vectors_do_not_travel():
    exam = load_exam(FINAL_EXAM)
    inst = make_instance(exam, "s001")
    by_kind = {}
    for v in inst.variants:
        vector = isinstance(v.answer, list) and len(v.answer) > 1
        by_kind.setdefault((v.question.kind, vector, v.partial["per_element"]), travels(v))
    assert by_kind[("symbolic", False, False)].startswith("a formula")
    assert (
        by_kind[("numeric", True, False)].startswith("a vector of")
        and "all or nothing" in by_kind[("numeric", True, False)]
    )
    assert by_kind[("numeric", True, True)] == by_kind[("numeric", False, False)] == ""
    assert by_kind[("choice", False, False)] == by_kind[("truefalse", False, False)] == ""


def test_variant_pool_is_one_quiz_of_question_groups(tmp_path):
    quiz = {
        "title": "Pooled quiz",
        "seed": 4,
        "parts": [
            {
                "title": "A",
                "questions": [
                    {"id": "rnn.param_count", "points": 2},
                    {"id": "attn.var_qk", "points": 2},
                    {
                        "pool": "concepts",
                        "draw": 1,
                        "points": 1,
                        "questions": ["concept.bottleneck", "concept.why_mask", "concept.lstm_vs_gru"],
                    },
                ],
            }
        ],
    }
    exam_path = tmp_path / "quiz.yaml"
    exam_path.write_text(yaml.safe_dump(quiz), encoding="utf-8")
    roster = tmp_path / "students.txt"
    roster.write_text("\n".join(f"v{i:03d}" for i in range(12)) + "\n", encoding="utf-8")
    out = tmp_path / "pool"
    assert (
        main(["exam", "qti", "--exam", str(exam_path), "--students", str(roster), "--out", str(out), "--variant-pool"])
        == 0
    )
    with zipfile.ZipFile(out / "exam-qti.zip") as zf:
        assert set(zf.namelist()) == {"imsmanifest.xml", "seqlab-variants/seqlab-variants.xml"}
        root = ET.fromstring(zf.read("seqlab-variants/seqlab-variants.xml"))
    groups = {g.get("title"): g for g in root.findall("q:assessment/q:section/q:section", NS)}
    assert set(groups) == {"rnn.param_count", "concepts"}  # the formula cannot travel
    for title, points, most in (("rnn.param_count", 2, 12), ("concepts", 1, 36)):
        group = groups[title]
        assert group.findtext("q:selection_ordering/q:selection/q:selection_number", namespaces=NS) == "1"
        assert (
            float(
                group.findtext(
                    "q:selection_ordering/q:selection/q:selection_extension/q:points_per_item", namespaces=NS
                )
            )
            == points
        )
        items = group.findall("q:item", NS)
        assert 1 < len(items) <= most, title  # different students, different variants
        for item in items:
            assert item.find("q:resprocessing/q:respcondition/q:conditionvar", NS) is not None
    # the exam's pool is one group holding variants of all its questions
    assert {i.get("ident").split("-", 1)[1] for i in groups["concepts"].findall("q:item", NS)} == {
        "concept.bottleneck",
        "concept.why_mask",
        "concept.lstm_vs_gru",
    }


def test_numeric_range_is_decimal_on_the_printed_key():
    """Exact decimal arithmetic, bounds rounded outward below the margin, written without exponents."""
    assert numeric_range("109.9511628", Tolerance(1e-3, 0.0)) == ("109.9511628", "109.84121", "110.06112")
    assert numeric_range("-0.1209671545", Tolerance(1e-3, 1e-4)) == ("-0.1209671545", "-0.12118813", "-0.12074618")
    assert numeric_range("256", Tolerance(1e-3, 1e-4)) == ("256", "255.7439", "256.2561")
    assert numeric_range("6939", Tolerance(0.0, 0.0)) == ("6939", "6939", "6939")
    assert numeric_range("1.5e-05", Tolerance(1e-3, 0.0)) == ("0.000015", "0.000014985", "0.000015015")


def test_a_numeric_item_does_not_carry_the_answers_last_bits():
    """An answer a few ulps away (another machine's matrix products) writes the same item."""
    inst = render_texts(make_instance(all_questions_exam(seed=20261215), "s0003"))
    v = inst.by_id()["rnn.eigen_growth"]  # matrix_power: its last bits vary with the CPU
    for ulps in (-3, 3):
        moved = v.answer
        for _ in range(abs(ulps)):
            moved = math.nextafter(moved, math.copysign(math.inf, ulps))
        other = replace(v, answer=moved, key=format_answer(v.question.kind, moved))
        assert ET.tostring(variant_item(other, "s0003")) == ET.tostring(variant_item(v, "s0003"))
