"""How long a paper takes: minutes per question from its measured work, for a strong and a median student.

A question's time is the sum of three measured amounts of work, each at a stated pace:

- **reading**: the words of its rendered text, the answer line and the partial-credit line under
  it included (``words``: every word of prose, and every number and symbol of its formulas, since
  a number must be read to be keyed in), at 200 words a minute
  for a strong student and 130 for a median one (adult silent reading of study text: about 200-250
  words a minute for prose, slower for technical text; 130 is the median student's pace the audit
  of the final measured on these papers);
- **operations**: the calculator operations of the question's own derivation (``WORK``: each
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
from collections.abc import Callable
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


# (operations, intermediate values written) of each calculation, counted on its worked solution
# for the sizes the bank draws (the comment is the count). A question missing here is counted from
# its rendered solution (``solution_operations``), a lower bound; the final's are all listed
# (tests/exam/test_timing.py).
def _k(v: Variant) -> int:
    return int(v.answer[0]) if isinstance(v.answer, list) else 0


WORK: dict[str, Callable[[Variant], tuple[int, int]]] = {
    # w1 = w0 - lr g1 (2 per entry), v2 = mu v1 + g2 (2), w2 = w1 - lr v2 (2); 2 entries: 12; w1, v2 written
    "opt.momentum_steps": lambda v: (12, 4),
    # s1 = (1-a) g1^2 (1 + 2 per entry), w1 = w0 - lr g1/sqrt(s1) (4), s2 (4), w2 (4): 29; s1, w1, s2 written
    "opt.rmsprop_steps": lambda v: (29, 6),
    # G_t = t g^2, step = lr g / sqrt(t g^2), simplified: four algebra steps
    "opt.adagrad_decay": lambda v: (4, 1),
    # the geometric sum (1-b) sum b^(t-k) = 1 - b^t, then its inverse: five algebra steps
    "opt.bias_correction": lambda v: (5, 1),
    # n squares, n-1 sums, a root, tau/norm, the comparison, n products
    "opt.clip_vector": lambda v: (3 * len(v.answer) + 2, 2),
    # HD, H^2, CH (3 products) and 4 sums
    "rnn.param_count": lambda v: (7, 0),
    # 3H(D + H) + 6H: D + H, 3H, their product, 6H, the sum
    "gru.param_count": lambda v: (5, 1),
    # W_xh x and W_hh h (4 products, 2 sums each), two vector sums (4), 2 tanh: 18; a_t written
    "rnn.cell_step": lambda v: (18, 2),
    # one size read off and doubled (or copied)
    "rnn.shapes": lambda v: (1, 0),
    # the row is a lookup; W_xh (2x3) times it: 6 products, 4 sums
    "rnn.embedding_lookup": lambda v: (10, 0),
    # C exps, C-1 sums, a quotient, a log
    "rnn.ce_loss": lambda v: (2 * len(v.params["logits"]) + 1, 1),
    # V quotients z/tau, V exps, V-1 sums, then p_0..p_k (k+1 quotients, k sums) and the comparisons
    "rnn.sample_token": lambda v: (3 * len(v.params["logits"]) - 1 + 2 * _k(v) + 1 + _k(v) + 1, 3),
    # dL/do_j = p_j - [j = y], written out over the C exps: three steps
    "rnn.ce_grad_formula": lambda v: (3, 0),
    # forward h1, h2 (5 each), o_t (4 each), 2-class softmax (5 each), p_t - e_t (1 each): 30; then
    # sum_t (p_t - e_t) h_t for W_hy (2 entries, 3 each: 6) or sum_t (p_t - e_t) for b_y (2 sums)
    "rnn.bptt_output_grad": lambda v: (36 if v.form == "W_hy" else 32, 10),
    # the forward as above (30); dL/dh2 (3), delta2 (3), dL/dh1 (5), delta1 (3); dL/du, dL/dw (3
    # each) and dL/db (1): 51; h_t, o_t, p_t, the four deltas and gradients written
    "rnn.bptt_param_grads": lambda v: (51, 14),
    # two paths (through o_t and h_{t+1}), the chain rule on each, their sum: six steps
    "rnn.hidden_grad_recursion": lambda v: (6, 1),
    # four gates: 2 products and 2 sums each, a sigmoid (3) for i, f, o, a tanh for the candidate:
    # 26; C_t (3), h_t (2)
    "lstm.cell_update": lambda v: (31, 5),
    # r and z (2 products, 3 sums, a sigmoid: 8 each), n (7), h_t = (1-z) n + z h (4)
    "gru.update": lambda v: (27, 3),
    # q1 (4 products, 2 sums), k1, k2, v1, v2 (6 each), two scores (3 each), /sqrt(2) (3),
    # a 2-way softmax (5), y1 (2 entries, 3 each): 50; q, k, v, the scores and weights written
    "attn.qkv_projection": lambda v: (50, 14),
    # Var(q_i k_i) = Var q_i Var k_i, d independent terms add: three steps
    "attn.var_qk": lambda v: (3, 0),
    # 4E^2 + 4E: a square, two products, a sum
    "attn.mha_params": lambda v: (4, 0),
    # the column's parity gives i, 2i/d (2), 10000^x, p / it, sin or cos: 6
    "pos.sinusoidal_entry": lambda v: (6, 2),
    # 4E^2 + 4E + 2EF + F + E + 4E (7 products, 6 sums) times the layers
    "tf.encoder_params": lambda v: (14, 2),
    # 2(4E^2 + 4E) + 2EF + F + E + 6E (7 products, 5 sums)
    "tf.decoder_params": lambda v: (12, 2),
    # the encoder's tokens Hf * Wf (one product), the rest read off
    "tf.caption_shapes": lambda v: (1, 0),
    # (H / P)(W / P) + 1: two quotients, a product, a sum
    "tf.vit_tokens": lambda v: (4, 0),
    # h_t = a_t h_{t-1} + b_t: a product and a sum per step
    "ssm.linear_recurrence": lambda v: (2 * len(v.answer), 0),
    # 2 L E T bytes / 2^20: four products, a power, a quotient
    "ssm.kv_cache": lambda v: (6, 0),
}

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
    """The operators of a worked solution's formulas: a lower bound for a question ``WORK`` lacks
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
    count = WORK.get(v.id)
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
