"""The bank lint: what makes a paper read two ways or give points away, found on rendered papers.

Four rules, each over one student's paper as rendered (a question's text is the Markdown the
student reads; its numbers are the ones printed):

- ``leak``: a question's text prints another question's answer: a numeric key of at least three
  significant digits printed with three or more (shorter ones, 0.5 or 12, are printed everywhere
  as parameters, and a key near one is a coincidence), or a
  formula question's asked formula or a part of it with two symbols and two operations (the
  LaTeX compared with spacing, braces, brackets and ``\\frac`` written out);
- ``copyable``: a numeric answer of several numbers is, entry by entry, a vector or a row of a
  matrix printed in its own question;
- ``unearnable``: the exam promises per-entry credit on a question some of whose entries can be
  copied from it (``marking.earning_entries``), which the grader never pays: the promise reads
  as points the most common mistake cannot earn;
- ``title``: a title that names several things ("A and B", "A, B", "A vs B") while the question's
  text (its options, for a choice) does not use a word of one of them, in any form: it promises a
  question the draw does not ask. A title naming one topic is read as a topic, not a promise.

What it does not see: a leak written in other symbols than the key's (``\\tau / \\lVert g \\rVert``
for ``tau/n``) or in words, and a reading the conventions leave open; those stay the reviewer's.
``seqlab exam check`` is not the place: these are the author's problems, found before a paper is
handed out, by ``tests/exam/test_lint.py`` on the whole bank and on every exam file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy

from .examfile import Exam
from .marking import earning_entries, expected_entries
from .model import CHOICE, NUMERIC, SYMBOLIC, TRUEFALSE, Variant
from .variants import ExamInstance, make_instance


@dataclass(frozen=True)
class Finding:
    student: str
    number: int
    id: str
    rule: str
    what: str

    def __str__(self) -> str:
        return f"{self.student} question {self.number} ({self.id}): {self.rule}: {self.what}"


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?")
# words a title may use without the question repeating them
_FUNCTION_WORDS = {"with", "from", "that", "this", "into", "their", "them", "what", "when", "which", "over", "under"}


def _significant(x: float) -> int:
    digits = format(abs(x), ".10g").split("e")[0].replace(".", "").strip("0")
    return len(digits)


def _printed_numbers(text: str) -> list[float]:
    return [float(m) for m in _NUMBER.findall(text)]


def _normal_tex(tex: str) -> str:
    """LaTeX compared by what it writes: ``\\frac{a}{b}`` as ``a/b``, no spacing, braces or brackets."""
    while "\\frac{" in tex:
        tex = _unfrac(tex)
    tex = re.sub(r"\\(left|right|big|Big|,|;|!|cdot|textstyle|displaystyle)", "", tex)
    return re.sub(r"[\s{}()\[\]]", "", tex)


def _unfrac(tex: str) -> str:
    start = tex.index("\\frac{")
    args, i = [], start + len("\\frac")
    for _ in range(2):
        depth, j = 0, i
        while True:
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            j += 1
            if depth == 0:
                break
        args.append(tex[i + 1 : j - 1])
        i = j
    return tex[:start] + f"({args[0]})/({args[1]})" + tex[i:]


def asked_formulas(v: Variant) -> list[str]:
    """The asked formula and its telling parts (two symbols, two operations), as normal LaTeX."""
    if v.question.kind != SYMBOLIC:
        return []
    parts = {
        _normal_tex(sympy.latex(e))
        for e in sympy.preorder_traversal(v.answer)
        if len(e.free_symbols) >= 2 and sympy.count_ops(e) >= 2
    }
    return sorted(p for p in parts if len(p) >= 5)


def telling_keys(v: Variant) -> list[float]:
    if v.question.kind != NUMERIC:
        return []
    return [e for e in expected_entries(v) if _significant(e) >= 3]


def _leaks(inst: ExamInstance) -> list[Finding]:
    out = []
    for a in inst.variants:
        printed, tex = _printed_numbers(a.text), _normal_tex(a.text)
        for b in inst.variants:
            if b is a:
                continue
            tol = b.tolerance
            for key in telling_keys(b):
                assert tol is not None  # telling keys are numeric questions', which state their tolerance
                if any(_significant(x) >= 3 and tol.accepts(x, key) for x in printed):
                    out.append(
                        Finding(inst.student, a.number, a.id, "leak", f"prints {key:g}, question {b.number}'s key")
                    )
                    break
            for formula in asked_formulas(b):
                if formula in tex:
                    out.append(
                        Finding(inst.student, a.number, a.id, "leak", f"prints question {b.number}'s formula {formula}")
                    )
                    break
    return out


def _printed_vectors(params) -> list[list[float]]:
    """Every list of numbers among the parameters: vectors, and the rows of matrices."""
    out = []
    if isinstance(params, dict):
        for value in params.values():
            out += _printed_vectors(value)
    elif isinstance(params, (list, tuple)):
        if params and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in params):
            out.append([float(x) for x in params])
        else:
            for value in params:
                out += _printed_vectors(value)
    return out


def _copyable(v: Variant) -> str:
    if v.question.kind != NUMERIC or not isinstance(v.answer, list) or len(v.answer) < 2:
        return ""
    key, tol = expected_entries(v), v.tolerance
    assert tol is not None  # numeric questions state their tolerance (model.register refuses one without)
    for printed in _printed_vectors(v.params):
        if len(printed) == len(key) and all(tol.accepts(x, e) for x, e in zip(printed, key)):
            return f"the key {v.key} is printed in the question"
    return ""


def _unearnable(v: Variant) -> str:
    if not v.partial.get("per_element") or v.question.kind != NUMERIC or len(expected_entries(v)) < 2:
        return ""
    copied = [str(i + 1) for i, earns in enumerate(earning_entries(v)) if not earns]
    if not copied:
        return ""
    return f"per-entry credit is promised, but entries {', '.join(copied)} can be copied and never earn it"


def _stem(word: str) -> str:
    return word[: max(4, len(word) - 3)]


_JOINS = re.compile(r",|\band\b|\bvs\.?|\bversus\b|&")


def untold_title_words(v: Variant) -> list[str]:
    """The words of a title's named items ("A and B", "A, B", "A vs B") that the question's text
    does not use: a title that names two things promises both, and a draw that asks about one
    (one of two gradients, one of two statements) reads as a question that lost its other half."""
    items = _JOINS.split(v.question.title)
    if len(items) < 2:
        return []
    text = v.text.lower()
    if v.question.kind in (CHOICE, TRUEFALSE):
        text += " " + " ".join(str(o).lower() for o in v.params.get("options", ()))
    words = [w for item in items for w in re.findall(r"[a-z]{4,}", item.lower()) if w not in _FUNCTION_WORDS]
    return [w for w in words if _stem(w) not in text]


def lint_paper(inst: ExamInstance) -> list[Finding]:
    found = _leaks(inst)
    for v in inst.variants:
        for rule, what in (("copyable", _copyable(v)), ("unearnable", _unearnable(v))):
            if what:
                found.append(Finding(inst.student, v.number, v.id, rule, what))
        missing = untold_title_words(v)
        if missing:
            found.append(
                Finding(
                    inst.student, v.number, v.id, "title", f"the title's {', '.join(missing)} is not in the question"
                )
            )
    return found


def lint_exam(exam: Exam, students: list[str]) -> list[Finding]:
    from .markdown import render_texts

    return [f for student in students for f in lint_paper(render_texts(make_instance(exam, student)))]
