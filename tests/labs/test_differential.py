"""Naming a lab's slip by differential replay (seqlab/labs/differential.py): every catalogue entry
is named on a loop written with that slip (where it must fire) and on no other loop: not on the
other slips' loops, not on the slips it does not list, not on the reference or the alternative
correct loops (where it must stay silent). The two wrong names the labs used to give are held
here too: a recall model that hands probabilities to the loss is not told "no gradient through
time", and a table in the wrong dtype is not told its values are in another order.

The loops run in-process at small sizes (a batch of 4 to 8, short sequences, a dozen steps):
the replays are the lab's own, so the evidence is the same kind at a fraction of the cost, and at
the grader's sizes in the last tests. Each still takes a second or more, so all but the cheap
ones are in the bank.
"""

from __future__ import annotations

import textwrap
import types

import pytest
import torch

from seqlab.grading.diagnose import diagnose
from seqlab.labs import char_rnn, differential, recall, reverser, selective_copy, slips
from seqlab.labs.slips import Evidence, name_slip
from seqlab.reference import load_reference
from seqlab.tolerance import Tolerance
from tests.labs.test_lab_tasks import compiled, reference_function
from tests.mutants import Mutant, Variant
from tests.mutants.labs import LAB_ALTERNATIVES, LAB_MUTANTS, _train
from tests.mutants.labs_slips import NAMED_MUTANTS
from tests.mutants.labs_tasks import TASK_ALTERNATIVES, TASK_BASES, _mutant

TASKS = {
    "lstm_gru.train_recall": recall,
    "transformer.train_reverser": reverser,
    "selective_scan.train_selective_copy": selective_copy,
    "rnn.train_char_rnn": char_rnn,
}
# The task labs at small sizes: the protocol and its slips are the same, the replays cheap.
SMALL = {
    "lstm_gru.train_recall": {"batch_size": 8, "lag": 4},
    "transformer.train_reverser": {"batch_size": 4},
    "selective_scan.train_selective_copy": {"batch_size": 4},
    "rnn.train_char_rnn": {},
}
STEPS = {"rnn.train_char_rnn": 40}  # past the first wrap of the windows (step 25)

CATALOGUED = {k.name for _, known in differential.CATALOGUE.values() for k in known}
CHAR_LOOPS = [m for m in LAB_MUTANTS if m.function == "rnn.train_char_rnn"]
RECALL, REVERSER, COPY, CHAR = TASKS


def _lstm(child_inputs: dict) -> dict:
    """The recall inputs for an LSTM, in float64 (as the grader's kind="lstm" variant has them)."""
    params = recall.initial_params("lstm", torch.Generator().manual_seed(3), torch.float64)
    return {**child_inputs, "kind": "lstm", "params": params}


def _short_text(child_inputs: dict) -> dict:
    """The character lab's variant: streams three windows long, another lr, a clip above the norms."""
    from seqlab.labs.variants import _short_text as variant

    return variant(child_inputs)


# The kinds grown from the second blind bank (tests/labs/blind_slips_2/), each cut from a correct
# loop of tests/mutants/ by its own hand, with the inputs where it shows: a kind, a text length or a
# clip the lab's own run never has is tried by seqlab/labs/variants.py's tests, so their fire tests
# run on those inputs too.
GROWN = [
    (
        _mutant(
            RECALL,
            "the LSTM read out from its cell state",
            "the LSTM's cell state read out instead of h_T",
            (
                'hs, h_T = gru_forward(x, h0, leaves["W_ih"], leaves["W_hh"], leaves["b_ih"], leaves["b_hh"])',
                'hs, (_, h_T) = lstm_forward(x, h0, h0, leaves["W_ih"], leaves["W_hh"], leaves["b_ih"], leaves["b_hh"])',
            ),
        ),
        _lstm,
    ),
    (
        _mutant(
            REVERSER,
            "the table scaled by sqrt(d) before embed_tokens",
            "embeddings scaled by sqrt(d) twice",
            ('table = p["embedding"]', 'table = p["embedding"] * p["embedding"].shape[1] ** 0.5'),
        ),
        None,
    ),
    (
        _mutant(
            REVERSER,
            "the loss against src",
            "trained against the source, not the reversed target",
            ("tgt.reshape(-1))", "src.reshape(-1))"),
        ),
        None,
    ),
    (
        _mutant(
            REVERSER,
            "the encoder fed tgt_in",
            "the encoder reads the decoder's input",
            ('embed_tokens(src, table, pe), p["encoder"]', 'embed_tokens(tgt_in, table, pe), p["encoder"]'),
        ),
        None,
    ),
    (
        _mutant(
            REVERSER,
            "the decoder fed start tokens only",
            "no teacher forcing (the decoder fed start tokens only)",
            (
                "embed_tokens(tgt_in, table, pe), memory",
                "embed_tokens(torch.full_like(tgt_in, vocab), table, pe), memory",
            ),
        ),
        None,
    ),
    (
        _mutant(
            REVERSER,
            "the encoder alone pre-LN",
            "pre-LN blocks instead of post-LN",
            ('p["encoder"], REVERSER_HEADS)', 'p["encoder"], REVERSER_HEADS, norm_first=True)'),
        ),
        None,
    ),
    (
        _mutant(COPY, "delta without its softplus", "softplus left out of delta", (", delta_softplus=True)", ")")),
        # its first loss overflows float32 (the raw delta makes the state grow: ~1e300), and a run
        # that is not finite names nothing; it shows in the float64 variant, as here
        lambda child_inputs: {**child_inputs, "params": {k: v.double() for k, v in child_inputs["params"].items()}},
    ),
    (
        _mutant(
            COPY,
            "the loss on the last output",
            "loss on the last output only",
            (
                "loss = softmax_cross_entropy(logits.reshape(-1, M), targets.reshape(-1))",
                "loss = softmax_cross_entropy(logits[:, -1], targets[:, -1])",
            ),
        ),
        None,
    ),
    (
        _mutant(
            COPY,
            "the time-invariant C made from b_B",
            "C built from B's parameters",
            ('("b_delta", "b_B", "b_C")', '("b_delta", "b_B", "b_B")'),
            (
                "grads = torch.autograd.grad(loss, [p[name] for name in trained])",
                "grads = [torch.zeros_like(p[n]) if g is None else g for n, g in zip(trained, "
                "torch.autograd.grad(loss, [p[name] for name in trained], allow_unused=True))]",
            ),
        ),
        lambda child_inputs: {**child_inputs, "selective": False},
    ),
    (
        Mutant(
            CHAR,
            "stream b starts at token b",
            _train(
                (
                    "streams = tokens[: batch_size * L].reshape(batch_size, L)",
                    "streams = torch.stack([tokens[b : b + L] for b in range(batch_size)])",
                )
            ),
            hint="streams cut the wrong way",
        ),
        None,
    ),
    (
        Mutant(
            CHAR,
            "L // seq_len windows",
            _train(("windows = (L - 1) // seq_len", "windows = L // seq_len")),
            hint="one window too many (L // seq_len)",
        ),
        _short_text,
    ),
    (
        Mutant(
            CHAR,
            "the clip written in",
            _train(("for k in PARAM_KEYS], clip)", "for k in PARAM_KEYS], 5.0)")),
            hint="clip ignored",
        ),
        _short_text,
    ),
    (
        Mutant(CHAR, "the lr written in", _train(("lr=lr)", "lr=1e-2)")), hint="learning rate ignored"),
        None,
    ),
]
CHANGE = {m.id: change for m, change in GROWN if change is not None}
WRONG = [m for m in [*NAMED_MUTANTS, *CHAR_LOOPS, *(m for m, _ in GROWN)] if m.hint]
FIRES = [m for m in WRONG if m.hint in CATALOGUED]
OTHERS = [m for m in WRONG if m.hint not in CATALOGUED]
CORRECT = [*TASK_ALTERNATIVES, *TASK_BASES, *LAB_ALTERNATIVES]


def small_task(function: str, seed: int = 0, variant=None) -> tuple[dict, dict]:
    """The lab's task at small sizes, with the inputs ``variant`` shows on (``CHANGE``)."""
    child_inputs, heldout = TASKS[function].draw_task(seed)
    child_inputs = {**child_inputs, **SMALL[function], "steps": STEPS.get(function, 12)}
    change = CHANGE.get(variant.id) if variant is not None else None
    return (change(child_inputs) if change else child_inputs), heldout


def fresh(child_inputs: dict) -> dict:
    """The inputs with a generator of their own: the student's call must not move the parent's."""
    if "generator" not in child_inputs:
        return dict(child_inputs)
    gen = torch.Generator()
    gen.set_state(child_inputs["generator"].get_state())
    return {**child_inputs, "generator": gen}


def losses_of(train, child_inputs: dict) -> torch.Tensor | None:
    try:
        return train(**fresh(child_inputs))[1]
    except Exception:  # a crash is named by crash_hint, never by a replay
        return None


def replayed(variant, seed: int = 0) -> str:
    child_inputs, _ = small_task(variant.function, seed, variant)
    losses = losses_of(compiled(variant), child_inputs)
    return "" if losses is None else differential.diagnosis(variant.function, child_inputs, losses)


def test_every_catalogue_entry_has_a_loop_that_shows_it():
    assert {m.hint for m in FIRES} >= CATALOGUED, sorted(CATALOGUED - {m.hint for m in FIRES})
    for function, (_, known) in differential.CATALOGUE.items():
        # a name may have several entries (its variants: the encoder alone pre-LN, or both blocks),
        # never one entry twice, and one name has one explanation but where the variants differ
        assert len({(k.name, k.switches) for k in known}) == len(known), function
    # a hint is "name: what to do", and the class report counts the name before the first colon
    assert not [name for name in CATALOGUED if ":" in name]


@pytest.mark.bank
@pytest.mark.parametrize("variant", FIRES, ids=lambda v: v.id)
def test_a_catalogued_slip_is_named_and_no_other(variant):
    hint = replayed(variant)
    assert hint.startswith(f"{variant.hint}: "), hint
    assert not any(f"{name}:" in hint or f"and {name}" in hint for name in CATALOGUED - {variant.hint})


@pytest.mark.bank
@pytest.mark.parametrize("variant", OTHERS, ids=lambda v: v.id)
def test_a_slip_the_catalogue_does_not_list_is_named_nothing_by_the_replay(variant):
    assert replayed(variant) == ""


@pytest.mark.bank
@pytest.mark.parametrize("variant", CORRECT, ids=lambda v: v.id)
def test_a_correct_loop_is_named_nothing(variant):
    for seed in (0, 1):
        child_inputs, _ = small_task(variant.function, seed)
        losses = losses_of(compiled(variant), child_inputs)
        assert losses is not None
        assert [c.names for c in differential.matching(variant.function, child_inputs, losses)] == [()]
        assert differential.diagnosis(variant.function, child_inputs, losses) == ""


@pytest.mark.bank
def test_the_reference_is_named_nothing_on_every_lab():
    for function in TASKS:
        child_inputs, _ = small_task(function)
        losses = losses_of(reference_function(function), child_inputs)
        assert differential.diagnosis(function, child_inputs, losses) == "", function


@pytest.mark.bank
def test_two_slips_at_once_are_named_together_only_when_the_pair_alone_follows():
    base = next(v for v in TASK_BASES if v.function == "lstm_gru.train_recall")
    both = Variant(
        base.function,
        "mean readout, losses after the update",
        base.source.replace("logits = h_T @", "logits = hs.mean(dim=1) @").replace(
            "        losses.append(loss.detach())\n",
            "        with torch.no_grad():\n"
            "            hs, _ = gru_forward(x, h0, params['W_ih'], params['W_hh'], params['b_ih'], params['b_hh'])\n"
            "            loss = softmax_cross_entropy(hs.mean(dim=1) @ params['W_y'].T + params['b_y'], tokens[:, 0])\n"
            "        losses.append(loss.detach())\n",
        ),
    )
    hint = replayed(both)
    assert hint.startswith("readout pools the states instead of taking the last and losses recorded after the update: ")


@pytest.mark.bank
def test_a_slip_that_makes_another_moot_is_named_alone():
    """A readout of the first state has no gradient through time to lose: the pair with a
    detached state follows as well as the readout alone, and only what both share is named."""
    variant = next(m for m in NAMED_MUTANTS if m.hint == "readout from h_1, not h_T")
    child_inputs, _ = small_task(variant.function)
    losses = losses_of(compiled(variant), child_inputs)
    found = {c.names for c in differential.matching(variant.function, child_inputs, losses)}
    assert ("readout from h_1, not h_T",) in found and len(found) > 1
    assert differential.diagnosis(variant.function, child_inputs, losses).startswith("readout from h_1, not h_T: ")


@pytest.mark.bank
@pytest.mark.parametrize("function", TASKS)
def test_the_switches_said_to_act_later_leave_the_first_loss_as_it_is(function):
    """``differential.LATER``: the candidates that differ only in these share their first loss
    (computed once). Each entry made of them alone starts where the protocol starts."""
    child_inputs, _ = small_task(function)
    protocol = next(iter(differential.CATALOGUE[function][0](child_inputs)))
    for known in differential.CATALOGUE[function][1]:
        first = next(iter(differential.CATALOGUE[function][0](child_inputs, **dict(known.switches))))
        if {k for k, _ in known.switches} <= differential.LATER:
            assert first == protocol, known.name


def test_losses_nothing_can_follow_name_nothing():
    child_inputs, _ = small_task("lstm_gru.train_recall")
    for losses in (torch.full((12,), 2.0), torch.full((12,), float("nan")), torch.zeros(0)):
        assert differential.diagnosis("lstm_gru.train_recall", child_inputs, losses) == ""


# --- the generator -------------------------------------------------------------------------------


def _evidence(train, function: str) -> Evidence:
    child_inputs, heldout = small_task(function)

    def probe(**overrides):
        try:
            return train(**fresh({**child_inputs, **overrides}))
        except Exception:
            return None

    params, losses = train(**fresh(child_inputs))
    return Evidence(child_inputs, heldout, params, losses, probe=probe, function=function)


@pytest.mark.bank
@pytest.mark.parametrize("variant", [m for m in NAMED_MUTANTS if m.hint == "generator not passed on"], ids=str)
def test_a_batch_drawn_without_the_generator_is_named(variant):
    evidence = _evidence(compiled(variant), variant.function)
    assert evidence.generator_ignored and slips.GENERATOR_IGNORED.seen(evidence)
    assert slips.GENERATOR_IGNORED.hint(evidence).startswith("generator not passed on: ")


@pytest.mark.bank
@pytest.mark.parametrize("variant", [*TASK_ALTERNATIVES, *TASK_BASES], ids=lambda v: v.id)
def test_a_loop_that_draws_from_its_generator_is_not_named_for_it(variant):
    assert _evidence(compiled(variant), variant.function).generator_ignored == ""


@pytest.mark.bank
def test_a_loop_whose_global_draws_repeat_is_named_by_the_other_state():
    """A child whose global generator starts from the same state at every call gives the same
    run twice: two different generator states giving the same run name it instead."""
    variant = next(m for m in NAMED_MUTANTS if m.hint == "generator not passed on" and "recall" in m.function)
    train = compiled(variant)

    def reseeded(**kwargs):
        torch.manual_seed(1234)
        return train(**kwargs)

    evidence = _evidence(reseeded, variant.function)
    assert evidence.generator_ignored == "two different generator states gave the same run of your function"


# --- the two wrong names the labs used to give ----------------------------------------------------

_DOUBLE_SOFTMAX = """
def recall_logits(kind, params, x):
    h0 = x.new_zeros(x.shape[0], params["W_hh"].shape[1])
    _, h_T = gru_forward(x, h0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
    return torch.softmax(h_T @ params["W_y"].T + params["b_y"], dim=-1)
"""


def lab_with(function: str, source: str):
    """The reference's lab function, run with ``source`` (a def of its module) in place of the
    module's own: the lab calls the student's version, as a submission's lab does."""
    module = getattr(load_reference(), function.split(".")[0])
    namespace = dict(vars(module))
    exec(textwrap.dedent(source), namespace)
    train = getattr(module, function.split(".")[1])
    return types.FunctionType(train.__code__, namespace, train.__name__, train.__defaults__)


@pytest.mark.bank
def test_a_recall_model_that_returns_probabilities_is_named_a_double_softmax_not_a_lost_gradient():
    function = "lstm_gru.train_recall"
    evidence = _evidence(lab_with(function, _DOUBLE_SOFTMAX), function)
    hint = name_slip(recall.SLIPS, evidence)
    assert hint.startswith("probabilities given to the loss as logits (a double softmax): "), hint
    assert "gradient through time" not in hint and ".detach()" not in hint


def test_a_table_in_the_wrong_dtype_with_the_right_values_is_not_said_to_be_reordered():
    """The values are right, the dtype is not (which the structure check says): a reorder
    that changes nothing (a permute of a size-1 axis) says nothing either."""
    table = torch.tensor([[0.0, 1.0, 0.0, 1.0, 0.0, 1.0]], dtype=torch.float64)  # P = 1
    tol = Tolerance(rtol=1e-7, atol=1e-9)
    assert diagnose(table.float(), table, tol, {"P": 1, "d": 6}) == ""
    assert diagnose(table.float().double(), table, tol, {"P": 1, "d": 6}) == ""
    wide = torch.arange(6.0, dtype=torch.float64).reshape(2, 3)
    said = diagnose(wide.T.reshape(2, 3), wide, tol, {})  # a real reorder is still named
    assert said.startswith("your values are right but in another order"), said


# --- the held-out words --------------------------------------------------------------------------


def test_each_lab_says_what_its_held_out_data_is():
    words = {function: task.HELDOUT_WORDS for function, task in TASKS.items()}
    assert "text" in words["rnn.train_char_rnn"]
    assert all("text" not in w for f, w in words.items() if f != "rnn.train_char_rnn"), words
    assert len(set(words.values())) == len(words)


# --- at the grader's sizes (the bank) -------------------------------------------------------------


@pytest.mark.bank
@pytest.mark.parametrize("variant", FIRES, ids=lambda v: v.id)
def test_a_catalogued_slip_is_named_at_the_graders_sizes(variant):
    for seed in (0, 1):
        child_inputs, _ = TASKS[variant.function].draw_task(seed)
        change = CHANGE.get(variant.id)
        child_inputs = change(child_inputs) if change else child_inputs
        losses = losses_of(compiled(variant), child_inputs)
        hint = differential.diagnosis(variant.function, child_inputs, losses)
        assert hint.startswith(f"{variant.hint}: "), (seed, hint)


@pytest.mark.bank
@pytest.mark.parametrize("variant", CORRECT, ids=lambda v: v.id)
def test_a_correct_loop_is_named_nothing_at_the_graders_sizes(variant):
    for seed in range(5):
        child_inputs, _ = TASKS[variant.function].draw_task(seed)
        losses = losses_of(compiled(variant), child_inputs)
        assert differential.diagnosis(variant.function, child_inputs, losses) == "", seed


def test_losses_a_hair_from_the_protocols_are_not_called_scaled():
    """A ratio of 1 is no factor: a recall model fed one token less starts within 1e-3 of the
    protocol's loss (the blind bank's first figure named it "scaled by a constant: 1 times")."""
    from seqlab.labs.replay import first_steps_hint

    want = torch.tensor([2.0794, 2.0700, 2.0650], dtype=torch.float64)
    off = torch.ones(3, dtype=torch.bool)
    for factor, said in ((1.0004, ""), (4.0, "loss scaled by a constant"), (128.0, "loss summed, not averaged")):
        hint = first_steps_hint(want * factor, want, off, {"sequences in a batch (batch_size)": 128}, "draw")
        assert hint.startswith(said) and (said or hint.startswith("the first loss is not the protocol's")), hint
