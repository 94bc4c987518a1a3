"""A question is in one place: its declaration in the course's ``exams/questions/`` holds its
sampler, text, key, named mistakes, validity and degenerate draws. No template file, no rule of
the tool's keyed by its id, no question module inside the tool's package."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from seqlab.exam.bank import QUESTIONS_DIR, load_bank, topics
from seqlab.exam.errors import QuestionError
from seqlab.exam.model import REGISTRY
from seqlab.paths import TEMPLATES_DIR

load_bank()
PACKAGE_EXAM = Path(__file__).resolve().parents[2] / "seqlab" / "exam"
# The concept questions are entries of exams/concepts.yaml rendered by the tool's two templates.
DECLARED = {qid: q for qid, q in REGISTRY.items() if q.topic != "concepts" and not qid.startswith(("test.", "toy."))}
# The tool's exam modules: a rule or a count of one question belongs in its declaration
# (``declare.skips_work``, ``valid_when``, ``by_hand``, ``work``, ``unit``, ``graded_steps``), not
# in a table of the tool's keyed by its id.
RULE_MODULES = ("*.py", "bank/*.py")


def test_every_question_is_declared_with_its_text_in_the_course_folder():
    assert len(DECLARED) > 50  # the bank loaded, not an empty registry
    elsewhere = {
        qid: inspect.getsourcefile(q.answer)
        for qid, q in DECLARED.items()
        if not Path(inspect.getsourcefile(q.answer) or "").resolve().is_relative_to(QUESTIONS_DIR.resolve())
    }
    assert not elsewhere, f"questions declared outside exams/questions/: {elsewhere}"
    textless = sorted(qid for qid, q in DECLARED.items() if not q.text or q.template)
    assert not textless, f"questions whose text is not their @text(...): {textless}"


def test_no_template_file_holds_a_questions_text():
    folder = TEMPLATES_DIR / "exam" / "questions"
    files = sorted(p.name for p in folder.iterdir())
    assert files == ["concept_choice.md.j2", "concept_truefalse.md.j2"]  # the concept kinds' own
    named = [(p.name, qid) for p in folder.iterdir() for qid in DECLARED if qid in p.read_text(encoding="utf-8")]
    assert not named


def test_no_module_of_the_tool_names_a_question():
    found = []
    for pattern in RULE_MODULES:
        for path in sorted(PACKAGE_EXAM.glob(pattern)):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and node.value in DECLARED:
                    found.append(f"{path.relative_to(PACKAGE_EXAM)}:{node.lineno}: {node.value}")
    assert not found, "rules keyed by a question id outside its declaration: " + ", ".join(found)


def test_the_topics_load_in_the_listed_order_and_a_missing_one_is_refused(tmp_path):
    assert topics(QUESTIONS_DIR)[:2] == ["optimizers", "rnn"]  # topics.yaml's order, not the names'
    (tmp_path / "b.py").write_text("", encoding="utf-8")
    (tmp_path / "a.py").write_text("", encoding="utf-8")
    (tmp_path / "_shared.py").write_text("", encoding="utf-8")
    (tmp_path / "topics.yaml").write_text("[b]\n", encoding="utf-8")
    assert topics(tmp_path) == ["b", "a"]  # listed first, then the rest by name; _shared is no topic
    (tmp_path / "topics.yaml").write_text("[b, c]\n", encoding="utf-8")
    with pytest.raises(QuestionError, match="no module or folder for topic"):
        topics(tmp_path)
    with pytest.raises(QuestionError, match="no such folder"):  # a course without its questions
        topics(tmp_path / "missing")
