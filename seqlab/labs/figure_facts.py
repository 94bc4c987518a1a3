"""What each lab's figures say, in one table keyed by the lab's function: the training loss's
unit, what its held-out data is, the axis its held-out results are drawn on, which of its
training steps the grader checks against the reference, and the scale that shows its curve.

These are facts of the task and of its grader, written here once for ``seqlab.labs.figures``
(the grader's numbers, the bounds and the first steps' count, are read from where they live:
the run's recorded bounds, ``seqlab.labs.replay.FIRST_STEPS``). Three of the four labs are not
text, so no lab borrows the character lab's words: ``tests/reports/test_lab_figures.py`` checks
that every lab has its row and that ``checked`` agrees with what its grader runs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FigureFacts:
    loss_unit: str  # one unit of losses[s], as the lab's docstring defines the loss
    heldout: str  # the held-out data, in words (what the metrics are measured on)
    metric_axis: str  # the axis of the held-out figure, with its unit
    # which losses the grader compares with the reference's on the same inputs: "every" step
    # (the character lab's trajectory test; the task labs' protocol test, which compares every
    # returned loss with the float64 replay) or only the "first" steps (FIRST_STEPS)
    checked: str
    # a log scale where the loss falls by two orders of magnitude or more over the training
    # (the reference reaches ~0.004 on recall and ~0.01 on reversal from ~2.7): on a linear axis
    # the second half of the curve, where a student's and the reference's part, is a flat line
    log_loss: bool = False


FACTS: dict[str, FigureFacts] = {
    "rnn.train_char_rnn": FigureFacts(
        loss_unit="nats per character",
        heldout="held-out text of the course's grammar, drawn for this grading and never sent to your code",
        metric_axis="held-out cross-entropy (nats per character), lower is better",
        checked="every",
    ),
    "lstm_gru.train_recall": FigureFacts(
        loss_unit="nats per recalled token",
        heldout="fresh sequences at this grading's lag, drawn from a seed your code never saw",
        metric_axis="share of the fresh sequences recalled (1 = all), higher is better",
        checked="every",
        log_loss=True,
    ),
    "transformer.train_reverser": FigureFacts(
        loss_unit="nats per target token",
        heldout="fresh source sequences, decoded greedily from your trained weights, never sent to your code",
        metric_axis="share reversed right (1 = all), higher is better",
        checked="every",
        log_loss=True,
    ),
    "selective_scan.train_selective_copy": FigureFacts(
        loss_unit="nats per copied token",
        heldout="fresh sequences with their data tokens placed afresh, never sent to your code",
        metric_axis="share of the data tokens copied right (1 = all), higher is better",
        checked="every",
    ),
}


def facts_of(function: str) -> FigureFacts:
    return FACTS[function]
