"""Exam variants -> Markdown, HTML, an nbgrader notebook, and the answer key.

Every text comes from a jinja2 template in ``templates/exam/``: one per question
(``questions/<id>.md.j2`` with a ``question`` and a ``solution`` block, or the shared concept
templates), and ``exam.md.j2`` / ``exam.html.j2`` / ``key.md.j2`` for the whole paper. Output
is byte-for-byte reproducible: no dates, no random ids, sorted YAML keys.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
import sympy
import yaml

from .. import templating
from ..paths import TEMPLATES_DIR
from .draws import format_number
from .marking import answer_shapes, earning_entries
from .model import CHOICE, NUMERIC, SYMBOLIC, TRUEFALSE, Variant, mistake_words

if TYPE_CHECKING:  # variants renders through this module; the paper type is for annotations only
    from .variants import ExamInstance

EXAM_TEMPLATES = TEMPLATES_DIR / "exam"


def num(x) -> str:
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return format(x, ".6g")


def vec(xs) -> str:
    return "(" + ", ".join(num(x) for x in xs) + ")"


def mat(rows) -> str:
    body = r" \\ ".join(" & ".join(num(x) for x in row) for row in rows)
    return r"\begin{pmatrix} " + body + r" \end{pmatrix}"


def colvec(xs) -> str:
    return mat([[x] for x in xs])


def latex(expr) -> str:
    return sympy.latex(expr)


@cache
def environment(root: str = str(EXAM_TEMPLATES)) -> jinja2.Environment:
    # Markdown, so no autoescape: the HTML page escapes what it inserts itself
    return templating.environment(
        root,
        autoescape=False,
        keep_trailing_newline=False,
        filters=dict(num=num, vec=vec, mat=mat, colvec=colvec, latex=latex, fmt=format_number),
    )


def _block(template: jinja2.Template, name: str, context: dict) -> str:
    if name not in template.blocks:
        return ""
    return "".join(template.blocks[name](template.new_context(context))).strip()


def render_question(v: Variant) -> tuple[str, str]:
    """The question text and its worked solution (Markdown)."""
    template = environment().get_template(v.question.template)
    context = {"p": v.params, "q": v.question, "answer": v.answer, "key": v.key}
    text = _block(template, "question", context)
    if not text:
        raise ValueError(f"{v.question.template}: empty question block")
    return text, _block(template, "solution", context)


def answer_format(v: Variant) -> str:
    """How to write the answer, for the line under each question."""
    q = v.question
    if q.kind == NUMERIC:
        tol = v.tolerance.describe() if v.tolerance else ""
        many = isinstance(v.answer, list) and len(v.answer) > 1
        what = f"{len(v.answer)} numbers separated by commas" if many else "a number"
        if q.answer_hint:
            what += f" ({q.answer_hint})"
        exact = v.tolerance is not None and v.tolerance.rel == 0 and v.tolerance.abs == 0
        graded = "graded as exact values: give the integers exactly" if exact else f"graded {tol}"
        return f"{what}; arithmetic such as `1/3` or `sqrt(2)/2` is accepted; {graded}."
    if q.kind == SYMBOLIC:
        names = ", ".join(f"`{s.name}`" for s in q.syms(v.params))
        return (
            f"a formula in {names} with `+ - * / ^`, parentheses and `sqrt exp log tanh sigmoid sin cos`; "
            "any equivalent form scores."
        )
    if q.kind == CHOICE:
        return "one letter."
    if q.kind == TRUEFALSE:
        return "`true` or `false`."
    raise AssertionError(q.kind)  # pragma: no cover


PARTIAL_CREDIT_POLICY = (
    "Partial credit, where a question has a rule, is stated under that question: for a list of n "
    "numbers, each correct entry earns 1/n of the points, except entries that could be copied from "
    "the question (a number printed in it, or 0), which earn nothing; a named mistake earns the "
    "stated fraction. Everything else earns full points or none."
)
ROUNDING_POLICY = "Keep full precision in intermediate steps and round only the final answer; give integers exactly."


def partial_credit_rule(v: Variant, eq) -> str:
    """The partial-credit rule of one question, in words ("" when it has none)."""
    rules = []
    if eq.per_element and isinstance(v.answer, list) and len(v.answer) > 1:
        earning = earning_entries(v)
        copied = [str(i + 1) for i, e in enumerate(earning) if not e]
        if any(earning):
            rule = f"each correct entry earns 1/{len(earning)} of the points"
            if copied:
                rule += (
                    f" (entr{'y' if len(copied) == 1 else 'ies'} {', '.join(copied)} can be copied from the "
                    "question and earn nothing)"
                )
            rules.append(rule)
    for name, frac in sorted(eq.mistakes.items()):
        rules.append(f"the known mistake of {mistake_words(name)} earns {round(frac * 100)}%")
    return "; ".join(rules)


def _context(inst: ExamInstance) -> dict:
    parts: list[dict] = []
    for eq, v in zip(inst.questions, inst.variants):
        if not parts or parts[-1]["title"] != eq.part:
            parts.append({"title": eq.part, "variants": []})
        parts[-1]["variants"].append(
            {"v": v, "format": answer_format(v), "eq": eq, "partial": partial_credit_rule(v, eq)}
        )
    return {
        "exam": inst.exam,
        "student": inst.student,
        "parts": parts,
        "variants": inst.variants,
        "max_score": inst.exam.max_score,
        "partial_policy": PARTIAL_CREDIT_POLICY,
        "rounding_policy": ROUNDING_POLICY,
    }


def exam_markdown(inst: ExamInstance) -> str:
    return environment().get_template("exam.md.j2").render(_context(inst)).rstrip() + "\n"


def key_markdown(inst: ExamInstance) -> str:
    return environment().get_template("key.md.j2").render(_context(inst)).rstrip() + "\n"


_INLINE_MATH = re.compile(r'<span class="math">\\\((.*?)\\\)</span>', re.S)
_BLOCK_MATH = re.compile(r'<div class="math">\$\$(.*?)\$\$</div>', re.S)


def tex_to_mathml(tex: str, display: bool = False) -> str:
    """LaTeX -> MathML at render time: every current browser shows it with no script and no network
    (the exam room may have none). The TeX stays in an annotation, for screen readers and copying."""
    from latex2mathml.converter import convert

    mathml = convert(_aligned_as_array(tex.strip()), display="block" if display else "inline")
    annotation = f'<annotation encoding="application/x-tex">{html.escape(tex.strip())}</annotation>'
    # keep the MathML well-formed: wrap the converted content in a semantics element
    head, _, rest = mathml.partition(">")
    body = rest[: rest.rfind("</math>")]
    if display:  # a wide formula scrolls on a phone: focusable, so a keyboard can scroll it too
        head = head.replace("<math", '<math tabindex="0"', 1)
    return f"{head}><semantics><mrow>{body}</mrow>{annotation}</semantics></math>"


def _aligned_as_array(tex: str) -> str:
    """``aligned`` (right, left, right, left ... columns) as the ``array`` the converter knows."""

    def column_spec(m: re.Match) -> str:
        body = m.group(1)
        columns = max(row.count("&") for row in body.split(r"\\")) + 1
        return r"\begin{array}{" + "rl" * (columns // 2) + "r" * (columns % 2) + "}" + body + r"\end{array}"

    return re.sub(r"\\begin\{aligned\}(.*?)\\end\{aligned\}", column_spec, tex, flags=re.S)


def markdown_to_html(text: str, math=tex_to_mathml) -> str:
    """Markdown -> HTML with every formula typeset by ``math(tex, display=...)``: MathML for
    screens (HTML exam, key, LMS quiz); the PDF passes SVG images, since WeasyPrint lays out no
    MathML. Either way no TeX is left in the page."""
    import mistune

    rendered = mistune.create_markdown(escape=True, plugins=["table", "math"])(text)
    rendered = _BLOCK_MATH.sub(lambda m: math(html.unescape(m.group(1)).strip(), display=True), rendered)
    return _INLINE_MATH.sub(lambda m: math(html.unescape(m.group(1))), rendered)


def exam_html(inst: ExamInstance) -> str:
    body = markdown_to_html(exam_markdown(inst))
    return (
        environment().get_template("exam.html.j2").render(exam=inst.exam, student=inst.student, body=body).rstrip()
        + "\n"
    )


def key_html(inst: ExamInstance) -> str:
    """The key as a page: the same offline math (MathML) and no-network policy as the exam."""
    body = markdown_to_html(key_markdown(inst))
    return (
        environment().get_template("exam.html.j2").render(exam=inst.exam, student=inst.student, body=body).rstrip()
        + "\n"
    )


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


# --------------------------------------------------------------------------- nbgrader notebook


def _grade_id(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)[:64]


def _cell(kind: str, source: str, cell_id: str, nbgrader: dict):
    import nbformat

    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    cell = make(source)
    cell["id"] = _grade_id(cell_id)
    cell["metadata"] = {"nbgrader": {"schema_version": 3, "grade_id": _grade_id(cell_id), **nbgrader}}
    return cell


def exam_notebook(inst: ExamInstance):
    """A student notebook: read-only question cells, one answer cell each, a cell that saves.

    Answer cells are nbgrader solution cells (``solution: true, grade: false``); points are
    given by ``seqlab exam grade`` on the YAML the last cell writes, so no cell is graded by
    nbgrader itself. Cell ids are derived from the question ids (reproducible, unique).
    """
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb["metadata"] = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "seqlab": {"exam": inst.exam.title, "student": inst.student},
    }
    locked = {"grade": False, "solution": False, "locked": True}
    cells = [
        _cell(
            "markdown",
            f"# {inst.exam.title}\n\nStudent: `{inst.student}`\n\n"
            "Write each answer as a string in the cell below its question, run the check cell (it reports "
            "answers the grader cannot read, never whether they are right), then run the last cell: "
            f"it saves `answers.yaml`, the file you hand in.\n\n{ROUNDING_POLICY} {PARTIAL_CREDIT_POLICY}",
            "header",
            locked,
        ),
        _cell("code", "answers = {}", "setup", locked),
    ]
    for eq, v in zip(inst.questions, inst.variants):
        rule = partial_credit_rule(v, eq)
        cells.append(
            _cell(
                "markdown",
                f"## Question {v.number} ({v.points:g} points): {v.question.title}\n\n"
                f"{v.text}\n\n*Answer:* {answer_format(v)}" + (f"\n\n*Partial credit:* {rule}." if rule else ""),
                f"q{v.number}-text",
                locked,
            )
        )
        cells.append(
            _cell(
                "code",
                f'answers[{json.dumps(v.id)}] = ""  # your answer, as a string',
                f"q{v.number}-answer",
                {"grade": False, "solution": True, "locked": False},
            )
        )
    shapes = json.dumps(answer_shapes(inst), sort_keys=True)
    cells.append(
        _cell(
            "code",
            "# Check before hand-in: the grader's own parser reports answers it cannot read\n"
            "# (syntax, number of entries); it never says whether an answer is right.\n"
            "import json\nfrom seqlab.exam.grading import check_readable\n"
            f"problems = check_readable(json.loads({shapes!r}), answers)",
            "check",
            locked,
        )
    )
    cells.append(
        _cell(
            "code",
            "import json\n"
            f'with open("answers.yaml", "w") as f:  # JSON is valid YAML\n'
            f'    json.dump({{"student": {json.dumps(inst.student)}, "answers": answers}}, f, indent=1)\n'
            'print("saved answers.yaml")',
            "save",
            locked,
        )
    )
    nb["cells"] = cells
    nbformat.validate(nb)
    return nb


# --------------------------------------------------------------------------- files


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
