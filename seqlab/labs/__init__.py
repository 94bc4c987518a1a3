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
import os
from dataclasses import dataclass, field
from types import ModuleType

from .budget import CPU_BUDGET_S, REFERENCE_CPU_S

# The grader's clock: a lab trains on one standard core (seqlab.labs.clock: a slower core
# stretches it) in at most CPU_BUDGET_S of CPU time, 15 s: 5.6x (selective copy) to 12.5x
# (characters) the reference's own time (REFERENCE_CPU_S), so that a loop-style student fits
# with room (1.4-3.7x the reference; the loopiest honest style measured, the cross-entropy row by
# row, 2.1-7.3x: benchmarks/bench_lab_budgets.py) while a loop over hidden units inside every
# step does not. The figures, the reasons and the cost per submission are in
# seqlab/labs/budget.py, the one place the budgets live: it ships with the student release,
# whose lab tests check the same budget.

# The wall limit, as a multiple of the budget: see Lab.wall_limit_s.
WALL_FACTOR = 4


@dataclass(frozen=True)
class Lab:
    function: str  # the contract function the child runs: (**child_inputs) -> (params_out, losses)
    task: str  # the task module (draw_task, evaluate, THRESHOLDS[, reference_run])
    uses: tuple[str, ...] = ()  # earlier contract functions it runs, the likely culprits
    notes: str = ""  # the notes' sections it traces to
    cpu_budget_s: float = CPU_BUDGET_S
    figures: tuple[str, ...] = ("losses",)  # what the report draws from the returned numbers
    metric_names: dict[str, str] = field(default_factory=dict)  # metric -> words for reports
    # The training call records torch functions, not aten kernels: the kernel recorder (a
    # TorchDispatchMode, every forward and backward kernel through Python) made the autograd labs
    # 3x slower than the reference, over the budget. The function-level recorder, the autograd
    # detector and the static scan of the source still see every operation a lab forbids.
    kernels: bool = False
    # The functions the lab backpropagates through with autograd (the character lab's gradients
    # are by hand): each must support autograd, which its own tests check, public
    # (test_<function>_supports_autograd) and hidden where the runner allows, and a crash of
    # autograd in the lab names them (seqlab.labs.slips.crash_hint).
    through: tuple[str, ...] = ()

    def module(self) -> ModuleType:
        return importlib.import_module(self.task)

    def thresholds(self, recorded: dict[str, float] | None = None) -> dict[str, float]:
        """The bounds a grading applies (the task's ``THRESHOLDS``), or ``recorded``: the ones a
        result stored when it was graded. A report drawn from results reads those, and so needs
        neither the task module nor torch."""
        return dict(recorded) if recorded else dict(self.module().THRESHOLDS)

    @property
    def budget_s(self) -> float:
        """The budget on this machine: ``cpu_budget_s`` is for the standard core, and a slower
        core stretches it (seqlab.labs.clock)."""
        from .clock import slowdown

        return self.cpu_budget_s * slowdown()

    @property
    def wall_limit_s(self) -> float:
        """The call's wall-clock limit, after which the child is stopped and the lab scores what
        it returned: nothing. The budget itself is CPU time, checked when the call returns; the
        wall limit only stops a hang, so it is WALL_FACTOR (4) times the budget: a loaded machine
        (load 7 on 2 cores, measured while this was written) gives a process a third of a core,
        so a run that uses its whole budget still ends in 3x. It was 8x when the budget was 5 s;
        at 15 s, 8x would let one hanging submission hold a worker 3 minutes per lab (12 for the
        four) on a 1.5x-slower core, where 4x holds it 90 s per lab."""
        return WALL_FACTOR * self.budget_s

    def grading_note(self) -> str:
        """What the lab's docstring says of its grading sizes and budget (the test that holds
        it there: tests/labs/test_lab_budgets.py), from the task module and the budget."""
        module, name = self.function.split(".")
        return (
            f"Trained in grading with {self.module().GRADING_TEXT}, within {self.cpu_budget_s:g} s of CPU on "
            f"one standard core (stretched on a slower one; the reference takes about {self.reference_cpu_s:g} s). "
            f"The public test test_{name}_trains_within_its_cpu_budget (tests/test_{module}.py) trains yours "
            "at these sizes and counts its CPU time the same way."
        )

    @property
    def reference_cpu_s(self) -> float:
        """The reference's own training CPU in the grader, on the standard core."""
        return REFERENCE_CPU_S[self.function]


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
    "lstm_gru.train_recall": Lab(
        "lstm_gru.train_recall",
        "seqlab.labs.recall",
        uses=("lstm_gru.gru_forward", "lstm_gru.gru_cell", "rnn.softmax_cross_entropy", "optimizers.adam"),
        notes="L5 §5-8",
        through=("lstm_gru.gru_forward", "lstm_gru.gru_cell", "rnn.softmax_cross_entropy"),
        figures=("losses", "metrics"),
        metric_names={"accuracy": "held-out recall accuracy", "chance": "chance"},
    ),
    "transformer.train_reverser": Lab(
        "transformer.train_reverser",
        "seqlab.labs.reverser",
        uses=("transformer.encoder_block", "transformer.decoder_block", "attention.multi_head_attention")
        + ("attention.scaled_dot_product_attention", "transformer.layer_norm", "transformer.feed_forward")
        + ("attention.causal_mask", "positional.embed_tokens", "positional.sinusoidal_encoding", "optimizers.adam"),
        notes="W8 §4, §8-15",
        through=("transformer.encoder_block", "transformer.decoder_block", "attention.multi_head_attention")
        + ("attention.scaled_dot_product_attention", "transformer.layer_norm", "transformer.feed_forward")
        + ("positional.embed_tokens", "rnn.softmax_cross_entropy"),
        figures=("losses", "metrics"),
        metric_names={"exact_match": "held-out exact-match reversal", "token_accuracy": "held-out per-token reversal"},
    ),
    "selective_scan.train_selective_copy": Lab(
        "selective_scan.train_selective_copy",
        "seqlab.labs.selective_copy",
        uses=("selective_scan.selective_scan", "selective_scan.discretize", "selective_scan.linear_scan")
        + ("rnn.softmax_cross_entropy", "optimizers.adam"),
        notes="L5 §18",
        through=("selective_scan.linear_scan", "selective_scan.selective_scan", "selective_scan.discretize")
        + ("rnn.softmax_cross_entropy",),
        figures=("losses", "metrics"),
        metric_names={"accuracy": "held-out copy accuracy", "chance": "chance"},
    ),
}


def labs_by_default() -> bool:
    """Whether a grading includes the labs when its caller does not say: yes, unless SEQLAB_LABS=0."""
    return os.environ.get("SEQLAB_LABS", "1") != "0"


def lab_of(function: str) -> Lab | None:
    return LABS.get(function)
