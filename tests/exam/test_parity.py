"""One paper, every medium: each paper-wide rule of a medium and each question's partial-credit line,
in the words the Markdown prints them, is in that medium: the screen's (Markdown, HTML page,
notebook), the printed paper's (PDF) and the LMS quiz's (``qti.quiz_rules``). Time, aids,
conventions, grading and rounding are the same on all three; how answers are written and what
partial credit is given are each medium's own, and no medium states another's.

Words are compared, not markup: the formulas inside a rule ($h_0$) are typeset differently by
each medium (MathML, SVG, none), so they are left out, and a rule is found when its words occur
in order within a window a little longer than the rule (a page header may interrupt a PDF).
"""

from __future__ import annotations

import html.parser
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile

import pytest

from seqlab.exam.examfile import load_exam
from seqlab.exam.html import exam_html
from seqlab.exam.markdown import ROUNDING_POLICY, exam_markdown, paper_rules, partial_credit_rule, render_texts
from seqlab.exam.notebook import exam_notebook
from seqlab.exam.qti import assessment_xml, mistakes_credited, quiz_rules, travels
from seqlab.exam.variants import make_instance
from seqlab.paths import DEFAULT_EXAM
from tests.exam.test_recorded import STUDENTS

EXAM = load_exam(DEFAULT_EXAM)


def words(text: str) -> list[str]:
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)
    return re.findall(r"[a-z]{3,}", text.lower())


class _Text(html.parser.HTMLParser):
    """An HTML page's words as a reader sees them: no tags, no TeX annotations."""

    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag == "annotation"

    def handle_endtag(self, tag):
        self.skip -= tag == "annotation"

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def html_words(page: str) -> list[str]:
    reader = _Text()
    reader.feed(page)
    return words(" ".join(reader.parts))


def carries(medium: list[str], rule: list[str]) -> bool:
    """``rule``'s words in order in ``medium``, within a window of twice the rule's length."""
    for start in (i for i, w in enumerate(medium) if rule and w == rule[0]):
        j, end = 0, min(len(medium), start + 2 * len(rule) + 10)
        for w in medium[start:end]:
            if w == rule[j]:
                j += 1
                if j == len(rule):
                    return True
    return False


# Which rules each output carries: the medium it is
MEDIUM = {"markdown": "screen", "html": "screen", "notebook": "screen", "pdf": "paper", "qti": "lms"}


def medium_rules(inst, medium: str) -> list[tuple[str, str]]:
    return quiz_rules(inst, []) if medium == "lms" else paper_rules(inst, medium)


def instructions(inst, medium: str = "screen") -> dict[str, list[str]]:
    """What a medium must carry: its rules and each question's partial credit (in the quiz, of the
    questions that travel)."""
    wanted = {name: words(text) for name, text in medium_rules(inst, medium)}
    for v, eq in zip(inst.variants, inst.questions):
        # a quiz item promises only the named-mistake shares the quiz's scoring gives
        rule = partial_credit_rule(v, eq, credited=set(mistakes_credited(v)) if medium == "lms" else None)
        if rule and not (medium == "lms" and travels(v)):
            wanted[f"question {v.number}: partial credit"] = words(rule)
    return wanted


def media(inst) -> dict[str, list[str]]:
    notebook = exam_notebook(inst)
    quiz, _ = assessment_xml(inst)
    mattexts = [m.text or "" for m in ET.fromstring(quiz).iter("{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}mattext")]
    return {
        "markdown": words(exam_markdown(inst)),
        "html": html_words(exam_html(inst)),
        "notebook": words("\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")),
        "qti": html_words(" ".join(mattexts)),
    }


def missing(inst, found: dict[str, list[str]]) -> list[str]:
    gaps = []
    for medium, text in found.items():
        for name, rule in instructions(inst, MEDIUM[medium]).items():
            if not carries(text, rule):
                gaps.append(f"{inst.student} {medium}: {name}")
    return gaps


def test_every_medium_carries_every_rule_for_one_paper():
    inst = render_texts(make_instance(EXAM, STUDENTS[0]))
    assert not missing(inst, media(inst))
    # time, aids, conventions, rounding and partial credit are among them
    for medium in ("screen", "paper", "lms"):
        names = {name for name, _ in medium_rules(inst, medium)}
        assert {
            "Time",
            "Calculator",
            "Computer",
            "Conventions",
            "Rounding",
            "Partial credit",
            "Writing answers",
        } <= names
    assert any(name.endswith("partial credit") for name in instructions(inst))


def test_each_medium_states_only_its_own_rules():
    """No computer-only rule on paper; no arithmetic, fraction or check script promised to an LMS
    number field; the screen keeps its typed syntax and check script."""
    inst = render_texts(make_instance(EXAM, STUDENTS[0]))
    said = {m: " ".join(t for _, t in medium_rules(inst, m)) for m in ("screen", "paper", "lms")}
    for computer_only in ("check-", "answers-", "type", "notebook", "copied from the page", "`"):
        assert computer_only not in said["paper"].lower(), computer_only
    for not_in_lms in ("sqrt(2)/2", "1/3", "python3", "check cell", "1/n of the points, except entries"):
        assert not_in_lms not in said["lms"], not_in_lms
    assert "reads no arithmetic or fraction" in said["lms"] and "no check script" in said["lms"]
    assert "sqrt(2)/2" in said["screen"] and f"check-{inst.student}.py" in said["screen"]
    assert "work in the space above the box" in said["paper"]
    # the questions' answer lines on paper name no typed syntax either
    from seqlab.exam.markdown import answer_format

    assert not any("`" in answer_format(v, "paper") or "sqrt" in answer_format(v, "paper") for v in inst.variants)
    # nor do the quiz's items: an LMS number field reads no arithmetic
    mattexts = ET.fromstring(assessment_xml(inst)[0]).iter("{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}mattext")
    quiz = " ".join(m.text or "" for m in mattexts)
    assert "sqrt(2)/2" not in quiz and "arithmetic such as" not in quiz


def test_a_rule_left_out_is_noticed():
    inst = render_texts(make_instance(EXAM, STUDENTS[1]))
    found = media(inst)
    page = exam_html(inst)
    assert ROUNDING_POLICY in page
    found["html"] = html_words(page.replace(ROUNDING_POLICY, ""))
    assert missing(inst, found) == [f"{inst.student} html: Rounding"]


@pytest.mark.bank  # 25 papers in four media and 25 PDFs: minutes (WeasyPrint lays out each paper)
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed")
def test_every_medium_carries_every_rule_for_25_papers(tmp_path):
    from seqlab.exam.pdf import write_pdfs

    gaps = []
    for student in STUDENTS:
        inst = render_texts(make_instance(EXAM, student))
        found = media(inst)
        (pdf,) = [p for p in write_pdfs([inst], tmp_path) if p.name == f"exam-{student}.pdf"]
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
        found["pdf"] = words(text)
        gaps += missing(inst, found)
    assert not gaps, gaps[:20]


def test_qti_quiz_zip_holds_the_same_rules(tmp_path):
    from seqlab.exam.qti_package import write_qti

    inst = render_texts(make_instance(EXAM, STUDENTS[2]))
    path, _ = write_qti([inst], tmp_path, per_student=True)
    with zipfile.ZipFile(path) as zf:
        xml = zf.read(f"seqlab-{inst.student}/seqlab-{inst.student}.xml")
    assert xml == assessment_xml(inst)[0]


def test_no_student_medium_names_the_mistake_its_partial_credit_pays():
    """A partial-credit line that names the mistake ("half marks for leaving out the bias")
    points at the trap: every student-facing medium says only that a known mistake earns its
    share; the key names it."""
    from seqlab.exam.markdown import key_markdown, paper_context
    from seqlab.exam.model import mistake_words

    inst = render_texts(make_instance(EXAM, STUDENTS[0]))
    named = {mistake_words(n) for eq in inst.questions for n, f in eq.mistakes.items() if f}
    assert len(named) >= 4  # the final pays several named mistakes
    quiz, _ = assessment_xml(inst)
    # the PDF's page is rendered from this context (laying it out costs a second)
    page = " ".join(item["partial"] for part in paper_context(inst, "paper")["parts"] for item in part["variants"])
    for medium, text in {
        "markdown": exam_markdown(inst),
        "notebook": "\n".join(c.source for c in exam_notebook(inst).cells),
        "qti": quiz.decode() if isinstance(quiz, bytes) else quiz,
        "paper": page,
    }.items():
        said = [m for m in named if m in " ".join(text.split())]
        assert not said, (medium, said)
    key = " ".join(key_markdown(inst).split())
    assert all(m in key for m in named)
