"""A paper's files: what ``seqlab exam render`` and ``seqlab exam key`` write for each student.

The exam (Markdown, the HTML page, the notebook if asked), the blank answers file, the check
shapes, and the key (YAML to grade, Markdown, HTML). The texts come from ``markdown``, ``html``
and ``notebook``; output is byte-for-byte reproducible: no dates, no random ids, sorted YAML keys.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from .html import exam_html, key_html
from .markdown import exam_markdown, key_markdown
from .marking import answer_shapes
from .notebook import exam_notebook
from .variants import ExamInstance


def key_answers(inst: ExamInstance) -> dict:
    """The key in the answers format: grading it must give full marks."""
    return {"student": inst.student, "answers": {v.id: v.key for v in inst.variants}}


def dump_yaml(data) -> str:
    return yaml.safe_dump(data, sort_keys=True, allow_unicode=True, default_flow_style=False, width=100)


def blank_answers(inst: ExamInstance) -> str:
    lines = [
        f"# Answers for {inst.exam.title}: fill in each answer between the quotes.",
        f"student: {json.dumps(inst.student)}",
        "answers:",
    ]
    lines += [f'  {v.id}: ""' for v in inst.variants]
    return "\n".join(lines) + "\n"


def write_exam(inst: ExamInstance, out: Path, *, notebook: bool = False, html: bool = True) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sid = inst.student
    written = []
    # what each answer must look like, never the key: the student's own `seqlab exam check` input
    shapes = json.dumps({"student": sid, "questions": answer_shapes(inst)}, indent=1, sort_keys=True) + "\n"
    for name, text in (
        (f"exam-{sid}.md", exam_markdown(inst)),
        (f"answers-{sid}.yaml", blank_answers(inst)),
        (f"check-{sid}.json", shapes),
    ):
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    if html:
        (out / f"exam-{sid}.html").write_text(exam_html(inst), encoding="utf-8")
        written.append(out / f"exam-{sid}.html")
    if notebook:
        import nbformat

        path = out / f"exam-{sid}.ipynb"
        path.write_text(nbformat.writes(exam_notebook(inst)) + "\n", encoding="utf-8")
        written.append(path)
    return written


def write_key(inst: ExamInstance, out: Path) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sid = inst.student
    key_yaml = out / f"key-{sid}.yaml"
    key_yaml.write_text(
        f"# Answer key for {inst.exam.title}; `seqlab exam grade` on this file gives full marks.\n"
        + dump_yaml(key_answers(inst)),
        encoding="utf-8",
    )
    key_md = out / f"key-{sid}.md"
    key_md.write_text(key_markdown(inst), encoding="utf-8")
    key_page = out / f"key-{sid}.html"
    key_page.write_text(key_html(inst), encoding="utf-8")
    return [key_yaml, key_md, key_page]
