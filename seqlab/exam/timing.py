"""How long a paper takes: minutes per question from its measured work, for a strong and a median student.

A question's time is the sum of three measured amounts of work, each at a stated pace:

- **reading**: the words of its rendered text, the answer line and the partial-credit line under
  it included (``words``: every word of prose, and every number and symbol of its formulas, since
  a number must be read to be keyed in), at 200 words a minute
  for a strong student and 130 for a median one (adult silent reading of study text: about 200-250
  words a minute for prose, slower for technical text; 130 is the median student's pace the audit
  of the final measured on these papers);
- **operations**: the calculator operations of the question's own derivation (its declaration's
  ``work`` fact, ``declare.work``: each
  ``+ - * /``, power, root, ``exp``/``log``/``tanh``/``sigmoid``, comparison and algebra step of
  the worked solution, counted from how the question computes its key; a sigmoid is 3, since a
  scientific calculator has ``tanh`` and ``exp`` keys but none for ``1/(1+exp(-x))``), at 6 s for a strong and
  10 s for a median student (the timing the audit measured: keying two operands and an operator
  and reading the display); a concept question (choice, true/false) has none, but **thinking**:
  recalling what the notes say and weighing the options against it, 0.5 minutes for a median
  student and 0.3 for a strong one (the audit's constant, measured on the final's 27 concept items);
- **writing**: every value written down, the intermediate results the derivation carries to a
  later step (written in the working, then keyed back) and each entry of the answer, at 5 s for a
  strong and 8 s for a median student: a value is 6 to 10 characters with its label (``h1 =
  -0.2290``), and adults copy by hand at about 20-30 words (100-150 characters) a minute, so 4 to
  6 s each, plus a glance back at the display for the median student. A formula's values are its
  operators and the term they start (``sympy.count_ops`` + 1): each is a few characters written
  after a step of algebra. A calculation's answer is written twice: where the working finds it,
  and again in the answer box or file (the audit counted that copy, "writing the answers").

A paper's time adds its rules' words to its questions', read once at twice the pace (they are
boilerplate a student skims, 260 words a minute for a median student: the audit's pace). ``check_fits`` refuses a paper
whose median estimate exceeds the exam's duration: every medium calls it before it renders one.

**The constants now in force are the third audit's** (``THIRD_AUDIT``; it timed the final 5 minutes
over, 125 against 120, where the paces above gave 117): a question's text is read at 180 prose
words a minute + 2 s per inline and 15 s per display formula (strong: 280, 1 s, 8 s); an operation
is 6 s (strong 4), a value written 5 s (strong 3); a concept item's thinking 40 s (strong 20);
every numeric or formula question adds **set-up** thinking, 30 s + 4 s per operation of a
calculation, 30 s per algebra step of a formula, at most 240 s (the audit's 30-240 s: 240 for its
60-operation BPTT item, 120 for its 50-operation ones, 45-150 for the formula items; ours gives
the 50-operation items 230 and the formula items 90-180: as slow or slower), half for a strong
student; every answer costs 10 s to type (6 strong), and the paper 2 minutes for the check script
(1 strong). The paper's rules are still skimmed at twice the old prose pace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ExamError
from .model import CHOICE, NUMERIC, SYMBOLIC, TRUEFALSE, Variant


@dataclass(frozen=True)
class Pace:
    name: str
    words_per_minute: float
    seconds_per_operation: float
    seconds_per_value: float
    think_seconds: float  # per concept question (module doc)
    # the third audit's constants (module doc): prose reading with a cost per formula, set-up
    # thinking (a share of the median's), typing an answer, the check script
    prose_words_per_minute: float = 180
    inline_seconds: float = 2
    display_seconds: float = 15
    setup_share: float = 1.0
    type_seconds: float = 10
    check_minutes: float = 2


STRONG = Pace(
    "strong", words_per_minute=200, seconds_per_operation=4, seconds_per_value=3, think_seconds=20,
    prose_words_per_minute=280, inline_seconds=1, display_seconds=8, setup_share=0.5, type_seconds=6, check_minutes=1,
)  # fmt: skip
MEDIAN = Pace("median", words_per_minute=130, seconds_per_operation=6, seconds_per_value=5, think_seconds=40)
# the third audit's median constants, kept to show the model is no faster (tests/exam/test_timing.py)
THIRD_AUDIT = {"wpm": 180, "inline_s": 2, "display_s": 15, "operation_s": 6, "value_s": 5, "concept_s": 40,
               "setup_s": (30, 240), "type_s": 10, "check_min": 2}  # fmt: skip
# the paper's rules are skimmed: read at this multiple of the pace (module doc)
SKIM = 2.0
# set-up thinking (module doc): seconds before the first operation, per operation of a calculation,
# per algebra step of a formula, and at most
SETUP_BASE, SETUP_PER_OPERATION, SETUP_PER_STEP, SETUP_MAX = 30, 4, 30, 240


@dataclass(frozen=True)
class Work:
    """What a question asks of a student: words to read, operations, values to write; its prose
    words and formulas (``reading``) and its kind, for the set-up thinking."""

    words: int
    operations: int
    values: int
    concept: bool = False
    prose: int = 0
    inline: int = 0
    display: int = 0
    formula: bool = False  # a formula question: its operations are algebra steps

    def setup_seconds(self) -> float:
        if self.concept or not self.operations:
            return 0.0
        per = self.operations * (SETUP_PER_STEP if self.formula else SETUP_PER_OPERATION)
        return min(SETUP_MAX, (0 if self.formula else SETUP_BASE) + per)

    def reading_minutes(self, pace: Pace) -> float:
        """Prose words at the prose pace, and a cost per formula (module doc)."""
        formulas = (self.inline * pace.inline_seconds + self.display * pace.display_seconds) / 60
        return self.prose / pace.prose_words_per_minute + formulas

    def minutes(self, pace: Pace) -> float:
        return (
            self.reading_minutes(pace)
            + (
                self.operations * pace.seconds_per_operation
                + self.values * pace.seconds_per_value
                + (pace.think_seconds if self.concept else 0)
                + self.setup_seconds() * pace.setup_share
                + pace.type_seconds
            )
            / 60
        )


_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
# layout commands of a formula: drawn, not read
_LAYOUT = re.compile(
    r"\\(?:begin|end)\{\w+\}|\\(?:quad|qquad|left|right|mathrm|text|textstyle|big|Big|displaystyle)\b|\\[,;!]"
)
_MATH_TOKEN = re.compile(r"\d+(?:\.\d+)?|\\?[A-Za-z]+")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['.\-][A-Za-z0-9]+)*")
_OPERATOR = re.compile(r"[-+/^]|\\(?:cdot|times|frac|sqrt|exp|log|tanh|sigma|sum|min|max)\b|\b(?:exp|log|tanh)\b")


def reading(markdown: str) -> tuple[int, int, int]:
    """(prose words, inline formulas, display formulas) of a text, as the third audit counted them."""
    display = len(re.findall(r"\$\$(.+?)\$\$", markdown, re.S))
    inline = len(_MATH.findall(markdown)) - display
    return len(_WORD.findall(_MATH.sub(" ", markdown))), inline, display


def words(markdown: str) -> int:
    """The words a student reads: prose words, and each number and symbol of a formula."""
    count = 0

    def formula(m: re.Match) -> str:
        nonlocal count
        count += len(_MATH_TOKEN.findall(_LAYOUT.sub(" ", m.group(1) or m.group(2))))
        return " "

    prose = _MATH.sub(formula, markdown)
    return count + len(_WORD.findall(prose))


def solution_operations(solution: str) -> int:
    """The operators of a worked solution's formulas: a lower bound for a question that declares no ``work``
    (a solution written over vectors counts one operator for every entry's)."""
    return sum(len(_OPERATOR.findall(m.group(1) or m.group(2))) for m in _MATH.finditer(solution))


def answer_values(v: Variant) -> int:
    if v.question.kind == NUMERIC:
        return len(v.answer) if isinstance(v.answer, list) else 1
    if v.question.kind == SYMBOLIC:
        import sympy

        return int(sympy.count_ops(v.answer)) + 1
    return 1


def work(v: Variant, eq=None) -> Work:
    """The measured work of one variant as its paper prints it (``eq``: its exam entry, for the
    partial-credit line); its text and solution are rendered here when not yet."""
    from .markdown import answer_format, partial_credit_rule, render_question

    if not v.text:
        v.text, v.solution = render_question(v)
    texts = [v.text, answer_format(v)] + ([partial_credit_rule(v, eq)] if eq is not None else [])
    read = sum(map(words, texts))
    prose, inline, display = (sum(c) for c in zip(*map(reading, texts)))
    kind = v.question.kind
    if kind in (CHOICE, TRUEFALSE):
        return Work(read, 0, 1, concept=True, prose=prose, inline=inline, display=display)
    count = v.question.work
    operations, written = count(v) if count else (solution_operations(v.solution), 0)
    # found, then copied (module doc)
    return Work(read, operations, written + 2 * answer_values(v), False, prose, inline, display, kind == SYMBOLIC)


def question_minutes(inst, pace: Pace = MEDIAN) -> float:
    """The minutes of a paper's questions (``variants.ExamInstance``), its rules left out."""
    return sum(work(v, eq).minutes(pace) for v, eq in zip(inst.variants, inst.questions))


def paper_estimate(inst, rules: str) -> dict[str, float]:
    """``{"strong": minutes, "median": minutes}``: the paper's ``rules`` read once, and every question."""
    read = words(rules)
    return {
        pace.name: read / (SKIM * pace.words_per_minute) + question_minutes(inst, pace) + pace.check_minutes
        for pace in (STRONG, MEDIAN)
    }


def estimate(inst, medium: str = "screen") -> dict[str, float]:
    """One paper's estimate (``variants.ExamInstance``) in ``medium``: its rules (the Time rule aside)
    read once, and every question."""
    from .markdown import paper_rules

    return paper_estimate(inst, " ".join(text for name, text in paper_rules(inst, medium) if name != "Time"))


def check_fits(inst) -> dict[str, float]:
    """The paper's estimate; an ``ExamError`` when the median student's exceeds the duration."""
    est = estimate(inst)
    duration = inst.exam.duration
    if duration and est["median"] > duration:
        raise ExamError(
            f"{inst.exam.path or inst.exam.title}: duration: student {inst.student}'s paper takes a median "
            f"student about {est['median']:.0f} minutes (a strong one {est['strong']:.0f}), more than its "
            f"{duration:g} minutes: take questions out or raise the duration (docs/exams.md, the time model)"
        )
    return est
