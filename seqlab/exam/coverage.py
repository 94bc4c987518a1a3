"""docs/coverage.md: every section of the notes -> its exam questions and exercise functions.

Questions come from the bank's section tags; exercises from the ``Notes:`` citations in the
docstrings of the contract functions in solutions/ (read with ``ast``, nothing imported), so
the table follows the code. ``seqlab exam coverage`` rewrites it; ``--check`` (and a test)
says when it is stale, and fails when an exam-focus section (``EXAM_FOCUS``) is not the main
topic of a question on every paper of ``exams/final.yaml``.
"""

from __future__ import annotations

import ast
import re

from .. import contract
from ..paths import COURSE_ROOT, DEFAULT_EXAM, SOLUTIONS_DIR
from .model import REGISTRY
from .sections import NOTE_FILES, SECTIONS, children, expand

COVERAGE_PATH = COURSE_ROOT / "docs" / "coverage.md"
_NOTES = re.compile(r"Notes:\s*(.*?)(?:\n\s*\n|\Z)", re.S)


def exercise_sections() -> dict[str, list[str]]:
    """``{module.function: [section tags]}`` from the solutions' ``Notes:`` lines."""
    out: dict[str, list[str]] = {}
    for module in contract.MODULES:
        path = SOLUTIONS_DIR / f"{module}.py"
        if not path.is_file():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and f"{module}.{node.name}" in contract.SIGNATURES:
                doc = ast.get_docstring(node) or ""
                tags: list[str] = []
                for m in _NOTES.finditer(doc):
                    tags += [t for t in expand(m.group(1)) if t not in tags]
                out[f"{module}.{node.name}"] = tags
    return out


def coverage_rows() -> list[tuple[str, str, list[str], list[str]]]:
    from .bank import load_bank

    load_bank()
    questions: dict[str, list[str]] = {tag: [] for tag in SECTIONS}
    for q in REGISTRY.values():
        for tag in q.sections:
            questions[tag].append(q.id)
    exercises: dict[str, list[str]] = {tag: [] for tag in SECTIONS}
    for fn, tags in exercise_sections().items():
        for tag in tags:
            exercises[tag].append(fn)
    return [(tag, s.heading, sorted(questions[tag]), exercises[tag]) for tag, s in SECTIONS.items()]


# Sections the notes mark as an exam focus: the final exam must examine each as a MAIN topic
# (a question's first section tag; a question on a subsection counts for its parent). Sources:
# W8's star table ("期末考重点", line 28) and "期末高频考点速记" (§19); L5's headings marked
# ★★★★★ (必考核心) or ★★★★ (高频重点) and "期末复习抓重点" (§20); and the items a review of the
# bank found unexamined. One place: `seqlab exam coverage --check` and the tests read this table.
EXAM_FOCUS: dict[str, str] = {
    "W8 §1.2": "optimizer recap (★★★, choice/short answer): Momentum",
    "W8 §1.3": "optimizer recap (★★★, choice/short answer): AdaGrad",
    "W8 §1.4": "optimizer recap (★★★, choice/short answer): RMSProp",
    "W8 §1.5": "optimizer recap (★★★, choice/short answer): Adam and bias correction",
    "W8 §2.2": "RNN hidden state update (★★★★★); §19: weights shared over time",
    "W8 §4": "sampling at generation time (the notes' 重要直觉 of the char-level LM)",
    "W8 §5.2": "Seq2Seq bottleneck (★★★★★); §19",
    "W8 §6": "attention flow: alignment, softmax, context (★★★★★)",
    "W8 §9": "Q/K/V self-attention (★★★★★): the projections; §19",
    "W8 §11.2": "positional encoding (★★★★): learned positional embedding",
    "W8 §11.3": "positional encoding (★★★★): sin/cos",
    "W8 §12": "masked self-attention (★★★★); §19",
    "W8 §13": "multi-head attention (★★★★)",
    "W8 §15.2": "encoder block (★★★★★, architecture questions): residual and LayerNorm order",
    "W8 §16.2": "decoder block (★★★★★): masked self-, cross-attention; §19",
    "W8 §17": "image captioning with Transformers and ViT patch tokens",
    "L7-8 (Lecture 7) §三": "the embedding layer as a lookup",
    "L7-8 (Lecture 7) §七": "the KV cache of Transformer inference vs the recurrent state",
    "L5 §2": "Vanilla RNN equations (★★★★★); §20",
    "L5 §2.2": "probabilistic view and loss (★★★★★)",
    "L5 §3.2": "softmax + cross-entropy gradient (★★★★★)",
    "L5 §3.3": "output-layer gradients (★★★★★)",
    "L5 §3.4": "hidden-state gradient recursion (★★★★★); §20",
    "L5 §3.5": "gradients of W, U, b (★★★★★)",
    "L5 §4": "output recurrence and teacher forcing (★★★★)",
    "L5 §5": "vanishing and exploding gradients (★★★★★); §20",
    "L5 §6.1": "gradient clipping (★★★★★)",
    "L5 §7": "LSTM (★★★★★); §20: the cell update",
    "L5 §8": "GRU (★★★★★); §20: the final memory",
    "L5 §9": "LSTM vs GRU (★★★★)",
    "L5 §10": "bidirectional RNN (★★★★★)",
    "L5 §12": "encoder-decoder Seq2Seq (★★★★★)",
    "L5 §13": "attention mechanism (★★★★★)",
    "L5 §15": "scaled dot-product attention (★★★★★)",
    "L5 §16": "multi-head attention (★★★★★)",
    "L5 §17": "Transformer (★★★★)",
    "L5 §18": "from Transformer to SSM / Mamba (★★★★)",
}


# Lecture 5 retells the attention half of the unit in a few lines per topic; the same topic has its
# full section in the Week 8 or Lectures 7-8 notes, where the questions are tagged. A main-topic
# question on one of these sections examines the L5 focus section too.
SAME_TOPIC: dict[str, tuple[str, ...]] = {
    "L5 §12": ("W8 §5",),
    "L5 §13": ("W8 §6", "W8 §7", "L7-8 (Lecture 8) §一"),
    "L5 §15": ("W8 §8.2", "L7-8 (Lecture 8) §二.2"),
    "L5 §16": ("W8 §13",),
    "L5 §17": ("W8 §15", "W8 §16", "L7-8 (Lecture 8) §四"),
}


def _under(tag: str, focus: str) -> bool:
    """``tag`` examines ``focus``: it is the section, a subsection, or the same topic elsewhere."""
    return any(tag in children(section) for section in (focus, *SAME_TOPIC.get(focus, ())))


def final_exam():
    from .examfile import load_exam

    return load_exam(DEFAULT_EXAM)


def missing_focus(exam=None) -> list[str]:
    """Exam-focus sections no student's paper is sure to examine as a main topic: a question outside
    pools whose first tag is the section (or a subsection), or a pool every candidate of which is."""
    exam = exam or final_exam()
    missing = []
    for focus in EXAM_FOCUS:
        fixed = any(
            not eq.pool
            and (_under(eq.question.sections[0], focus) or any(_under(s, focus) for s, _ in eq.question.graded_steps))
            for eq in exam.questions
        )
        pooled = any(
            all(_under(eq.question.sections[0], focus) for eq in exam.questions if eq.pool == pool.name)
            for pool in exam.pools
        )
        if not (fixed or pooled):
            missing.append(focus)
    return missing


def _ids(ids: list[str], main: set[str]) -> str:
    return ", ".join(f"**`{q}`**" if q in main else f"`{q}`" for q in ids) or "-"


def coverage_markdown() -> str:
    rows = coverage_rows()
    from .bank import load_bank

    load_bank()
    exam = final_exam()
    main_of = {q.id: q.sections[0] for q in REGISTRY.values()}
    in_exam: dict[str, list[str]] = {tag: [] for tag in SECTIONS}
    for eq in exam.questions:
        for tag in eq.question.sections:
            in_exam[tag].append(eq.id + (f" (pool {eq.pool})" if eq.pool else ""))
    kinds: dict[str, int] = {}
    for q in REGISTRY.values():
        kinds[q.kind] = kinds.get(q.kind, 0) + 1
    lines = [
        "# Coverage: course notes -> exam questions and exercises",
        "",
        "Generated by `seqlab exam coverage` (do not edit by hand; `seqlab exam coverage --check` and",
        "`tests/exam/test_cli.py` fail when it is stale). Questions are the bank's section tags",
        "(`exams/questions/`, `exams/concepts.yaml`); exercises are the contract functions whose",
        "docstring in `solutions/` cites the section in its `Notes:` line (a parent section covers its",
        "subsections).",
        "",
        "Section tags: `W8 §N` = "
        + NOTE_FILES["W8"]
        + " (Week 8), `L5 §N` = "
        + NOTE_FILES["L5"]
        + " (Lecture 5), `L7-8 (Lecture 7|8) §part.item` = "
        + NOTE_FILES["L7-8"]
        + " (parts numbered 一、二、... per lecture).",
        "",
        f"The bank holds {len(REGISTRY)} questions: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + ".",
        "",
    ]
    lines += [
        f"Columns: the questions of `exams/final.yaml` ({len(exam.questions)}, pools included) and of the whole",
        "bank that examine the section; **bold** = the section is the question's main topic (its first",
        "tag), plain = a secondary tag. *Focus* marks the sections the notes flag for the exam (star",
        "ratings, the high-frequency summaries; `EXAM_FOCUS` in `seqlab/exam/coverage.py` cites each):",
        "each must be the main topic of a question on every paper of the final exam.",
        "",
    ]
    note_titles = {"W8": "Week 8: RNNs and Transformer", "L5": "Lecture 5: RNNs", "L7-8": "Lectures 7 and 8"}
    for note in ("W8", "L5", "L7-8"):
        lines += [
            f"## {note}: {note_titles[note]} (`{NOTE_FILES[note]}`)",
            "",
            "| section | heading | focus | final exam | bank | exercises |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for tag, heading, qs, fns in rows:
            if SECTIONS[tag].note != note:
                continue
            main_here = {q for q in qs if main_of[q] == tag}
            exam_main = {q for q in in_exam[tag] if main_of[q.split(" ")[0]] == tag}
            q_text = _ids(qs, main_here) if qs else "**none**"
            e_text = _ids(in_exam[tag], exam_main)
            f_text = ", ".join(f"`{f}`" for f in fns) or "-"
            focus = "focus" if tag in EXAM_FOCUS else ""
            lines.append(f"| {tag} | {heading} | {focus} | {e_text} | {q_text} | {f_text} |")
        lines.append("")
    uncovered = [tag for tag, _, qs, _ in rows if not qs]
    lines.append(f"Sections without a question: {', '.join(uncovered) if uncovered else 'none'}.")
    lines.append("")
    missing = missing_focus(exam)
    lines.append(
        "Exam-focus sections without a main-topic question on every final-exam paper: "
        f"{', '.join(missing) if missing else 'none'}."
    )
    return "\n".join(lines) + "\n"
