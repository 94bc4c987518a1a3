"""Naming the mistake behind a lab that fell short, from what the trusted parent can observe.

A lab below its bound is examined once more, in the parent, to say why. The evidence is what
the parent has or draws itself, never anything the student's process reports about itself
beyond its return value:

* the returned parameters against the initial ones the parent sent (which moved, how far);
* probes: a few steps of the student's own function on inputs the parent chooses (``lr = 0``),
  run in the same sandbox, only for a failed lab (an honest pass pays nothing);
* the trained model on the held-out data, under the reference forward and under known-wrong
  variants of it (the task module's ``SLIPS``): a model trained with the wrong target or
  without the causal mask has, under that variant, the held-out loss its own reported losses
  end at, and under the reference forward a much larger one (``fits``).

A slip is named only on evidence a correct loop cannot produce: an exact equality (a tensor
that never changed, a step taken at ``lr = 0``), a bound Adam's steps obey, or a behaviour the
reference's own training never shows (tests/labs/test_lab_slips.py: the reference and an
alternative correct loop, on five seeds, are named nothing). A wrong name is worse than none,
so when nothing matches, nothing is named. And a lab whose used functions failed their own
tests names those functions instead (``LabSession``): a broken ``adam`` can look like any slip
of the loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import torch

# Adam moves an element by lr * m_hat / (sqrt(v_hat) + eps) per step, and |m_hat| / sqrt(v_hat)
# stays below (1 - beta1) / sqrt(1 - beta2) = 3.2 at the default betas (Kingma and Ba, 2015,
# §2.1, bias corrections included): a loop that takes every step from the initial weights ends
# within 3.2 * lr of them. A correct loop of these labs' lengths moves some weight by more than
# 20 * lr (tests/labs/test_lab_slips.py measures it), so 4 * lr separates the two.
FROM_INITIAL_BOUND = 4.0
PROBE_STEPS = 2


@dataclass(frozen=True)
class Slip:
    name: str  # the mistake, as the feedback names it (the class report counts the name)
    explain: str | Callable[[Evidence], str]  # what to do instead (from the evidence: which tensors)
    seen: Callable[[Evidence], bool]
    # Exact evidence (an equality, a probe) is weighed before the general slips; a behaviour
    # (a loss at chance, a variant forward that fits) after them, once they are ruled out.
    exact: bool = False

    def hint(self, evidence: Evidence) -> str:
        explain = self.explain(evidence) if callable(self.explain) else self.explain
        return f"{self.name}: {explain}"  # Mistake.hint's form


def _leaves(tree: Any, path: str = "") -> Iterator[tuple[str, torch.Tensor]]:
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _leaves(value, f"{path}/{key}" if path else str(key))
    elif isinstance(tree, torch.Tensor):
        yield path, tree


class Evidence:
    """One failed run as the parent sees it; every piece computed on first use. ``params`` and
    ``losses`` are what came back (None where unusable: a NaN, a wrong shape).

    ``probe(**overrides)`` runs the student's function once more on the task's inputs with
    ``overrides`` and gives its ``(params, losses)``, or None when that call failed."""

    def __init__(
        self,
        child_inputs: dict,
        heldout: dict,
        params: Any,
        losses: Any = None,
        probe: Callable[..., tuple[Any, Any] | None] | None = None,
        function: str = "",
    ):
        self.child_inputs, self.heldout, self.function = child_inputs, heldout, function
        self.params = params if isinstance(params, dict) else None
        self.losses = losses.detach().to(torch.float64).reshape(-1) if isinstance(losses, torch.Tensor) else None
        self._probe = probe
        self._probes: dict[tuple, tuple[Any, Any] | None] = {}

    @cached_property
    def initial(self) -> dict[str, torch.Tensor]:
        return dict(_leaves(self.child_inputs["params"]))

    @cached_property
    def returned(self) -> dict[str, torch.Tensor]:
        return {path: t.detach() for path, t in _leaves(self.params or {})}

    @cached_property
    def usable(self) -> bool:
        """Every sent tensor came back with its shape and dtype, finite."""
        r = self.returned
        return all(
            p in r and r[p].shape == t.shape and r[p].dtype == t.dtype and bool(torch.isfinite(r[p]).all())
            for p, t in self.initial.items()
        )

    @cached_property
    def unchanged(self) -> set[str]:
        """The tensors that came back exactly as they were sent."""
        if not self.usable:
            return set()
        return {p for p, t in self.initial.items() if torch.equal(self.returned[p], t)}

    @cached_property
    def largest_move(self) -> float:
        """The largest change of any weight, in units of the learning rate."""
        lr = float(self.child_inputs["lr"])
        if not self.usable or lr <= 0:
            return math.inf
        moves = [float((self.returned[p] - t).abs().max()) for p, t in self.initial.items() if t.numel()]
        return max(moves, default=0.0) / lr

    @cached_property
    def final_loss(self) -> float:
        """The mean reported loss over the last tenth of the steps (the trained model's, nearly)."""
        if self.losses is None or not self.losses.numel():
            return math.nan
        return float(self.losses[-max(1, self.losses.numel() // 10) :].mean())

    @cached_property
    def replayed(self) -> str:
        """The slip the differential replay names (seqlab.labs.differential), or ""."""
        if not self.function or self.losses is None:
            return ""
        from .differential import diagnosis

        return diagnosis(self.function, self.child_inputs, self.losses)

    @cached_property
    def generator_ignored(self) -> str:
        """How the student's batches are seen not to be the generator's, or ""
        (seqlab.labs.differential.generator_ignored)."""
        from .differential import generator_ignored

        return generator_ignored(self.child_inputs, self._probe, PROBE_STEPS)

    def probe(self, **overrides: Any) -> tuple[Any, Any] | None:
        key = tuple(sorted((k, repr(v)) for k, v in overrides.items()))
        if key not in self._probes:
            self._probes[key] = None if self._probe is None else self._probe(**overrides)
        return self._probes[key]

    def reads(self, paths) -> bool | None:
        """Whether the student's loss reads the initial tensors ``paths``: its first loss (before
        any update), probed on the same batch with the parameters as sent and with those tensors
        moved. None when it cannot be told (no generator to replay the batch, a failed probe).
        It tells a tensor the model never uses from one it uses but never trains."""
        key = ("reads", *sorted(paths))
        if key in self._probes:
            return self._probes[key]  # type: ignore[return-value]
        gen = self.child_inputs.get("generator")
        found = None
        if self._probe is not None and isinstance(gen, torch.Generator):
            state, moved = gen.get_state(), set(paths)
            losses = []
            for params in (self.child_inputs["params"], _moved(self.child_inputs["params"], moved)):
                replay = torch.Generator()
                replay.set_state(state)
                out = self._probe(steps=1, params=params, generator=replay)
                loss = out[1] if out is not None else None
                if not isinstance(loss, torch.Tensor) or loss.numel() < 1:
                    break
                losses.append(float(loss.detach().reshape(-1)[0]))
            if len(losses) == 2 and all(math.isfinite(v) for v in losses):
                found = abs(losses[1] - losses[0]) > 1e-6 * abs(losses[0])
        self._probes[key] = found  # type: ignore[assignment]
        return found

    @cached_property
    def moves_at_lr0(self) -> bool:
        """Whether a few steps at ``lr = 0`` changed a weight to another finite value."""
        out = self.probe(steps=PROBE_STEPS, lr=0.0)
        if out is None:
            return False
        back = dict(_leaves(out[0]))
        return any(
            p in back
            and back[p].shape == t.shape
            and bool(torch.isfinite(back[p]).all())
            and not torch.equal(back[p].detach(), t)
            for p, t in self.initial.items()
        )


def _moved(tree: Any, paths: set[str], prefix: str = "") -> Any:
    """``tree`` with the tensors at ``paths`` halved and shifted (a zero bias moves too)."""
    out = {}
    for key, value in tree.items():
        path = f"{prefix}/{key}" if prefix else str(key)
        if isinstance(value, dict):
            out[key] = _moved(value, paths, path)
        else:
            out[key] = value * 0.5 + 0.05 if path in paths else value
    return out


def fits(evidence: Evidence, variant_ce: float, reference_ce: float) -> bool:
    """Whether the student's own reported losses are those of a known-wrong variant of the model:
    the trained model's held-out loss under the variant forward matches the last reported
    losses (within 10 % and 0.02 nats) while under the reference forward it is 25 % and 0.1 nats
    larger. An honest run's last losses are within 20 % of its held-out loss under the reference
    forward (the reference and the alternatives, measured), so no variant fits an honest run."""
    final = evidence.final_loss
    if not all(math.isfinite(v) for v in (final, variant_ce, reference_ce)):
        return False
    return abs(final - variant_ce) <= 0.1 * variant_ce + 0.02 and reference_ce >= 1.25 * variant_ce + 0.1


def _names(paths) -> str:
    return ", ".join(sorted(p.replace("/", ".") for p in paths))


NOTHING_CHANGED = Slip(
    "the parameters never changed",
    "every returned tensor is exactly the one sent: keep what adam returns "
    "(params[name], state[name] = adam(params[name], grad, state[name], lr=lr)) and return those.",
    lambda e: e.usable and e.unchanged == set(e.initial),
    exact=True,
)


def _never_changed(e: Evidence) -> str:
    reads = e.reads(e.unchanged)
    why = {
        True: "your loss reads them (moving them moves your first loss), so they were left out of "
        "the update or the returned dict holds the tensors as sent",
        False: "your loss never reads them (moving them leaves your first loss as it is), so their "
        "gradient is zero: the model must use them",
        None: "either they took no adam step (or the returned dict holds the tensors as sent), or "
        "the model never uses them and their gradient is zero",
    }[reads]
    return (
        f"{_names(e.unchanged)} came back exactly as sent: {why}. Every tensor of params takes an "
        "adam step with its own gradient."
    )


SOME_NEVER_CHANGED = Slip("some parameters never changed", _never_changed, lambda e: bool(e.unchanged), exact=True)


def _nested_frozen(e: Evidence) -> bool:
    nested = {p for p in e.initial if "/" in p}
    top = set(e.initial) - nested
    return bool(nested) and nested <= e.unchanged and bool(top - e.unchanged) and e.reads(nested) is True


NESTED_NEVER_TRAINED = Slip(
    "the nested parameters never trained",
    lambda e: (
        f"{_names(set(e.initial) - e.unchanged)} changed, and every tensor of the nested dicts "
        f"({', '.join(sorted({p.split('/')[0] for p in e.initial if '/' in p}))}) came back exactly as sent, "
        "though your loss reads them (moving them moves your first loss): the nested dicts were not trained or not returned. Every tensor "
        "of params, at every depth, takes an adam step, and params_out holds the trained ones."
    ),
    _nested_frozen,
    exact=True,
)
LR_IGNORED = Slip(
    "learning rate ignored",
    f"{PROBE_STEPS} steps with lr=0 still changed the weights: pass the lab's lr to adam "
    "(adam(w, dw, state, lr=lr)); its default is not the lab's.",
    lambda e: e.usable and e.moves_at_lr0,
    exact=True,
)
FROM_INITIAL = Slip(
    "each update taken from the initial weights",
    "no weight moved more than one Adam step from where it started: each step must update the "
    "weights the previous step produced, not the ones the function was given, for all steps.",
    lambda e: int(e.child_inputs["steps"]) >= 20 and e.largest_move <= FROM_INITIAL_BOUND,
    exact=True,
)

GENERATOR_IGNORED = Slip(
    "generator not passed on",
    lambda e: (
        f"{e.generator_ignored}: your batches are not drawn from the generator you are given. Pass it "
        "on to every draw (the task's batch function takes generator=generator); a draw without it uses "
        "torch's global generator, which the protocol never touches."
    ),
    lambda e: bool(e.generator_ignored),
    exact=True,
)

# A crash of the training call that says which slip it was: the words, and the student's frame
# they must come from (the call's own message and place are shown as well).
ADAM_SHARED = Slip(
    "Adam state shared between parameters",
    "each parameter needs its own state dict; m and v have the shape of the parameter they belong to.",
    lambda e: False,
)


UNUSED_PARAMETER = Slip(
    "the loss never uses a parameter",
    "autograd found no path from the loss to one of the tensors you asked it for (its index is in "
    "the message): the model never reads that parameter. Wire every block in: the decoder's "
    "cross-attention reads the encoder's output; with selective=True, delta, B and C come from the input.",
    lambda e: False,
)


def crash_hint(message: str, through: tuple[str, ...] = ()) -> str:
    """The slip a crash of the training call shows: a crash inside the student's adam on
    mismatched sizes (one state for several shapes), autograd refusing a parameter the loss
    does not reach (its own words, whatever the loop), or autograd finding a saved tensor
    overwritten: one of the functions the lab backpropagates through (``through``) writes in
    place where its inputs require grad, and each has a test of that property of its own."""
    if "must match the size" in message and ", in adam\n" in message + "\n":
        return ADAM_SHARED.hint(Evidence({}, {}, None))
    if "appears to not have been used in the graph" in message:
        return UNUSED_PARAMETER.hint(Evidence({}, {}, None))
    if "modified by an inplace operation" in message and through:
        names = ", ".join(through)
        return (
            "an in-place write under autograd: the lab backpropagates through your "
            f"{names}, and one of them writes into a tensor autograd saved for the backward pass. Each "
            "must support autograd; its public test test_<function>_supports_autograd names the one "
            "(where an input requires grad, build new tensors instead of writing into them)"
        )
    return ""


def name_slip(task_slips, evidence: Evidence, behaviour: bool = True) -> str:
    """The hint of the first slip seen, or "": the task's exact slips, then the general ones,
    then the differential replay's (seqlab.labs.differential), a generator not passed on, and
    (with ``behaviour``) the task's behavioural ones: those of the trained model, which the
    first-steps test leaves out where the first loss is right (a model slip shows there)."""
    exact = [NOTHING_CHANGED, NESTED_NEVER_TRAINED, *(s for s in task_slips if s.exact), SOME_NEVER_CHANGED]
    exact += [LR_IGNORED, FROM_INITIAL]
    later = [GENERATOR_IGNORED, *(s for s in task_slips if not s.exact and behaviour)]
    for slip in [*exact, None, *later]:
        try:
            if slip is None:  # the replay: its name and words are the matching catalogue entry's
                if evidence.replayed:
                    return evidence.replayed
            elif slip.seen(evidence):
                return slip.hint(evidence)
        except Exception:  # evidence that cannot be computed on this return names nothing
            continue
    return ""
