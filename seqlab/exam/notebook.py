"""A paper as an nbgrader notebook: read-only question cells, an answer cell each, a check and a save."""

from __future__ import annotations

import json

from .markdown import answer_format, partial_credit_rule, render_texts, rules_markdown
from .variants import ExamInstance


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

    render_texts(inst)
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
            f"it saves `answers.yaml`, the file you hand in.\n\n{rules_markdown(inst)}",
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
                f'answers[{json.dumps(v.answer_id)}] = ""  # your answer, as a string',
                f"q{v.number}-answer",
                {"grade": False, "solution": True, "locked": False},
            )
        )
    cells.append(
        _cell(
            "code",
            "# Check before hand-in: the check written next to this notebook reports, by question\n"
            "# number, answers the grader cannot read; it never says whether an answer is right.\n"
            "import json, subprocess, sys\n"
            'with open("answers-check.json", "w") as f:\n'
            f'    json.dump({{"student": {json.dumps(inst.student)}, "answers": answers}}, f)\n'
            f'subprocess.run([sys.executable, "check-{inst.student}.py", "answers-check.json"])',
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
