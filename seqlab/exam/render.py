"""A paper's files: what ``seqlab exam render`` and ``seqlab exam key`` write for each student.

The exam (Markdown, the HTML page, the notebook if asked), the blank answers file, the check
shapes, and the key (YAML to grade, Markdown, HTML). The texts come from ``markdown``, ``html``
and ``notebook``; output is byte-for-byte reproducible: no dates, no random ids; answers files in paper order, each line keyed by id and numbered.
"""

from __future__ import annotations

import json
from pathlib import Path

from .html import exam_html, key_html
from .markdown import exam_markdown, key_markdown
from .marking import answer_shapes
from .notebook import exam_notebook
from .timing import check_fits
from .variants import ExamInstance


def key_answers(inst: ExamInstance) -> dict:
    """The key in the answers format: grading it must give full marks."""
    return {"student": inst.student, "answers": {v.id: v.key for v in inst.variants}}


def answers_yaml(inst: ExamInstance, header: str, values: dict[str, str]) -> str:
    """An answers file in paper order, each line keyed by the question's student-facing id (its
    number, ``Variant.answer_id``); the values JSON-quoted (a JSON string is a YAML double-quoted
    one). A key (``values`` given) names the bank id in each line's comment, for the instructor."""
    lines = [f"# {header}", f"student: {json.dumps(inst.student)}", "answers:"]
    lines += [
        f"  {v.answer_id}: {json.dumps(values.get(v.id, ''), ensure_ascii=False)}  # question {v.number}"
        + (f", {v.id}" if values else "")
        for v in inst.variants
    ]
    return "\n".join(lines) + "\n"


def blank_answers(inst: ExamInstance) -> str:
    return answers_yaml(inst, f"Answers for {inst.exam.title}: fill in each answer between the quotes.", {})


def check_script(inst: ExamInstance) -> str:
    """``check-ID.py``: ``check_script``'s source with this paper's answer shapes and the answer
    syntax's limits filled in (never the key)."""
    from . import check_script as script
    from .safeexpr import ALPHABET, FUNCTIONS, MAX_DEPTH, MAX_LENGTH, NUMBER_ASKED, NUMBER_FUNCTIONS

    paper = {
        "student": inst.student,
        "questions": answer_shapes(inst),
        "functions": {name: nargs for name, (_, nargs, _) in sorted(FUNCTIONS.items())},
        "number_functions": list(NUMBER_FUNCTIONS),
        "number_asked": NUMBER_ASKED,
        "alphabet": "".join(sorted(ALPHABET)),
        "max_length": MAX_LENGTH,
        "max_depth": MAX_DEPTH,
    }
    source = Path(script.__file__).read_text(encoding="utf-8")
    filled = "PAPER: dict = json.loads(" + repr(json.dumps(paper, sort_keys=True)) + ")"
    return "#!/usr/bin/env python3\n" + source.replace("PAPER: dict = {}", filled, 1)


def write_exam(inst: ExamInstance, out: Path, *, notebook: bool = False, html: bool = True) -> list[Path]:
    check_fits(inst)  # a paper longer than its duration is not handed out, in any medium
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
        (f"check-{sid}.py", check_script(inst)),
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
    header = f"Answer key for {inst.exam.title}; `seqlab exam grade` on this file gives full marks."
    key_yaml.write_text(answers_yaml(inst, header, key_answers(inst)["answers"]), encoding="utf-8")
    key_md = out / f"key-{sid}.md"
    key_md.write_text(key_markdown(inst), encoding="utf-8")
    key_page = out / f"key-{sid}.html"
    key_page.write_text(key_html(inst), encoding="utf-8")
    return [key_yaml, key_md, key_page]
