"""The bank lint's rules on words, draws and pools: each finds the audit's case and stays silent on
its fix; the real bank and the final are clean under all of them (``seqlab exam lint``).

The fixtures are small items written here, each a copy of what the audit met on a paper
(``lint_text``, ``lint_draws`` and ``fairness`` say what each rule sees).
"""

from __future__ import annotations

import json

import pytest

from seqlab.cli import main
from seqlab.exam.bank import load_bank
from seqlab.exam.bank_lint import lint_findings, spread
from seqlab.exam.draws import draw
from seqlab.exam.examfile import Exam, all_questions_exam, exam_from_dict, load_exam
from seqlab.exam.fairness import pool_findings
from seqlab.exam.lint_draws import degenerate
from seqlab.exam.lint_text import HEDGES, NOTES, hedged_claims, hedges_from_notes, lint_texts
from seqlab.exam.model import CHOICE, EXACT, FOUR_DIGITS, NUMERIC, REGISTRY, TRUEFALSE, Question, Variant
from seqlab.paths import DEFAULT_EXAM

load_bank()


def _q(qid: str, kind: str, title: str, sample=lambda rng: {}, answer=lambda p: 0.0, tolerance=None) -> Question:
    return Question(
        id=qid,
        kind=kind,
        sample=sample,
        answer=answer,
        template="",
        title=title,
        sections=("L5 §5.1",),
        tolerance=tolerance or (FOUR_DIGITS if kind == NUMERIC else None),
    )


def _numeric(number: int, title: str, text: str) -> Variant:
    return Variant(_q(f"n.{number}", NUMERIC, title), number, 2.0, {}, 0.5, "0.5", tolerance=FOUR_DIGITS, text=text)


def _choice(number: int, title: str, stem: str, key: str, wrong: dict[str, str]) -> Variant:
    options = [key, *wrong]
    params = {"stem": stem, "options": options, "correct": "A", "why": dict(zip("BCDE", wrong.values()))}
    return Variant(_q(f"c.{number}", CHOICE, title), number, 1.0, params, "A", "A", text=stem)


def _truefalse(number: int, title: str, statement: str, truth: bool, why: str) -> Variant:
    answer = "true" if truth else "false"
    params = {"text": statement, "truth": answer, "why": why}
    return Variant(_q(f"t.{number}", TRUEFALSE, title), number, 1.0, params, answer, answer, text=statement)


def _rules(variants: list[Variant]) -> set[tuple[int, str]]:
    return {(f.number, f.rule) for f in lint_texts(variants)}


CHAR_LM = {
    "title": "Generating with a character-level RNN",
    "stem": "At test time, a character-level RNN language model generates text by ...",
    "key": "sampling a character from the softmax output and feeding it back as the input",
    "wrong": {
        "running the RNN backwards from an <END> token until it reaches the <START> token": "it runs forward.",
        "predicting all characters at once from the initial hidden state, in a single step": "it is sequential.",
        "choosing the character whose embedding is closest to h_t, without any softmax": "the logits go to a softmax.",
    },
}
SAMPLING = (
    "A character-level language model over $V = 4$ tokens generates text by sampling: at each step it turns its "
    "logits $z$ into $p = \\mathrm{softmax}(z / \\tau)$, draws the next token from $p$, and feeds it back as the "
    "next input. Which token is sampled?"
)
SAMPLING_FIXED = (
    "A language model over $V = 4$ tokens turns its logits $z$ into $p = \\mathrm{softmax}(z / \\tau)$ and picks "
    "its next token with one uniform number $u$. Which token is sampled?"
)


def test_a_stem_that_carries_another_items_key_in_words_is_a_giveaway():
    paper = [_numeric(14, "Sampling the next token", SAMPLING), _choice(23, **CHAR_LM)]
    assert _rules(paper) == {(14, "giveaway")}
    found = lint_texts(paper)[0]
    assert "question 23" in found.what and "feed" in found.what


def test_the_stem_without_the_procedure_gives_nothing_away():
    assert _rules([_numeric(14, "Sampling the next token", SAMPLING_FIXED), _choice(23, **CHAR_LM)]) == set()


CLIP = "Norm clipping changes the gradient only when its norm exceeds the threshold."


def test_a_paraphrase_through_the_synonyms_is_found_and_the_bare_rule_is_not():
    told = "Gradient norm clipping with threshold $\\tau = 2$ rescales the gradient when its norm is above $\\tau$."
    bare = "Gradient norm clipping (as in the notes) with threshold $\\tau = 2$. What is the clipped gradient?"
    statement = _truefalse(8, "Gradient clipping", CLIP, True, "the factor is min(1, tau/norm).")
    assert _rules([_numeric(5, "Gradient norm clipping", told), statement]) == {(5, "giveaway")}
    assert _rules([_numeric(5, "Gradient norm clipping", bare), statement]) == set()


def test_a_title_naming_the_property_a_false_statement_denies_answers_it():
    statement = "An RNN keeps a separate copy of W_hh for each time step, learned independently."
    assert _rules([_truefalse(3, "Weight sharing over time", statement, False, "one W_hh.")]) == {(3, "giveaway")}
    dog = 'Without positional encodings, a self-attention layer can tell "dog bites man" from "man bites dog".'
    assert _rules([_truefalse(4, "Permutation invariance of attention", dog, False, "")]) == {(4, "giveaway")}


def test_a_neutral_title_or_a_true_statement_under_the_property_is_silent():
    statement = "An RNN keeps a separate copy of W_hh for each time step, learned independently."
    assert _rules([_truefalse(3, "The recurrent weights over time", statement, False, "one W_hh.")]) == set()
    shared = "An RNN uses the same W_hh at every time step."
    assert _rules([_truefalse(3, "Weight sharing over time", shared, True, "shared by all steps.")]) == set()


GRU_WRONG = {
    "An LSTM has no forget gate; the GRU adds one": "the forget gate is the LSTM's; the GRU has update and reset gates.",
    "A GRU keeps a cell state C_t as an LSTM does": "the GRU has only the hidden state.",
    "LSTMs cannot be trained with BPTT": "both are trained with BPTT.",
}


def test_a_key_counting_three_gates_where_the_explanation_names_two_is_a_contradiction():
    key = "A GRU has no cell state and three gate blocks to the LSTM's four, so it has fewer parameters."
    found = lint_texts([_choice(20, "LSTM vs GRU", "Which statement is right?", key, GRU_WRONG)])
    assert [(f.rule, "counted 2 and 3" in f.what) for f in found] == [("contradiction", True)]


def test_counts_that_agree_or_belong_to_another_model_are_silent():
    key = "A GRU has no cell state and three weight blocks (two gates and the candidate) to the LSTM's four."
    why = {
        **GRU_WRONG,
        "An LSTM has two gates": "the LSTM has input, forget and output gates, the GRU update and reset.",
    }
    assert _rules([_choice(20, "LSTM vs GRU", "Which statement is right?", key, why)]) == set()


def test_an_explanation_calling_the_outputs_the_same_only_permuted_contradicts_a_false_key():
    dog = 'Without positional encodings, a self-attention layer can tell "dog bites man" from "man bites dog".'
    why = "the same set of tokens in another order gives the same outputs, only permuted."
    assert _rules([_truefalse(35, "Token order in self-attention", dog, False, why)]) == {(35, "contradiction")}
    fixed = 'Without positional encodings, the output for "dog" differs between "dog bites man" and "man bites dog".'
    why = 'each output depends on the set of tokens, not their order, so "dog" gets the same output in both.'
    assert _rules([_truefalse(35, "Token order in self-attention", fixed, False, why)]) == set()


def test_the_recorded_hedges_are_the_notes_own():
    # The notes sit beside the course, not in it: a clean clone (CI) reads the record alone. Where
    # the notes are at hand the record must be what they say (seqlab regenerate --only hedges).
    recorded = json.loads(HEDGES.read_text(encoding="utf-8"))
    assert recorded and all(len(terms) >= 3 and all(len(c) >= 2 for c in claims) for _, terms, claims in recorded)
    if NOTES.is_dir():
        assert recorded == hedges_from_notes(NOTES)


def test_the_notes_hedge_the_sequence_loss_and_an_item_stating_it_as_a_rule_is_found():
    assert any("损失" in sentence for sentence, _, _ in hedged_claims())
    rule = "The loss of a many-to-many RNN is the sum of the per-step losses."
    assert _rules([_truefalse(12, "The recurrent weights", rule, True, "")]) == {(12, "hedge")}


def test_a_hedged_statement_or_one_about_another_subject_is_silent():
    hedged = "In the notes, the loss of an RNN on a sequence is usually taken as the sum over time steps."
    gradient = "The gradient of the loss with respect to W_hh is the sum of the contributions of all time steps."
    assert _rules([_truefalse(12, "Loss", hedged, True, ""), _truefalse(13, "Sharing", gradient, True, "")]) == set()


def test_the_notes_hedged_policy_gradient_and_abstract_layers_stated_as_rules_are_found():
    # the audit's two: the notes say hard attention "通常需要 reinforcement learning / policy
    # gradient" and give "高层捕捉抽象语义" as an intuition (直觉)
    hard = "Soft attention trains with backpropagation, while hard attention picks one location and needs policy gradients."
    wrong = {"Hard attention averages all locations with equal weights.": "it picks one."}
    deep = "A deep bidirectional RNN stacks bidirectional layers, so that higher layers build more abstract representations."
    found = _rules(
        [_choice(36, "Soft vs hard attention", "Which is right?", hard, wrong), _truefalse(24, "BiRNN", deep, True, "")]
    )
    assert found == {(36, "hedge"), (24, "hedge")}


def test_the_same_claims_said_as_the_notes_say_them_are_silent():
    hard = "Soft attention is trained by backpropagation, while sampling one location makes hard attention non-differentiable."
    wrong = {"Hard attention averages all locations with equal weights.": "it picks one."}
    deep = "In the notes' intuition, higher layers of a deep bidirectional RNN usually capture more abstract patterns."
    stem = "An Elman RNN keeps a hidden state of size H and outputs logits over C classes. How many parameters?"
    found = _rules(
        [_choice(36, "Soft vs hard attention", "Which is right?", hard, wrong), _truefalse(24, "BiRNN", deep, True, "")]
    )
    # a calculation's stem that names the same terms sets a scene; it states no claim
    assert found | _rules([_numeric(8, "Parameters of an Elman RNN", stem)]) == set()


def test_degenerate_draws_are_found():
    q = _q("d.step", NUMERIC, "A step")
    assert "power of 10" in degenerate(q, {"x": [0.5]}, [0.1, 0.37])
    assert "power of 10" in degenerate(q, {"x": [0.5]}, 100.0)
    assert "W_hh" in degenerate(q, {"W_hh": [[0.0, 0.5], [0.3, -0.2]]}, [0.31, 0.27])
    token = REGISTRY["rnn.sample_token"]
    p = {"logits": [1.5, -0.3, 0.2, 0.9], "temperature": 2.0, "u": 0.05}  # u < p_0: token 0
    assert "cumulative sum" in degenerate(token, p, token.answer(p))


def test_ordinary_draws_and_exact_counts_are_not_degenerate():
    q = _q("d.step", NUMERIC, "A step")
    assert degenerate(q, {"W": [[0.5]], "b": [0.0], "h0": 0.0}, [0.31, 1.0]) == ""  # a zero bias, a key of 1
    count = _q("d.count", NUMERIC, "A count", tolerance=EXACT)
    assert degenerate(count, {"T": 10}, [10.0, 100.0]) == ""
    token = REGISTRY["rnn.sample_token"]
    p = {"logits": [1.5, -0.3, 0.2, 0.9], "temperature": 2.0, "u": 0.75}
    assert degenerate(token, p, token.answer(p)) == ""


def test_draw_refuses_degenerate_draws_and_draws_again():
    # a zero weight one draw in two: no student gets it, and the draw stays a function of the id
    q = _q("d.weight", NUMERIC, "A weight", sample=lambda rng: {"w": rng.choice([0.0, 0.6])}, answer=lambda p: 0.3)
    draws = [draw(q, 7, f"s{i}")[0]["w"] for i in range(40)]
    assert set(draws) == {0.6} and draws == [draw(q, 7, f"s{i}")[0]["w"] for i in range(40)]


def _pool_exam(members: list) -> Exam:
    return exam_from_dict(
        {
            "title": "t",
            "seed": 1,
            "parts": [{"questions": [{"pool": "p", "draw": 1, "points": 2, "questions": members}]}],
        }
    )


def test_a_pool_of_a_computation_and_a_shape_read_off_is_unfair():
    found = pool_findings(_pool_exam(["tf.vit_tokens", "rnn.shapes"]), [f"s{i}" for i in range(6)])
    assert len(found) == 1 and "different work" in found[0] and "rnn.shapes" in found[0], found


def test_the_finals_pools_ask_for_equal_work():
    assert pool_findings(load_exam(DEFAULT_EXAM), [f"s{i}" for i in range(20)]) == []


@pytest.mark.bank  # every question of the bank on 20 papers, 100 draws each: a few minutes
def test_the_whole_bank_is_clean_under_every_rule():
    # numeric coincidences between a hundred questions on one "paper" left out (bank_lint says why)
    assert lint_findings(all_questions_exam(seed=20261215), papers=20, draws=100, coincidences=False) == []


@pytest.mark.bank  # 100 papers of the final and 300 draws of each of its questions
def test_the_final_is_clean_under_every_rule():
    found = lint_findings(load_exam(DEFAULT_EXAM), papers=100, draws=300)
    chance = [f for f in found if ": leak: prints " in f and "formula" not in f]
    assert [f for f in found if f not in chance] == []
    # A printed number equal to another question's key by chance: measured once in 100 papers
    # (ssm.kv_cache's 1536 MiB where tf.decoder_params prints F = 1536; sizes of powers of 2 meet).
    # More than 2 would be a generator printing what another computes, not chance.
    assert len(chance) <= 2, chance


@pytest.mark.bank  # 1000 papers rendered and timed: about two minutes
def test_the_spread_of_1000_papers_of_the_final_is_bounded():
    s = spread(load_exam(DEFAULT_EXAM), 1000)
    print("\n".join(s.lines()))
    assert s.points[0] == s.points[2] == 100
    # every paper asks for the same computed entries but for a chance one: a printed number that
    # happens to equal a key entry of a question without ``own_entries`` (measured: spread 1)
    assert s.work[2] - s.work[0] <= 2
    # the median student's minutes differ by the words of the drawn texts (measured: about 2.5)
    assert s.minutes[2] - s.minutes[0] <= 5


@pytest.mark.bank  # the command over a few papers: a few seconds
def test_seqlab_exam_lint_reports_zero_findings_and_the_spread(capsys):
    assert main(["exam", "lint", "--papers", "3", "--draws", "5", "--spread", "3"]) == 0
    out = capsys.readouterr().out
    assert "0 finding(s)" in out and "spread over 3 papers" in out
