"""`seqlab exam qti` by default: the class's one quiz. Every question of every listed paper is in it
as a question group the LMS draws from (per-entry vectors as one group per entry), or is named in
the quiz's rules with why; the package fits the QTI 1.2 ASI DTD's content models."""

from __future__ import annotations

import contextlib
import io
import re
import xml.etree.ElementTree as ET
import zipfile
from decimal import Decimal

import pytest
import yaml

from seqlab.cli import main
from seqlab.exam.draws import format_answer
from seqlab.exam.examfile import load_exam
from seqlab.exam.marking import expected_entries
from seqlab.exam.qti import entries, numeric_range, travels
from seqlab.exam.variants import make_instance
from seqlab.paths import DEFAULT_EXAM as FINAL_EXAM

from ._qti_dtd import manifest_problems, qti_problems

NS = {"q": "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"}
# every shape a question can take on the way to an LMS, in a quiz small enough to build in a blink
QUIZ = {
    "title": "Shapes quiz",
    "seed": 11,
    "parts": [
        {
            "title": "A",
            "questions": [
                {"id": "rnn.param_count", "points": 2},  # one number
                {"id": "opt.momentum_steps", "points": 4, "partial": {"per_element": True}},  # 2 entries, per entry
                {"id": "attn.var_qk", "points": 2},  # a formula: stays
                {"id": "rnn.sample_token", "points": 2},  # 2 entries, all or nothing: stays
                {"pool": "concepts", "draw": 1, "points": 1, "questions": ["concept.bottleneck", "concept.why_mask"]},
                {
                    "pool": "pairs",  # vectors of one length, per entry: entry groups drawing from both
                    "draw": 1,
                    "points": 4,
                    "questions": [
                        {"id": "lstm.cell_update", "partial": {"per_element": True}},
                        {"id": "rnn.embedding_lookup", "partial": {"per_element": True}},
                    ],
                },
                {
                    "pool": "uneven",  # 2 and 3 entries: the group's items could not be worth the same
                    "draw": 1,
                    "points": 3,
                    "questions": [
                        {"id": "rnn.cell_step", "partial": {"per_element": True}},
                        {"id": "opt.clip_vector", "partial": {"per_element": True}},
                    ],
                },
            ],
        }
    ],
}
STUDENTS = [f"q{i:03d}" for i in range(3)]


def _quiz(tmp_path, *extra):
    exam_path = tmp_path / "quiz.yaml"
    exam_path.write_text(yaml.safe_dump(QUIZ), encoding="utf-8")
    roster = tmp_path / "students.txt"
    roster.write_text("\n".join(STUDENTS) + "\n", encoding="utf-8")
    out = tmp_path / "qti"
    assert main(["exam", "qti", "--exam", str(exam_path), "--students", str(roster), "--out", str(out), *extra]) == 0
    return exam_path, out


@pytest.fixture(scope="module")
def one_quiz(tmp_path_factory):
    """The quiz built once for the module's tests: (exam file, output folder, printed, papers)."""
    tmp_path = tmp_path_factory.mktemp("one-quiz")
    exam_path = tmp_path / "quiz.yaml"
    exam_path.write_text(yaml.safe_dump(QUIZ), encoding="utf-8")
    roster = tmp_path / "students.txt"
    roster.write_text("\n".join(STUDENTS) + "\n", encoding="utf-8")
    out = tmp_path / "qti"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["exam", "qti", "--exam", str(exam_path), "--students", str(roster), "--out", str(out)]) == 0
    exam = load_exam(exam_path)
    return exam_path, out, buffer.getvalue(), [make_instance(exam, s) for s in STUDENTS]


def _groups(xml: bytes) -> dict[str, ET.Element]:
    root = ET.fromstring(xml)
    return {g.get("title"): g for g in root.findall("q:assessment/q:section/q:section", NS)}


def _text(element: ET.Element) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", m.text or "") for m in element.iter(f"{{{NS['q']}}}mattext"))


def _answer(item: ET.Element) -> str:
    """The answer an item gives full marks for: a choice's label, a number's key."""
    condition = item.find("q:resprocessing/q:respcondition/q:conditionvar", NS)
    return condition.findtext("q:varequal", namespaces=NS) or condition.findtext("q:or/q:varequal", namespaces=NS)


def _key(v, printed: str) -> str:
    return str(v.answer) if v.question.kind in ("choice", "truefalse") else numeric_range(printed, v.tolerance)[0]


def test_one_quiz_carries_every_question_or_its_rules_say_why(one_quiz):
    _exam, out, printed, papers = one_quiz
    with zipfile.ZipFile(out / "exam-qti.zip") as zf:
        names = set(zf.namelist())
        assert names == {"imsmanifest.xml", "seqlab-variants/seqlab-variants.xml"}
        xml = zf.read("seqlab-variants/seqlab-variants.xml")
        assert qti_problems(xml) == [] and manifest_problems(zf.read("imsmanifest.xml"), names) == []
    groups = _groups(xml)
    rules = ET.fromstring(xml).find("q:assessment/q:section/q:item", NS)
    said = _text(rules)
    assert "Not in this quiz" in said and "Checking" not in said  # the class's quiz names no student
    assert "Type each number as a decimal" in said and "reads no arithmetic" in said  # an LMS number field
    for inst in papers:
        student = inst.student
        for v, eq in zip(inst.variants, inst.questions):
            slot = eq.pool or eq.id
            if travels(v) or slot == "uneven":
                why = travels(v) or "entries, and the items an LMS group draws from are all worth the same"
                assert f"Question {v.number} (" in said and why in said, (v.id, why)
                continue
            n = entries(v)
            titles = [slot] if n == 1 else [f"{slot} (entry {i + 1} of {n})" for i in range(n)]
            for title in titles:
                group = groups[title]
                assert float(group.findtext(".//q:points_per_item", namespaces=NS)) * n == pytest.approx(eq.points)
                assert group.findtext(".//q:selection_number", namespaces=NS) == "1"
            if n > 1:  # a vector: one variant for the class, each entry's group holding one item
                assert all(len(groups[title].findall("q:item", NS)) == 1 for title in titles), v.id
                continue
            # this student's variant is among the items drawn from: its own, or another student's with
            # the same question and key (the same numbers drawn: one item serves both)
            offered = {(i.get("title").split(" (")[0], _answer(i)) for i in groups[slot].findall("q:item", NS)}
            assert (f"{v.number}. {v.question.title}", _key(v, v.key)) in offered, (student, v.id)
    assert "one quiz for the class" in printed and "of the 7 questions" in printed


def test_each_entry_of_a_vector_is_one_variant_for_the_class_with_its_own_key(one_quiz):
    """The LMS's groups do not nest, so a vector question's entries are each a group: every group
    holds the same student's variant (the first listed), so no LMS student meets the entries of
    two variants (three blind audits found them drawn apart)."""
    _exam, out, _printed, papers = one_quiz
    with zipfile.ZipFile(out / "exam-qti.zip") as zf:
        groups = _groups(zf.read("seqlab-variants/seqlab-variants.xml"))
    inst = papers[0]
    v = inst.by_id()["opt.momentum_steps"]
    for i, value in enumerate(expected_entries(v)):
        (item,) = groups[f"opt.momentum_steps (entry {i + 1} of 2)"].findall("q:item", NS)
        assert item.get("ident") == f"{inst.student}-{v.id}-{i + 1}"
        text = _text(item)
        assert f"entry {i + 1} of the 2" in text and "continued" not in text  # the whole question each time
        condition = item.find("q:resprocessing/q:respcondition/q:conditionvar", NS)
        key = Decimal(format_answer("numeric", value))
        assert Decimal(condition.findtext("q:or/q:varequal", namespaces=NS)) == key
        low = Decimal(condition.findtext("q:or/q:and/q:vargte", namespaces=NS))
        high = Decimal(condition.findtext("q:or/q:and/q:varlte", namespaces=NS))
        assert low <= key <= high


def test_per_student_still_writes_one_quiz_each_and_fits_the_dtd(tmp_path):
    _exam, out = _quiz(tmp_path, "--per-student")
    with zipfile.ZipFile(out / "exam-qti.zip") as zf:
        names = set(zf.namelist())
        assert names == {"imsmanifest.xml"} | {f"seqlab-{s}/seqlab-{s}.xml" for s in STUDENTS}
        assert manifest_problems(zf.read("imsmanifest.xml"), names) == []
        for student in STUDENTS:
            xml = zf.read(f"seqlab-{student}/seqlab-{student}.xml")
            assert qti_problems(xml) == []
            rules = _text(ET.fromstring(xml).find("q:assessment/q:section/q:item", NS))
            assert "Not in this quiz" in rules and "a formula" in rules


def test_the_dtd_check_finds_what_it_is_for(one_quiz):
    """The structural check is no formality: a child out of the DTD's order, an unknown element and
    an enumerated attribute out of its values are each named."""
    _exam, out, _printed, _papers = one_quiz
    with zipfile.ZipFile(out / "exam-qti.zip") as zf:
        xml = zf.read("seqlab-variants/seqlab-variants.xml")
    root = ET.fromstring(xml)
    item = root.find(".//q:item/q:resprocessing/..", NS)
    item.insert(0, item.find("q:resprocessing", NS))  # resprocessing before itemmetadata
    assert any("do not fit" in p for p in qti_problems(ET.tostring(root)))
    bad = xml.replace(b'fibtype="Decimal"', b'fibtype="Float"', 1)
    assert any("fibtype='Float'" in p for p in qti_problems(bad))
    assert any(
        "does not know" in p
        for p in qti_problems(xml.replace(b"<mattext", b"<mat_text").replace(b"</mattext", b"</mat_text"))
    )


def test_both_flags_at_once_are_refused(tmp_path, capsys):
    exam_path = tmp_path / "quiz.yaml"
    exam_path.write_text(yaml.safe_dump(QUIZ), encoding="utf-8")
    code = main(
        [
            "exam",
            "qti",
            "--exam",
            str(exam_path),
            "--student",
            "q001",
            "--out",
            str(tmp_path / "o"),
            "--per-student",
            "--variant-pool",
        ]
    )
    assert code == 2 and "give one" in capsys.readouterr().err


@pytest.mark.bank
def test_the_finals_one_quiz_carries_what_travels_and_fits_the_dtd(tmp_path, capsys):
    """The final, five papers: every question that travels is in the class's one quiz, the same
    number on every paper; the others (formulas, vectors graded all or nothing) are named in its
    rules. The counts are the exam's own (a question added or dropped moves them)."""
    roster = tmp_path / "students.txt"
    roster.write_text("\n".join(f"s{i:03d}" for i in range(5)) + "\n", encoding="utf-8")
    exam = load_exam(FINAL_EXAM)
    papers = {s: make_instance(exam, s) for s in (f"s{i:03d}" for i in range(5))}
    counts = {s: (sum(not travels(v) for v in inst.variants), len(inst.variants)) for s, inst in papers.items()}
    assert len(set(counts.values())) == 1, counts  # the same on every paper
    carried, total = counts["s000"]
    assert 0 < carried < total
    out = tmp_path / "final"
    assert main(["exam", "qti", "--exam", str(FINAL_EXAM), "--students", str(roster), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"{carried} of the {total} questions" in printed
    # the vector questions every LMS student meets in s000's variant: named where the instructor reads
    shared = [v for v in papers["s000"].variants if not travels(v) and entries(v) > 1]
    listed = (out / "qti-skipped.txt").read_text(encoding="utf-8")
    assert shared and f"{len(shared)} question(s) with several entries are asked of every LMS student" in printed
    assert all(f"Question {v.number} ({v.id}): s000's variant" in listed for v in shared), listed
    with zipfile.ZipFile(out / "exam-qti.zip") as zf:
        xml = zf.read("seqlab-variants/seqlab-variants.xml")
        assert qti_problems(xml) == []
    said = _text(ET.fromstring(xml).find("q:assessment/q:section/q:item", NS))
    assert f"{total - carried} question(s) of the paper" in said
    groups = _groups(xml)
    for inst in papers.values():
        for v, eq in zip(inst.variants, inst.questions):
            if not travels(v):
                slot = eq.pool or eq.id
                assert (slot in groups) if entries(v) == 1 else (f"{slot} (entry 1 of {entries(v)})" in groups)
