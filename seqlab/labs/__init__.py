"""The labs: a topic's functions put together to train a small model, graded in the trusted parent.

A lab is declared once, here, as a ``Lab``: the contract function the student's process runs,
the task module that draws a task instance and evaluates what comes back, the earlier contract
functions it runs (named in its feedback when it fails), its CPU budget and what its notebook
section plots. Everything else reads the declaration: the graders' ``lab`` fixture
(``seqlab.labs.session``), the report's figures (``seqlab.labs.figures``), the benchmark.

A task module (``seqlab.labs.char_rnn`` and its siblings) has

* ``draw_task(seed) -> (child_inputs, heldout)``: the keyword arguments of the student's call
  (a task instance: a vocabulary permutation, symbols, lags; its own initial parameters) and
  what the parent keeps to evaluate with (held-out data drawn from another derived seed, never
  sent to the child);
* ``evaluate(params, child_inputs, heldout) -> metrics``: plain floats computed with the
  *reference* forward on the held-out data;
* ``THRESHOLDS``: ``{metric: bound}``, a metric passes when it is at least its bound (each
  bound's reason in the module);
* optionally ``reference_run(child_inputs) -> (params, losses)``, the reference's training on
  the same inputs, where the protocol is binding and the trajectory is compared step by step.

How a lab is charged: it runs the student's own functions (``uses``), as the notebook does, so a
bug in one of them can cost the lab too; the bounds are ones the reference reaches with room to
spare, and a failed lab names the used functions that failed their own tests in the same grading.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType

# The grader's clock: a lab trains on one core in at most this much CPU time. A class of 300 on
# two cores in 45 minutes leaves 18 s of CPU per submission; the exercises take ~5 s and four
# labs at ~2.5 s each take the rest, so 5 s is twice what a reference-speed solution needs.
CPU_BUDGET_S = 5.0


@dataclass(frozen=True)
class Lab:
    function: str  # the contract function the child runs: (**child_inputs) -> (params_out, losses)
    task: str  # the task module (draw_task, evaluate, THRESHOLDS[, reference_run])
    uses: tuple[str, ...] = ()  # earlier contract functions it runs, the likely culprits
    notes: str = ""  # the notes' sections it traces to
    cpu_budget_s: float = CPU_BUDGET_S
    figures: tuple[str, ...] = ("losses",)  # what the report draws from the returned numbers
    metric_names: dict[str, str] = field(default_factory=dict)  # metric -> words for reports

    def module(self) -> ModuleType:
        return importlib.import_module(self.task)

    @property
    def wall_limit_s(self) -> float:
        """The call's wall-clock limit, after which the child is stopped and the lab scores what
        it returned: nothing. The budget itself is CPU time, checked when the call returns; the
        wall limit only stops a hang, so it is eight times the budget: a loaded machine (load 7
        on 2 cores, measured while this was written) gives a process a third of a core."""
        return 8 * self.cpu_budget_s


LABS: dict[str, Lab] = {
    "rnn.train_char_rnn": Lab(
        "rnn.train_char_rnn",
        "seqlab.labs.char_rnn",
        uses=("rnn.truncated_bptt", "rnn.rnn_bptt", "rnn.rnn_forward", "rnn.rnn_cell", "rnn.softmax_cross_entropy")
        + ("optimizers.clip_grad_norm", "optimizers.adam"),
        notes="L5 §4, §6-8",
        figures=("losses", "heldout"),
        metric_names={
            "heldout_ce": "held-out cross-entropy (nats/char)",
            "reference_ce": "the reference's held-out cross-entropy",
            "unigram_ce": "a unigram model's held-out cross-entropy",
            "progress": "share of the way from the unigram model to the reference",
        },
    ),
}


def lab_of(function: str) -> Lab | None:
    return LABS.get(function)
