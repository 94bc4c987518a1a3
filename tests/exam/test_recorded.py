"""Every student keeps the exam they had: the same draw, text, key, points and rendered files.

Renders each exam file in ``exams/`` (through ``write_exam`` / ``write_key``, what ``seqlab exam
render`` and ``seqlab exam key`` call) for a fixed set of student ids, and the whole bank (every
question in every form) for a few, and compares a SHA-256 digest per (exam, student, artifact)
with the recording in ``tests/recorded/exams/digests.json``. A refactor of the bank or of the
rendering must leave every digest as it was; a change that means to alter exams (a new question,
a reworded template) re-records on purpose:

    SEQLAB_RECORD=1 .venv/bin/python -m pytest tests/exam/test_recorded.py

and the diff of the JSON names what changed. The artifacts:

- ``variants.json``: per question its number, id, points, form, parameters, key, tolerance,
  partial-credit rule and named mistakes (their values written as keys are) - the grade-relevant
  content, readable in a failure;
- the files ``write_exam`` (Markdown, HTML, notebook, blank answers, the check shapes) and
  ``write_key`` (key YAML, Markdown, HTML) write;
- the QTI item XML of the student's quiz and the class's one quiz of all ids (`variant-pool.xml`);
- the HTML that WeasyPrint typesets into the PDF (paper and key). The PDF bytes themselves are
  not compared: WeasyPrint's output depends on its version and the fonts installed, and laying
  out a PDF costs seconds a paper, while its input page is this HTML.
- ``bank/registry``: every question's declaration (kind, title, sections, exercises, forms,
  template, tolerance, hint) in registry order, which ``docs/coverage.md`` and the bank preview
  follow.

The slow renderings (HTML with MathML, notebooks, the PDF's SVG math) run for the first few ids
only: they are functions of the same Markdown the cheap artifacts already pin for every id.

What each artifact's bytes may depend on (package versions, never the CPU's vector units) is
listed in ``tests/recorded/README.md``; ``test_qti_is_the_same_on_other_cpu_features`` checks
the QTI, whose numbers come from answers whose last bits do vary with them.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from seqlab.exam.bank import load_bank
from seqlab.exam.draws import format_answer
from seqlab.exam.examfile import Exam, ExamQuestion, all_questions_exam, load_exam
from seqlab.exam.model import REGISTRY
from seqlab.exam.pdf import paper_html
from seqlab.exam.qti import assessment_xml
from seqlab.exam.qti_pool import one_quiz_xml
from seqlab.exam.render import write_exam, write_key
from seqlab.exam.variants import ExamInstance, make_instance
from seqlab.paths import COURSE_ROOT

RECORDING = Path(__file__).parents[1] / "recorded" / "exams" / "digests.json"
RECORD = os.environ.get("SEQLAB_RECORD") == "1"

# 25 ids of the shapes real rosters have (numbers, letters and digits, e-mail-like, dashes)
STUDENTS = [f"s{n:04d}" for n in (1, 2, 3, 17, 42, 99, 123, 500, 1000, 4321)] + [
    "ab12cd",
    "z9",
    "A",
    "jane.doe@uni.edu",
    "x-1_y",
    "c1234567",
    "k7654321",
    "m0000001",
    "student_07",
    "Q9",
    "r2d2",
    "t1000",
    "e.m.c2",
    "ID-2026-001",
    "n42n",
]
FULL_RENDER = STUDENTS[:2]  # also HTML, notebook and key pages
PAPER_RENDER = STUDENTS[:1]  # also the PDF's HTML (SVG math is the slowest part)
BANK_STUDENTS = STUDENTS[:4]


def exam_files() -> list[Path]:
    """The exam files in exams/ (concepts.yaml there is question data, a list, not an exam)."""
    files = sorted((COURSE_ROOT / "exams").glob("*.yaml"))
    return [
        p for p in files if isinstance(data := yaml.safe_load(p.read_text(encoding="utf-8")), dict) and "parts" in data
    ]


def every_form_exam() -> Exam:
    """The whole bank, each question once per form: every generator and template is drawn."""
    base = all_questions_exam(seed=20261215)
    questions = tuple(
        ExamQuestion(question=eq.question, points=eq.points, part=eq.part, per_element=eq.per_element, form=form)
        for eq in base.questions
        for form in (eq.question.forms or (None,))
    )
    return Exam(title=base.title, seed=base.seed, questions=questions, parts=base.parts)


def _digest(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()[:20]


def _jsonable(x):
    """Parameters are plain data, but a few hold tuples: JSON them as lists, sorted keys."""
    return json.loads(json.dumps(x, sort_keys=True, default=str))


def variants_record(inst: ExamInstance) -> str:
    rows = []
    for v in inst.variants:
        rows.append(
            {
                "number": v.number,
                "id": v.id,
                "points": v.points,
                "form": v.form,
                "params": _jsonable(v.params),
                "key": v.key,
                "tolerance": repr(v.tolerance),
                "partial": _jsonable(v.partial),
                "mistakes": {
                    name: [format_answer(v.question.kind, m.value), m.feedback]
                    for name, m in sorted(v.mistakes.items())
                },
            }
        )
    return json.dumps(rows, sort_keys=True, indent=0)


def registry_record() -> str:
    load_bank()  # the registry fills on import: record it whole, whatever ran before
    rows = [
        [
            q.id,
            q.kind,
            q.title,
            list(q.sections),
            list(q.exercises),
            list(q.forms),
            q.topic,
            q.template,
            repr(q.tolerance),
            q.answer_hint,
            q.valid is not None,
        ]
        for q in REGISTRY.values()
    ]
    return json.dumps(rows, indent=0)


def paper_digests(name: str, exam: Exam, students: list[str], full: list[str], paper: list[str], tmp: Path) -> dict:
    digests: dict[str, str] = {}
    instances = []
    for student in students:
        inst = make_instance(exam, student)
        instances.append(inst)
        at = f"{name}/{student}"
        digests[f"{at}/variants.json"] = _digest(variants_record(inst))
        digests[f"{at}/qti.xml"] = _digest(assessment_xml(inst)[0])
        out = tmp / name / student
        written = write_exam(inst, out, notebook=student in full, html=student in full)
        if student in full:
            written += write_key(inst, out)
        for path in written:
            digests[f"{at}/{path.name.replace(student, 'ID')}"] = _digest(path.read_bytes())
        if student in paper:
            digests[f"{at}/paper.html"] = _digest(paper_html(inst))
            digests[f"{at}/paper-key.html"] = _digest(paper_html(inst, key=True))
    digests[f"{name}/variant-pool.xml"] = _digest(one_quiz_xml(instances)[0])
    return digests


def qti_digests() -> dict[str, str]:
    """The QTI entries of ``current_digests`` alone: the per-student quizzes and the variant pools."""
    digests = {}
    for name, exam, students in [(p.stem, load_exam(p), STUDENTS) for p in exam_files()] + [
        ("bank", every_form_exam(), BANK_STUDENTS)
    ]:
        instances = [make_instance(exam, student) for student in students]
        digests |= {f"{name}/{inst.student}/qti.xml": _digest(assessment_xml(inst)[0]) for inst in instances}
        digests[f"{name}/variant-pool.xml"] = _digest(one_quiz_xml(instances)[0])
    return digests


def current_digests(tmp: Path) -> dict[str, str]:
    digests = {"bank/registry": _digest(registry_record())}
    for path in exam_files():
        digests |= paper_digests(path.stem, load_exam(path), STUDENTS, FULL_RENDER, PAPER_RENDER, tmp)
    digests |= paper_digests("bank", every_form_exam(), BANK_STUDENTS, BANK_STUDENTS[:1], [], tmp)
    return digests


@pytest.mark.slow  # ~4 s: every exam form rendered for 25 ids
def test_exams_are_as_recorded(tmp_path):
    digests = current_digests(tmp_path)
    if RECORD:
        RECORDING.parent.mkdir(parents=True, exist_ok=True)
        RECORDING.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    recorded = json.loads(RECORDING.read_text(encoding="utf-8"))
    changed = sorted(k for k in recorded.keys() & digests.keys() if recorded[k] != digests[k])
    missing, new = sorted(recorded.keys() - digests.keys()), sorted(digests.keys() - recorded.keys())
    assert not (changed or missing or new), (
        f"exams differ from the recording: changed {changed[:20]}, no longer produced {missing[:20]}, "
        f"new {new[:20]} ({len(changed)}, {len(missing)}, {len(new)} in all); if intended, re-record "
        "with SEQLAB_RECORD=1"
    )


def test_the_recording_covers_every_exam_and_question():
    """The recording is not a sample that misses what a refactor could break."""
    recorded = json.loads(RECORDING.read_text(encoding="utf-8"))
    for path in exam_files():
        for student in STUDENTS:
            assert f"{path.stem}/{student}/variants.json" in recorded
    exam = every_form_exam()
    assert {eq.id for eq in exam.questions} == set(REGISTRY)
    assert sum(len(q.forms) or 1 for q in REGISTRY.values()) == len(exam.questions)
    assert f"bank/{BANK_STUDENTS[0]}/key-ID.md" in recorded


def _numpy_avx512_features() -> list[str]:
    """numpy's dispatched AVX-512 targets, in the installed numpy's spelling: numpy 2.4 groups them
    as X86_V4 (+ AVX512_ICL, AVX512_SPR) and ignores, with only an ImportWarning, the AVX512F,
    AVX512_SKX, ... names of earlier versions, so a fixed list would silently disable nothing."""
    import numpy

    core = getattr(numpy, "_core", None) or numpy.core
    return [f for f in core._multiarray_umath.__cpu_dispatch__ if f.startswith("AVX512") or f == "X86_V4"]


@pytest.mark.slow  # ~6 s: a fresh interpreter renders every exam's QTI for 25 ids
def test_qti_is_the_same_on_other_cpu_features():
    """The QTI packages do not depend on the CPU's vector units: rendered in a process whose torch,
    MKL and numpy kernels take other code paths, they are the recorded bytes. MKL's is the one that
    moves answers here: its AVX-512 and AVX2/SSE4.2 matrix products (``matrix_power`` in
    ``rnn.eigen_growth``) round differently in the last bits, which ``repr`` of the answer would
    carry into the range."""
    env = os.environ | {
        "ATEN_CPU_CAPABILITY": "default",  # torch's own vectorized kernels, without AVX2/AVX-512
        "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",  # MKL's BLAS on its oldest kernels
        "NPY_DISABLE_CPU_FEATURES": " ".join(_numpy_avx512_features()),
    }
    code = "import json; from tests.exam.test_recorded import qti_digests; print(json.dumps(qti_digests()))"
    done = subprocess.run(
        # an ImportWarning is how numpy refuses a feature name it does not know: fail on it
        [sys.executable, "-W", "error::ImportWarning", "-c", code],
        cwd=Path(__file__).parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    digests = json.loads(done.stdout.splitlines()[-1])
    recorded = json.loads(RECORDING.read_text(encoding="utf-8"))
    changed = sorted(k for k in digests if recorded.get(k) != digests[k])
    assert digests and not changed, (
        f"QTI differs from the recording under {env['MKL_ENABLE_INSTRUCTIONS']=}: {changed[:20]}"
    )
