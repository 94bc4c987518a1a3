"""The differential replay's catalogue entries as data, and the slips every task lab's loop can
make (seqlab.labs.catalogue puts them together with each lab's own).

A ``Known`` is a slip: the name the feedback gives, the switches of the lab's protocol
(seqlab.labs.protocols) that make it, and what to do instead.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    name: str  # as the feedback names it (the class report counts the name)
    switches: tuple[tuple[str, object], ...]
    explain: str


def entry(name: str, explain: str, **switches: object) -> Known:
    return Known(name, tuple(sorted(switches.items())), explain)


AFTER = entry(
    "losses recorded after the update",
    "each of your losses is the loss of the updated parameters on the step's batch: losses[s] is the "
    "loss before the update (the one the gradient was taken of), recorded before adam changes anything.",
    after=True,
)
ACCUMULATE = entry(
    "gradients accumulated across steps",
    "each step's gradient is the sum of every gradient so far: .grad is never reset. Set each "
    "parameter's .grad to None before backward(), or take fresh gradients with torch.autograd.grad.",
    accumulate=True,
)
FRESH_ADAM = entry(
    "Adam state not kept between steps",
    "keep each parameter's Adam state (m, v, step) from one step to the next; a fresh {} every step "
    "makes every update a first, bias-corrected step of size ~lr.",
    fresh_adam=True,
)
ASCENT = entry(
    "gradient ascent (the gradient's sign flipped)",
    "your losses are those of adam given minus the gradient: adam already steps against the gradient "
    "it is given (w - lr * m_hat / ...), so give it the gradient itself.",
    ascent=True,
)
ONE_BATCH = entry(
    "one batch reused at every step",
    "your losses are those of a loop that draws its batch once, before the loop: every step draws a "
    "fresh batch with the generator, inside the loop.",
    one_batch=True,
)
RUNNING_MEAN = entry(
    "losses recorded as a running mean",
    "each of your losses is the mean of the losses so far: losses[s] is step s's own loss, before its update.",
    running_mean=True,
)
LR_IGNORED_WORDS = (
    "your losses are those of adam stepped with a default learning rate, not the lr you are given: pass "
    "it on to every adam call, adam(w, dw, state, lr=lr) (adam's own default is 1e-3, the lab function's "
    "is in its signature; the grader also trains with another lr)."
)


def lr_ignored(*defaults: float) -> list[Known]:
    """The learning rate ignored: adam stepped with each of ``defaults`` (adam's own, the lab
    function's) whatever lr was given; one name, one explanation, a candidate per default."""
    return [entry("learning rate ignored", LR_IGNORED_WORDS, lr_used=lr) for lr in sorted(set(defaults))]


LOOP = [AFTER, ACCUMULATE, FRESH_ADAM, ASCENT, ONE_BATCH, RUNNING_MEAN]  # every task lab's loop
CLASSES_MIXED = (
    "the logits were permuted to (batch, classes, positions) before the reshape to (-1, classes), so "
    "each row mixes classes and positions: softmax_cross_entropy takes logits.reshape(-1, classes), "
    "rows of classes, against targets.reshape(-1) in the same (batch, position) order."
)
