"""The selective-copying lab (``selective_scan.train_selective_copy``): why Mamba selects.

A task instance is the initial weights, drawn per grading; every batch, the held-out one
included, places the data tokens afresh, so nothing about the positions can be memorised.
The parent scores 2 000 fresh sequences with the reference's ``copy_logits``.

Sizes: ``M = 8`` data symbols (chance 1/8), ``D = 16`` channels, ``N = 8`` states per channel,
4 data tokens among 16 positions, 320 Adam steps of 32 sequences at ``lr = 0.02``. ``A`` starts
as S4D-real's ``-(1, ..., N)`` in every channel and ``delta`` near ``softplus(-3) = 0.05``, so
the state starts by keeping what it holds. ``B`` and ``C`` start with random constant parts
(``b_B``, ``b_C``): at zero the time-invariant model would sit on a saddle (no input reaches
a state that nothing reads) and fail for a reason the lab is not about.
"""

from __future__ import annotations

import math
import time

import torch

from . import tasktools
from .slips import Evidence, Slip, fits
from .tasktools import generator, usable

NAME = "selective_copy"
M, D, N, BATCH, STEPS, LR = 8, 16, 8, 32, 320, 2e-2
DELTA_BIAS = -3.0
HELDOUT = 2000

# From the reference over 20 seeds (benchmarks/bench_labs_tasks.py): held-out copy accuracy
# 0.80 to 0.91 for the selective model (0.80 at worst over seeds 0-39; 400 steps gave 0.82 to
# 0.90 for a quarter more of the class's time); 0.44 to 0.46 for the time-invariant one trained the same
# way (chance 0.125: it learns where the k-th of four sorted positions usually is, not where it
# is), and at most 0.33 for the known-wrong loops of tests/mutants/labs_tasks.py. 0.6 sits
# between the two: the time-invariant model cannot reach it, every selective run clears it.
THRESHOLDS = {"accuracy": 0.6}
# What the held-out test ran on, in its failure message (each lab says its own).
HELDOUT_WORDS = f"{HELDOUT} fresh sequences, their data tokens placed afresh, from a seed your code never saw"

# The sizes the grader trains at, as the student's public budget test trains at them
# (public_tests/_labs.py, GRADING) and as the lab's docstring states them (Lab.grading_note):
# tests/labs/test_lab_budgets.py holds all three to these. The data tokens per sequence are the
# module's COPY_COUNT (4), checked there too.
GRADING_SIZES = {
    "symbols": M, "channels": D, "states": N, "copy_count": 4, "steps": STEPS, "batch_size": BATCH,
    "selective": True, "lr": LR,
}  # fmt: skip
GRADING_TEXT = (
    f"M={M} symbols, D={D} channels, N={N} states, {STEPS} steps of batch_size={BATCH} "
    f"sequences, selective=True, lr={LR:g}"
)


# The first steps' replay (LabSession.check_first_steps): the batch the protocol draws, and the
# counts that a loss summed where the protocol averages is off by.
BATCH_CALL = "tokens, targets = copy_batch(M, batch_size, generator)"


def loss_counts(child_inputs: dict) -> dict[str, int]:
    count = tasktools.reference().selective_scan.COPY_COUNT
    return tasktools.loss_counts(child_inputs["batch_size"], count, "outputs", "COPY_COUNT")


def initial_params(gen: torch.Generator, dtype=torch.float32, count: int | None = None) -> dict[str, torch.Tensor]:
    """``count``: the data tokens per sequence (the module's COPY_COUNT; the notebook passes its
    own, where the reference cannot be loaded)."""
    if count is None:
        count = tasktools.reference().selective_scan.COPY_COUNT

    def normal(*shape, scale=1.0):
        return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale).to(dtype)

    return {
        "embedding": normal(M + 1 + count, D),
        "W_delta": normal(D, D, scale=1 / math.sqrt(D)),
        "b_delta": torch.full((D,), DELTA_BIAS, dtype=dtype),
        "W_B": normal(N, D, scale=1 / math.sqrt(D)),
        "b_B": normal(N, scale=1 / math.sqrt(N)),
        "W_C": normal(N, D, scale=1 / math.sqrt(D)),
        "b_C": normal(N, scale=1 / math.sqrt(N)),
        "A_log": torch.log(torch.arange(1, N + 1, dtype=torch.float64)).repeat(D, 1).to(dtype),
        "D": torch.ones(D, dtype=dtype),
        "W_out": normal(M, D, scale=1 / math.sqrt(D)),
        "b_out": torch.zeros(M, dtype=dtype),
    }


def draw_task(seed: int) -> tuple[dict, dict]:
    child_inputs = {
        "params": initial_params(generator(seed, NAME, "instance")),
        "steps": STEPS,
        "batch_size": BATCH,
        "selective": True,
        "lr": LR,
        "generator": generator(seed, NAME, "train"),
    }
    tokens, targets = tasktools.reference().selective_scan.copy_batch(M, HELDOUT, generator(seed, NAME, "heldout"))
    return child_inputs, {"tokens": tokens, "targets": targets}


def accuracy(params: dict, tokens: torch.Tensor, targets: torch.Tensor, selective: bool = True) -> float:
    with torch.no_grad():
        logits = tasktools.reference().selective_scan.copy_logits(params, tokens, selective)
    return float((logits.argmax(-1) == targets).double().mean())


def evaluate(returned, child_inputs: dict, heldout: dict) -> dict[str, float]:
    params = usable(returned, child_inputs["params"])
    if params is None:
        return {"accuracy": 0.0, "chance": 1 / M}
    selective = bool(child_inputs.get("selective", True))
    return {"accuracy": accuracy(params, heldout["tokens"], heldout["targets"], selective), "chance": 1 / M}


def figures(train=None, seed=0, lengths=(64, 128, 256, 512, 1024)) -> dict:
    """The notebook's two plots. ``accuracy``: the selective and the time-invariant model
    trained by ``train`` (a ``train_selective_copy``, the reference's by default) on the same
    initial weights, scored on fresh sequences. ``seconds``: the reference scan's time against
    T next to attention's (``scaled_dot_product_attention`` on the same width), the scan
    growing like T and attention like T**2."""
    ref = tasktools.reference()
    train = train or ref.selective_scan.train_selective_copy
    tokens, targets = ref.selective_scan.copy_batch(M, HELDOUT, generator(seed, NAME, "figure-heldout"))
    acc = {}
    for selective in (True, False):
        params, _ = train(
            initial_params(generator(seed, NAME, "figure")),
            STEPS,
            BATCH,
            selective,
            LR,
            generator(seed, NAME, "figure-train"),
        )
        ok = usable(params, initial_params(generator(seed, NAME, "figure"))) is not None
        acc["selective" if selective else "time_invariant"] = (
            accuracy(params, tokens, targets, selective) if ok else 0.0
        )
    A = -torch.exp(initial_params(generator(seed, NAME, "timing"))["A_log"])
    seconds: dict[str, list[float]] = {"scan": [], "attention": []}
    for T in lengths:
        x, bc = torch.randn(1, T, D), torch.randn(1, T, N)
        seconds["scan"].append(_seconds(ref.selective_scan.selective_scan, x, x, A, bc, bc, delta_softplus=True))
        seconds["attention"].append(_seconds(ref.attention.scaled_dot_product_attention, x, x, x))
    return {"accuracy": acc, "chance": 1 / M, "lengths": list(lengths), "seconds": seconds}


def _seconds(fn, *args, repeat: int = 3, **kwargs) -> float:
    """Mean wall time of ``fn(*args)`` after one warm-up call."""
    fn(*args, **kwargs)
    started = time.perf_counter()
    for _ in range(repeat):
        fn(*args, **kwargs)
    return (time.perf_counter() - started) / repeat


# --- naming the slip behind a failed run (seqlab.labs.slips) --------------------------------------


@torch.no_grad()
def _heldout_ce(e: Evidence, first: bool = False) -> float:
    """The trained model's held-out loss with the reference forward, read out at the markers or
    (a known slip) at the first positions."""
    p, tokens, targets = e.returned, e.heldout["tokens"][:1000], e.heldout["targets"][:1000]
    ref = tasktools.reference().selective_scan
    u = p["embedding"][tokens]
    delta, B, C = u @ p["W_delta"].T + p["b_delta"], u @ p["W_B"].T + p["b_B"], u @ p["W_C"].T + p["b_C"]
    y = ref.selective_scan(u, delta, -torch.exp(p["A_log"]), B, C, p["D"], delta_softplus=True)
    y = y[:, : ref.COPY_COUNT] if first else y[:, -ref.COPY_COUNT :]
    logits = y @ p["W_out"].T + p["b_out"]
    return float(torch.nn.functional.cross_entropy(logits.reshape(-1, M).double(), targets.reshape(-1)))


def _first_positions_fit(e: Evidence) -> bool:
    """The reported losses are those of a readout at the first COPY_COUNT positions (``fits``)."""
    return fits(e, _heldout_ce(e, first=True), _heldout_ce(e))


_INPUT_MAPS = ("W_delta", "W_B", "W_C")

SLIPS = [
    Slip(
        "time-invariant model trained with selective=True",
        "W_delta, W_B and W_C never changed and your loss does not move when they do: delta, B and C "
        "did not depend on the input. With selective=True they are u @ W.T + b at every position; only "
        "selective=False uses the constants.",
        lambda e: set(_INPUT_MAPS) <= e.unchanged and e.reads(_INPUT_MAPS) is False,
        exact=True,
    ),
    Slip(
        "time-invariant delta in the selective model",
        "W_delta never changed and your loss does not move when it does: the step size did not depend "
        "on the input, so the model cannot choose what to keep. delta = u @ W_delta.T + b_delta, then "
        "softplus (delta_softplus=True).",
        lambda e: "W_delta" in e.unchanged and not {"W_B", "W_C"} <= e.unchanged and e.reads({"W_delta"}) is False,
        exact=True,
    ),
    Slip(
        "readout at the wrong positions",
        "your losses are those of a readout of the first positions: the outputs are read at the "
        "markers, the last COPY_COUNT positions (y[:, -COPY_COUNT:]).",
        _first_positions_fit,
    ),
]
