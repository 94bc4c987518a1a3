"""Naming a lab's slip by differential replay: the protocol run again with each known slip
switched on, and pairs of them, from the same initial parameters and generator state as the
student's run (seqlab.labs.protocols), each held against the student's reported losses.

A slip is named only when its replay, alone among all the candidates and the protocol itself,
follows the student's losses over the first steps to the tolerance of a correct loop. A loop
that learns with two known slips is named by the pair when the pair alone matches. A loop with a
slip nobody listed matches no replay and is named nothing: a wrong name is worse than none
(tests/labs/test_differential.py holds every entry against its own loop, the other slips'
loops and alternative correct loops).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import torch

from . import protocols


@dataclass(frozen=True)
class Known:
    name: str  # as the feedback names it (the class report counts the name)
    switches: tuple[tuple[str, object], ...]
    explain: str


def _known(name: str, explain: str, **switches: object) -> Known:
    return Known(name, tuple(sorted(switches.items())), explain)


AFTER = _known(
    "losses recorded after the update",
    "each of your losses is the loss of the updated parameters on the step's batch: losses[s] is the "
    "loss before the update (the one the gradient was taken of), recorded before adam changes anything.",
    after=True,
)
ACCUMULATE = _known(
    "gradients accumulated across steps",
    "each step's gradient is the sum of every gradient so far: .grad is never reset. Set each "
    "parameter's .grad to None before backward(), or take fresh gradients with torch.autograd.grad.",
    accumulate=True,
)
CLASSES_MIXED = (
    "the logits were permuted to (batch, classes, positions) before the reshape to (-1, classes), so "
    "each row mixes classes and positions: softmax_cross_entropy takes logits.reshape(-1, classes), "
    "rows of classes, against targets.reshape(-1) in the same (batch, position) order."
)

CATALOGUE: dict[str, tuple[Callable[..., Iterator[float]], list[Known]]] = {
    "lstm_gru.train_recall": (
        protocols.recall_losses,
        [
            _known(
                "readout from h_1, not h_T",
                "your losses are those of a readout of the first state: read the logits out of the last "
                "state, h_T @ W_y.T + b_y.",
                readout="first",
            ),
            _known(
                "readout pools the states instead of taking the last",
                "your losses are those of a readout of the mean of the states over time: the answer is read "
                "out of the last state alone, h_T @ W_y.T + b_y (recall_logits returns that).",
                readout="mean",
            ),
            _known(
                "target is the last token, not the first",
                "your losses are those of a model that predicts the last token, which it has just read: the "
                "target is tokens[:, 0], the token to remember.",
                target=-1,
            ),
            _known(
                "no gradient through time",
                "your losses are those of a GRU whose state is detached at every step: the first token's "
                "gradient never reaches the weights. Keep the state in the graph through all lag + 1 steps "
                "(no .detach() of h inside the sequence).",
                detach=True,
            ),
            _known(
                "probabilities given to the loss as logits (a double softmax)",
                "your losses are softmax_cross_entropy of softmax(logits): the model's output went through "
                "a softmax before the loss, which takes logits and applies its own. Give it the logits, "
                "h_T @ W_y.T + b_y, as recall_logits returns them.",
                probabilities=True,
            ),
            AFTER,
            ACCUMULATE,
        ],
    ),
    "transformer.train_reverser": (
        protocols.reverser_losses,
        [
            _known(
                "causal mask missing in the decoder",
                "your losses are those of a decoder that sees the next target in its input: mask the "
                "decoder's self-attention (causal=True), or greedy decoding, which has no future, fails.",
                causal=False,
            ),
            _known(
                "no teacher-forcing shift",
                "your losses are those of a decoder fed the targets themselves: feed them shifted right, "
                "after the start token (tgt_in = [start, tgt[:, :-1]]), and predict tgt.",
                shift=False,
            ),
            _known(
                "no positional encoding",
                "your losses are those of a model without positions, which cannot tell which token comes "
                "first: add sinusoidal_encoding to the embeddings (embed_tokens(tokens, table, pe)).",
                positions=False,
            ),
            _known(
                "the decoder's two inputs swapped",
                "your losses are those of decoder_block(memory, y, ...): its first input is the decoder's own "
                "embedded targets, its second the encoder's output, decoder_block(y, memory, ...).",
                swap=True,
            ),
            _known("logits permuted before the reshape", CLASSES_MIXED, classes_mixed=True),
            AFTER,
            ACCUMULATE,
        ],
    ),
    "selective_scan.train_selective_copy": (
        protocols.copy_losses,
        [
            _known(
                "state matrix with the wrong sign",
                "your losses are those of A = exp(A_log): A = -exp(A_log) keeps every eigenvalue negative, "
                "so the state decays; with the sign lost it grows at every step.",
                sign=True,
            ),
            _known(
                "readout at the wrong positions",
                "your losses are those of a readout of the first positions: the outputs are read at the "
                "markers, the last COPY_COUNT positions (y[:, -COPY_COUNT:]).",
                first=True,
            ),
            _known(
                "time-invariant model trained with selective=True",
                "your losses are those of the time-invariant model: with selective=True delta, B and C are "
                "u @ W.T + b at every position; only selective=False uses the constants.",
                invariant=True,
            ),
            _known("logits permuted before the reshape", CLASSES_MIXED, classes_mixed=True),
            AFTER,
            ACCUMULATE,
        ],
    ),
    "rnn.train_char_rnn": (
        protocols.char_losses,
        [
            _known(
                "hidden state not carried across windows",
                "each window starts from the previous step's h_last (the stream goes on); only w == 0 "
                "starts from zeros.",
                carry=False,
            ),
            _known(
                "reset missing at w == 0",
                "when the window index wraps to 0 the streams start again: reset h to zeros there.",
                reset=False,
            ),
            _known(
                "clipping after the update (or not at all)",
                "clip the gradients first, then give the clipped ones to adam: clipping after the step changes nothing.",
                clipped=False,
            ),
            _known(
                "each gradient clipped on its own",
                "clip_grad_norm takes the list of all five gradients: one global norm, one common factor.",
                global_clip=False,
            ),
            _known(
                "Adam state not kept between steps",
                "keep each parameter's Adam state (m, v, step) from one step to the next; a fresh {} every "
                "step makes every update a first, bias-corrected step of size ~lr.",
                keep_adam=False,
            ),
            _known(
                "loss not divided by seq_len",
                "losses[s] = loss / seq_len: truncated_bptt sums over the window's steps; the lab reports "
                "nats per character.",
                per_char=False,
            ),
            _known(
                "state carried after the update instead of before",
                "your next window starts from the state of this window run again with the updated "
                "parameters: carry h_last as truncated_bptt returns it, computed before the update.",
                carried_after=True,
            ),
            _known(
                "streams cut the wrong way",
                "your streams take every batch_size-th token (tokens.reshape(L, batch_size).T): stream b is "
                "the contiguous slice tokens[b * L:(b + 1) * L], tokens[:batch_size * L].reshape(batch_size, L).",
                streams_across=True,
            ),
            AFTER,
        ],
    ),
}

# The steps a replay is held against past the student's first departure from the protocol.
# Eight steps see the first loss (the model and the loss), the first updates (the optimizer, what
# is recorded) and what carries over (gradients that accumulate move losses[2] by 1.6e-4 at
# least, and further at every step after): the candidates part there, and a replay costs those
# steps at most (one that leaves the student's losses stops where it does).
HORIZON = 8
# The departure is looked for in the first SEARCH steps: a slip of the character lab shows when
# the windows wrap (step 25 at the grader's sizes), and a task lab's slips at once; a loop that
# follows the protocol further is named nothing (its held-out result speaks for itself).
SEARCH = 64
# A float32 loop in any style against the float64 replay differs by float32 rounding and by
# Adam's first step on elements whose gradient is rounding noise (seqlab/labs/replay.py). Over
# eight steps the reference and the alternative correct loops of tests/mutants/labs_tasks.py stay
# within 2e-7 of it, while any two catalogue entries of a lab differ by 1e-2 or more somewhere in
# the eight (both measured on the bank's seeds, tests/labs/test_differential.py): 5e-4 takes
# the first with room and never joins two entries.
FLOAT32_TOL = (5e-4, 1e-6)  # rtol, atol
# A float64 loop (the character lab's) differs from the replay by reassociation, ~1e-13: the
# trajectory test's own tolerance (seqlab.labs.session.TRAJECTORY_TOL).
FLOAT64_TOL = (1e-6, 1e-8)


@dataclass(frozen=True)
class Candidate:
    names: tuple[str, ...]  # () for the protocol itself
    explain: str
    losses: Callable[[int], Iterable[float]]  # the replay's losses (at least the first ``steps``)


def candidates(function: str, child_inputs: dict) -> list[Candidate]:
    """The protocol, each catalogue entry of the lab, and each pair whose switches differ."""
    loop, known = CATALOGUE[function]

    def run(*entries: Known) -> Callable[[int], Iterator[float]]:
        switches = {k: v for entry in entries for k, v in entry.switches}
        return lambda steps: loop(child_inputs, **switches)

    found = [Candidate((), "", run())]
    found += [Candidate((k.name,), k.explain, run(k)) for k in known]
    for a, b in itertools.combinations(known, 2):
        if not {k for k, _ in a.switches} & {k for k, _ in b.switches}:
            found.append(Candidate((a.name, b.name), f"{a.explain} And {b.explain}", run(a, b)))
    return found


def _departure(losses: Iterable[float], got: torch.Tensor, tol: tuple[float, float]) -> int | None:
    """The first step at which the replay's losses leave ``got`` (None: they follow it to its end)."""
    rtol, atol = tol
    step = 0
    try:
        for want, have in zip(losses, got.tolist()):
            if not (math.isfinite(want) and abs(have - want) <= atol + rtol * abs(want)):
                return step
            step += 1
    except Exception:  # a slip's replay that cannot run on these inputs leaves at once
        return step
    return None if step == got.numel() else step


def matching(
    function: str, child_inputs: dict, losses: torch.Tensor, horizon: int = HORIZON, extra: Iterable[Candidate] = ()
) -> list[Candidate]:
    """The candidates whose replay follows the student's losses from the start to ``horizon``
    steps past their first departure from the protocol (only the protocol, where there is none
    in the first SEARCH steps)."""
    if function not in CATALOGUE or not isinstance(losses, torch.Tensor) or not losses.numel():
        return []
    got = losses.detach().to(torch.float64).reshape(-1)
    dtype = next(iter(protocols._flat(child_inputs["params"]).values())).dtype
    tol = FLOAT64_TOL if dtype == torch.float64 else FLOAT32_TOL
    protocol, *others = [*candidates(function, child_inputs), *extra]
    with torch.no_grad():
        left = _departure(protocol.losses(SEARCH), got[:SEARCH], tol)
        if left is None:
            return [protocol]
        got = got[: left + horizon]
        if not bool(torch.isfinite(got).all()):
            return []
        return [c for c in others if _departure(c.losses(got.numel()), got, tol) is None]


def diagnosis(
    function: str, child_inputs: dict, losses: torch.Tensor, horizon: int = HORIZON, extra: Iterable[Candidate] = ()
) -> str:
    """The slips every candidate that follows the student's losses has in common, as
    ``name: explain``, or "": when the protocol itself follows them, when none does, or when the
    ones that do share no slip. (A readout of the first state has no gradient through time to
    lose: with it a detached state changes nothing, and both the readout alone and the pair
    follow. What every fitting explanation holds is certain; what only some hold is not.)"""
    extra = list(extra)
    found = matching(function, child_inputs, losses, horizon, extra)
    if not found or any(not c.names for c in found):
        return ""
    common = [n for n in found[0].names if all(n in c.names for c in found)]
    if not common:
        return ""
    words = {c.names: c.explain for c in [*candidates(function, child_inputs), *extra] if c.names}
    return f"{' and '.join(common)}: {' And '.join(words[(n,)] for n in common)}"


def generator_ignored(child_inputs: dict, probe: Callable[..., object] | None, steps: int) -> str:
    """How a run shows its batches are not the generator's it was sent, or "": the same
    generator state gave two different runs of the student's function, or two different states
    the same run. A loop that draws every batch from the generator it is given is a function of
    that state (deterministic on the CPU), and two states draw two different batches."""
    gen = child_inputs.get("generator")
    if probe is None or not isinstance(gen, torch.Generator):
        return ""

    def losses(state: torch.Tensor) -> torch.Tensor | None:
        replay = torch.Generator()
        replay.set_state(state)
        out = probe(steps=steps, generator=replay)
        got = out[1] if isinstance(out, tuple) and len(out) == 2 else None
        if not isinstance(got, torch.Tensor) or got.numel() != steps:
            return None
        return got.detach().to(torch.float64).reshape(-1)

    state = gen.get_state()
    first, again = losses(state), losses(state)
    if first is None or again is None:
        return ""
    if not torch.equal(first, again):
        return "the same generator state gave two different runs of your function"
    gen = torch.Generator()
    gen.set_state(state)  # another state, drawn from the sent one: reproducible
    moved = losses(torch.Generator().manual_seed(int(torch.randint(1 << 62, (1,), generator=gen))).get_state())
    if moved is not None and torch.equal(first, moved):
        return "two different generator states gave the same run of your function"
    return ""
