"""Naming a lab's slip by differential replay: the protocol run again with each known slip
switched on, and pairs of them, from the same initial parameters and generator state as the
student's run (seqlab.labs.protocols), each held against the student's reported losses.

A slip is named only when every replay that follows the student's losses over the first steps
(to the tolerance of a correct loop) holds it, and the protocol's own does not follow them: a
loop that learns with two known slips is named by the pair when only the pair follows, and two
candidates that share nothing name nothing. A loop with a slip nobody listed matches no replay
and is named nothing: a wrong name is worse than none (tests/labs/test_differential.py holds
every entry against its own loop, the other slips' loops and alternative correct loops).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch

from . import protocols
from .catalogue import CATALOGUE, Known

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
    first: tuple | None = None  # what its first loss depends on (None: not known, computed alone)


# Switches that leave the first loss as the protocol's: they act from the first update on (a
# running mean's first value is the first loss itself). Candidates that differ only in these
# share their first loss, computed once (tests/labs/test_differential.py holds it).
LATER = frozenset({"accumulate", "fresh_adam", "ascent", "one_batch", "running_mean", "carry", "reset", "clipped"})
LATER |= {"global_clip", "keep_adam", "carried_after", "lr_used", "clip_used", "windows_plus"}
# A reported loss scaled by a constant (divided by the batch size once more) leaves the training
# as it is: every loss is that constant times the protocol's. A correct loop's ratio is 1 within
# the tolerances above (5e-4 at most), and so is every catalogue slip's but at a step where it
# departs; 1e-3 calls a ratio constant, as seqlab.labs.replay.CONSTANT_RATIO does for the first
# steps, and a constant within 1e-3 of 1 is no constant (a one-token-short model starts there).
CONSTANT_RATIO = 1e-3
# Only where no first-steps check names the factor first: the task labs' replay.first_steps_hint
# says "loss summed, not averaged" with the count the factor is (one slip, one name).
SCALED_BY_REPLAY = frozenset({"rnn.train_char_rnn"})


def candidates(function: str, child_inputs: dict) -> list[Candidate]:
    """The protocol, each catalogue entry of the lab, and each pair whose switches differ."""
    loop, known = CATALOGUE[function]

    def run(names: tuple[str, ...], explain: str, *entries: Known) -> Candidate:
        switches = {k: v for entry in entries for k, v in entry.switches}
        first = tuple(sorted((k, v) for k, v in switches.items() if k not in LATER))
        return Candidate(names, explain, lambda steps: loop(child_inputs, **switches), first)

    found = [run((), "")]
    found += [run((k.name,), k.explain, k) for k in known]
    for a, b in itertools.combinations(known, 2):
        if not {k for k, _ in a.switches} & {k for k, _ in b.switches}:
            found.append(run((a.name, b.name), f"{a.explain} And {b.explain}", a, b))
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
        first: dict[tuple, bool] = {}  # whether a first loss follows, by what it depends on
        found = []
        for c in others:
            if c.first is not None and c.first not in first:
                first[c.first] = _departure(c.losses(1), got[:1], tol) is None
            if (c.first is None or first[c.first]) and _departure(c.losses(got.numel()), got, tol) is None:
                found.append(c)
        return found


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
    if not found:
        return scaled(function, child_inputs, losses, horizon)
    if any(not c.names for c in found):
        return ""
    common = [n for n in found[0].names if all(n in c.names for c in found)]
    if not common:
        return ""
    # one name may have several candidates (a slip's variants): the words of the one that matched
    words: dict[tuple[str, ...], str] = {}
    for c in [*found, *candidates(function, child_inputs), *extra]:
        words.setdefault(c.names, c.explain)
    return f"{' and '.join(common)}: {' And '.join(words[(n,)] for n in common)}"


def scaled(function: str, child_inputs: dict, losses: torch.Tensor, horizon: int = HORIZON) -> str:
    """ "loss scaled by a constant", where every reported loss is one constant (not 1) times the
    protocol's over the first ``horizon`` steps, or "": the loss recorded is not the one the
    protocol records, though the training may be right."""
    if function not in SCALED_BY_REPLAY or not isinstance(losses, torch.Tensor) or not losses.numel():
        return ""
    got = losses.detach().to(torch.float64).reshape(-1)[:horizon]
    with torch.no_grad():
        want = torch.tensor(list(itertools.islice(candidates(function, child_inputs)[0].losses(horizon), got.numel())))
    if want.shape != got.shape or not bool(torch.isfinite(got).all() and (want != 0).all()):
        return ""
    ratio = got / want.to(got.dtype)
    factor = float(ratio[0])
    constant = bool(((ratio - factor).abs() <= CONSTANT_RATIO * abs(factor)).all())
    if not (math.isfinite(factor) and abs(factor - 1) > CONSTANT_RATIO and constant):
        return ""
    return (
        f"loss scaled by a constant: losses[0:{got.numel()}] are all {factor:.4g} times the protocol's, and "
        "the training itself follows it: losses[s] is the loss the docstring names (the mean cross-entropy; "
        "the character lab's per character, loss / seq_len), recorded unscaled."
    )


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
    if not bool(torch.isfinite(first).all() and torch.isfinite(again).all()):
        return ""  # NaN is unequal to itself: two runs that diverge say nothing of the generator
    if not torch.equal(first, again):
        return "the same generator state gave two different runs of your function"
    gen = torch.Generator()
    gen.set_state(state)  # another state, drawn from the sent one: reproducible
    moved = losses(torch.Generator().manual_seed(int(torch.randint(1 << 62, (1,), generator=gen))).get_state())
    if moved is not None and torch.equal(first, moved):
        return "two different generator states gave the same run of your function"
    return ""
