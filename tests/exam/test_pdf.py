"""`seqlab exam render --pdf` / `key --pdf`: real PDFs (WeasyPrint), read back with poppler's tools."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from seqlab.cli import main
from seqlab.exam.examfile import exam_from_dict, load_exam
from seqlab.exam.pdf import math_svg, typeset
from seqlab.exam.variants import make_instance
from seqlab.paths import DEFAULT_EXAM as FINAL_EXAM

STUDENTS = ("s001", "q7654321")
# A short exam with math, a formula and a concept question, in Chinese too: quick to lay out.
QUIZ = {
    "title": "Quiz (第七讲)",
    "seed": 3,
    "parts": [
        {
            "title": "A §七",
            "questions": [
                {"id": "opt.adam_steps", "points": 2},
                {"id": "attn.var_qk", "points": 2},
                "concept.bottleneck",
            ],
        }
    ],
}


@pytest.fixture(autouse=True)
def _poppler():
    # poppler-utils is a CI dependency (scripts/system-packages.sh): without it the PDF cannot be read back, which fails
    assert shutil.which("pdftotext") and shutil.which("pdftoppm"), "install poppler-utils (pdftotext, pdftoppm)"


def _pages(path) -> list[str]:
    text = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(path), "-"], check=True, capture_output=True, text=True
    ).stdout
    return [re.sub(r"\s+", " ", page) for page in text.split("\f") if page.strip()]


def _ink(png) -> float:
    from PIL import Image

    gray = Image.open(png).convert("L")
    return sum(gray.histogram()[:128]) / (gray.width * gray.height)


@pytest.mark.slow  # ~7 s: WeasyPrint lays out and draws every page of the final exam
def test_render_pdf_every_question_answer_box_and_page_number(tmp_path):
    out = tmp_path / "paper"
    student = STUDENTS[1]
    args = ["exam", "render", "--exam", str(FINAL_EXAM), "--out", str(out), "--pdf", "--no-html", "--student", student]
    assert main(args) == 0
    pages = _pages(out / f"exam-{student}.pdf")
    for number, page in enumerate(pages, 1):
        assert f"Student {student}" in page and f"Page {number} of {len(pages)}" in page, number
    text = " ".join(pages)
    for v in make_instance(load_exam(FINAL_EXAM), student).variants:
        assert f"Question {v.number} ({v.points:g} point" in text and v.question.title in text, v.id
        assert f"Answer {v.number}" in text, v.id  # the box to write in
    assert "$" not in text and "\\frac" not in text and "\\begin" not in text  # math typeset, not raw TeX
    # one student: the combined file is the same paper
    assert (out / "exams-all.pdf").read_bytes() == (out / f"exam-{student}.pdf").read_bytes()
    subprocess.run(
        [
            "pdftoppm",
            "-r",
            "40",
            "-f",
            "1",
            "-l",
            "2",
            "-png",
            str(out / f"exam-{student}.pdf"),
            str(tmp_path / "page"),
        ],
        check=True,
    )
    shots = sorted(tmp_path.glob("page*.png"))
    assert len(shots) == 2
    for png in shots:
        assert 0.005 < _ink(png) < 0.5, png  # text on white paper: neither blank nor solid


def test_render_pdf_two_students_each_paper_numbered_alone_and_all_in_one_file(tmp_path):
    exam_path = tmp_path / "quiz.yaml"
    exam_path.write_text(yaml.safe_dump(QUIZ, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "paper"
    args = ["exam", "render", "--exam", str(exam_path), "--out", str(out), "--pdf", "--no-html"]
    for s in STUDENTS:
        args += ["--student", s]
    assert main(args) == 0
    page_counts = []
    for student in STUDENTS:
        pages = _pages(out / f"exam-{student}.pdf")
        page_counts.append(len(pages))
        for number, page in enumerate(pages, 1):
            assert f"Student {student}" in page and f"Page {number} of {len(pages)}" in page, (student, number)
    combined = _pages(out / "exams-all.pdf")
    assert len(combined) == sum(page_counts)
    assert f"Student {STUDENTS[1]}" in combined[page_counts[0]] and "Page 1 of" in combined[page_counts[0]]
    assert f"Student {STUDENTS[0]}" in combined[page_counts[0] - 1]


def test_key_pdf_holds_answers_and_solutions(tmp_path):
    exam_path = tmp_path / "quiz.yaml"
    exam_path.write_text(yaml.safe_dump(QUIZ, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "keys"
    assert main(["exam", "key", "--exam", str(exam_path), "--student", "s001", "--out", str(out), "--pdf"]) == 0
    pages = _pages(out / "key-s001.pdf")
    text = " ".join(pages)
    inst = make_instance(exam_from_dict(QUIZ), "s001")
    assert "answer key" in text and "第七讲" in text and "§七" in text
    for v in inst.variants:
        assert f"Answer: {v.key}" in text, v.id
    assert all("Student s001" in page for page in pages)
    assert (out / "keys-all.pdf").is_file()
    # the same exam gives the same bytes (no dates, no random ids in the PDF)
    again = tmp_path / "again"
    assert main(["exam", "key", "--exam", str(exam_path), "--student", "s001", "--out", str(again), "--pdf"]) == 0
    assert (again / "key-s001.pdf").read_bytes() == (out / "key-s001.pdf").read_bytes()


def test_math_becomes_svg_and_a_bad_formula_is_named():
    html = typeset(r"Let $W = \begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}$ and $$\frac{a}{b}$$")
    assert html.count('<img class="math"') == 2 and "data:image/svg+xml;base64," in html
    assert "$" not in re.sub(r'alt="[^"]*"', "", html)
    assert "<math" not in html  # WeasyPrint draws no MathML: the screen exam's form must not reach the PDF
    assert 'alt="W = \\begin{pmatrix} 1 &amp; 2' in math_svg(r"W = \begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}")
