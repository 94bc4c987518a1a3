"""A paper as Markdown: each question's text and worked solution, the exam and the key.

Every text comes from a jinja2 template: one per question with a ``question`` and a ``solution``
block, written in its declaration (``declare.text``), or the concept questions' two shared
templates (``templates/exam/questions/concept_<kind>.md.j2``), and ``templates/exam/exam.md.j2`` /
``key.md.j2`` for the paper. The other outputs (HTML, the notebook, PDF, QTI) are made from this
Markdown and the context it is rendered with.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache

import jinja2
import sympy

from .. import templating
from ..paths import TEMPLATES_DIR
from .draws import format_number
from .marking import earning_entries
from .model import CHOICE, NUMERIC, SYMBOLIC, TRUEFALSE, Variant, mistake_words
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


@cache
def _inline(question_id: str, source: str) -> jinja2.Template:
    return environment().from_string(source)


def render_question(v: Variant) -> tuple[str, str]:
    """The question text and its worked solution (Markdown): the template written in the
    declaration (``declare.text``), or a concept question's shared template file."""
    q = v.question
    template = _inline(q.id, q.text) if q.text else environment().get_template(q.template)
    context = {"p": v.params, "q": v.question, "answer": v.answer, "key": v.key}
    text = _block(template, "question", context)
    if not text:
        raise ValueError(f"{v.question.template or v.question.id}: empty question block")
    return text, _block(template, "solution", context)


def render_texts(inst: ExamInstance) -> ExamInstance:
    """Fill in each variant's text and solution (once): what every output that shows them calls."""
    for v in inst.variants:
        if not v.text:
            v.text, v.solution = render_question(v)
    return inst


def answer_format(v: Variant, medium: str = "screen") -> str:
    """How to write the answer, for the line under each question: typed (``screen``), or without
    the typed syntax where it does not apply (``paper``: by hand; ``lms``: the LMS's number field)."""
    q = v.question
    if medium in ("paper", "lms"):
        return _plain_format(v)
    if q.kind == NUMERIC:
        tol = v.tolerance.describe() if v.tolerance else ""
        many = isinstance(v.answer, list) and len(v.answer) > 1
        what = f"{len(v.answer)} numbers separated by semicolons" if many else "a number"
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


def _plain_format(v: Variant) -> str:
    q = v.question
    if q.kind == NUMERIC:
        many = isinstance(v.answer, list) and len(v.answer) > 1
        what = f"{len(v.answer)} numbers, in the order asked" if many else "a number"
        if q.answer_hint:
            what += f" ({q.answer_hint})"
        exact = v.tolerance is not None and v.tolerance.rel == 0 and v.tolerance.abs == 0
        tol = v.tolerance.describe() if v.tolerance else ""
        return f"{what}; " + ("graded as exact values: give the integers exactly." if exact else f"graded {tol}.")
    if q.kind == SYMBOLIC:
        names = ", ".join(f"${s.name}$" if len(s.name) == 1 else s.name for s in q.syms(v.params))
        return f"a formula in {names}; any equivalent form scores."
    if q.kind == CHOICE:
        return "one letter."
    return "true or false."


PARTIAL_CREDIT_POLICY = (
    "Partial credit, where a question has a rule, is stated under that question: for a list of n "
    "numbers, each correct entry earns 1/n of the points, except entries that could be copied from "
    "the question (a number printed in it, or 0), which earn nothing; a named mistake earns the "
    "stated fraction (the key names the mistake). Everything else earns full points or none."
)
# The tolerance under each question is what decides; this says how to stay inside it. A question
# whose tolerance was measured to accept 3-significant-figure work says so in its own text.
ROUNDING_POLICY = (
    "Keep full precision in intermediate steps and round only the final answer, to 4 significant "
    "figures or more; give integers exactly. A question that says so accepts intermediate results "
    "rounded to 3 significant figures: its tolerance, printed under it, was measured for that."
)
ANSWER_SYNTAX = (
    "Write each answer as text. Numbers may be written as simple arithmetic on numbers (`1/3`, "
    "`sqrt(2)/2`, `2.5e-3`: `+ - * / ^`, `sqrt` and fractions, nothing a question asks you to work "
    "out, so no `exp`, `log`, `tanh`, `sigmoid`, `sin`, `cos` or `e` in a number); the numbers of a list are separated by semicolons (`0.5; -1.2`) or commas; formulas use `+ - * / ^`, parentheses, the "
    "functions `sqrt exp log tanh sigmoid sin cos` and the constant `e` (or `exp(1)`), with the symbol "
    "names the question gives; write every product with `*` (`2*x`, not `2x`). A number is read as "
    "a teacher reads it: any minus sign or dash (`-0.5`, `\u22120.5` copied from the page), spaces of "
    "any width, thousands grouped by spaces (`93 251`) or, in a single number, by commas that cannot be "
    "a decimal comma (`1,234,567`, `93,251.5`; `93,251` where an integer is asked), and scientific "
    "notation (`1.2e3`, `1.2*10^3`, `1.2\u00d710^3`, `1.2\u00b710\u00b3`). A comma in a list separates its "
    "numbers, so a list written with commas holds no thousands separator (write `93251; 0.5` or "
    "`93 251, 0.5`). A lone comma inside a number that need not be an integer (`93,251`, `0,5`) or a "
    "raised dot between digits (`1\u00b75`) could be read two ways and is refused, with a message saying how to write "
    "it: a point for decimals, no separator for thousands. Where a question asks for a unit (MiB; "
    "nats for a loss taken with the natural log) the answer may end with it (`4560 MiB`); any other "
    "unit is refused with a message."
)
CHECK_ADVICE = (
    "Before handing in, run the check written next to this paper, `python3 check-{student}.py "
    "answers-{student}.yaml` (standard Python, nothing to install): "
    "it reports, by question number, answers it cannot read, never whether an answer is right."
)


# How to write answers on the printed paper: by hand, so nothing about typing, files or scripts.
PAPER_WRITING = (
    "Write each answer in the box under its question, legibly, in ink; work in the space above the "
    "box (the working is not marked, the box is). Numbers as decimals, or exactly as fractions or "
    "roots (1/3, \u221a2/2); a list of numbers in the order the question asks, separated by semicolons (0.5; \u22121.2); a "
    "formula with the symbols the question names, in any equivalent form. Where a question asks for "
    "a unit it may be written after the number. An answer crossed out is not read: write the one you "
    "mean beside it."
)
# The computer aid on paper: the exam file's wording is about typing answers on a computer.
PAPER_COMPUTER = "Not needed: every answer is written on this paper."
# On screen the check script is a program the student runs: the aid says so, and why it is no
# programmable calculator (it never computes an answer), or the two rules contradict each other.
SCREEN_CHECK_AID = (
    "The one program you may run besides is the check script named under Checking: it reads the "
    "form of your answers and computes none, so it is not a calculator."
)
# In the quiz the LMS is the only program: no answers file, no check script.
LMS_COMPUTER = "Only to take this quiz in the LMS; no other program, no network."
MEDIA = ("screen", "paper", "lms")


def paper_rules(inst: ExamInstance, medium: str = "screen") -> list[tuple[str, str]]:
    """Every paper-wide rule, (name, Markdown), in the order the paper states them, for one medium:
    ``screen`` (Markdown, HTML, notebook: answers typed, a check script), ``paper`` (the PDF:
    answers by hand, no computer-only rule) or ``lms`` (the quiz: ``qti.quiz_rules`` adds how the
    LMS takes answers and what partial credit it gives). Time, aids, conventions, grading and
    rounding are the same on every medium."""
    if medium not in MEDIA:
        raise ValueError(f"unknown medium {medium!r}")
    exam = inst.exam
    rules: list[tuple[str, str]] = []
    for aid, allowed in exam.aids:
        if aid == "computer":
            if medium == "paper":
                allowed = PAPER_COMPUTER
            elif medium == "lms":
                allowed = LMS_COMPUTER
            else:
                allowed = allowed.rstrip(".") + ". " + SCREEN_CHECK_AID
        rules.append((aid.capitalize(), allowed[:1].upper() + allowed[1:].rstrip(".") + "."))
    if exam.conventions:
        rules.append(("Conventions", exam.conventions))
    if exam.instructions:
        rules.append(("Grading", exam.instructions.strip()))
    if medium == "screen":
        rules += [("Writing answers", ANSWER_SYNTAX), ("Checking", CHECK_ADVICE.format(student=inst.student))]
    elif medium == "paper":
        rules.append(("Writing answers", PAPER_WRITING))
    rules.append(("Rounding", ROUNDING_POLICY))
    if medium != "lms":
        rules.append(("Partial credit", PARTIAL_CREDIT_POLICY))
    if exam.duration:
        # the estimate itself is ``timing``'s (which reads these rules): every medium checks the
        # paper fits before it renders it, so the rule can promise it
        rules.insert(
            0,
            (
                "Time",
                f"{exam.duration:g} minutes, sized so that a median student finishes this paper, reading "
                "included; each question's points follow its length.",
            ),
        )
    return rules


def rules_markdown(inst: ExamInstance, medium: str = "screen") -> str:
    return "\n\n".join(f"**{name}.** {' '.join(text.split())}" for name, text in paper_rules(inst, medium))


def partial_credit_rule(v: Variant, eq, *, key: bool = False, credited: Collection[str] | None = None) -> str:
    """The partial-credit rule of one question, in words ("" when it has none). A student's paper
    says only that a named mistake earns its share (``key=False``): naming the mistake there
    would name the trap; the key names it. ``credited``: the named mistakes the medium's scoring
    carries (the LMS quiz's, seqlab.exam.qti.mistakes_credited); a medium promises no other."""
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
        if credited is not None and name not in credited:
            continue
        what = f"the known mistake of {mistake_words(name)}" if key else "a known mistake, named in the key,"
        rules.append(f"{what} earns {round(frac * 100)}%")
    return "; ".join(rules)


def paper_context(inst: ExamInstance, medium: str = "screen", *, key: bool = False) -> dict:
    """What every template of a paper renders (Markdown, key, the PDF's page): its parts with each
    variant, how to write the answer and the partial-credit rule, and the exam's policies."""
    render_texts(inst)
    parts: list[dict] = []
    for eq, v in zip(inst.questions, inst.variants):
        if not parts or parts[-1]["title"] != eq.part:
            parts.append({"title": eq.part, "variants": []})
        parts[-1]["variants"].append(
            {"v": v, "format": answer_format(v, medium), "eq": eq, "partial": partial_credit_rule(v, eq, key=key)}
        )
    return {
        "exam": inst.exam,
        "student": inst.student,
        "parts": parts,
        "variants": inst.variants,
        "max_score": inst.exam.max_score,
        "partial_policy": PARTIAL_CREDIT_POLICY,
        "rounding_policy": ROUNDING_POLICY,
        "rules": rules_markdown(inst, medium),
    }


def exam_markdown(inst: ExamInstance) -> str:
    return environment().get_template("exam.md.j2").render(paper_context(inst)).rstrip() + "\n"


def key_markdown(inst: ExamInstance) -> str:
    return environment().get_template("key.md.j2").render(paper_context(inst, key=True)).rstrip() + "\n"
