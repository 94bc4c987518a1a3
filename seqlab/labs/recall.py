"""The delayed-recall lab (``lstm_gru.train_recall``): gates against vanishing gradients.

A task instance is a lag (24 to 32 distractors, drawn per grading) and initial GRU weights.
The child trains with ``kind="gru"`` (the LSTM learns the task too, but about one run in ten,
honest or not, stalls near 0.85 within this budget: a bound it could not meet fairly); the parent draws 2 000 fresh sequences from a seed the
child never sees and reads them out with the reference's ``recall_logits``.

Sizes: ``K = 16`` symbols (8 memory symbols, chance 1/8), ``H = 48``, 160 Adam steps of 128
sequences at ``lr = 0.01``. The LSTM's forget-gate bias and the GRU's update-gate bias start at
``+5`` and ``+3`` (the gates start by keeping the state: ``sigmoid(5)**30 = 0.82`` of a stored
value survives 30 steps, where PyTorch's zero bias keeps ``0.5**30``). The RNN keeps PyTorch's
initialisation: its gradient through 30 steps of ``W_hh`` is what the lab is about.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .slips import Evidence, Slip, fits
from .tasktools import generator, usable

NAME = "recall"
K, H, BATCH, STEPS, LR = 16, 48, 128, 160, 1e-2
LAGS = range(24, 33)
KIND = "gru"
GATE_BIAS = {"lstm": 5.0, "gru": 3.0}
HELDOUT = 2000

# From the reference over 20 seeds (benchmarks/bench_labs_tasks.py): held-out accuracy 1.00 on
# every seed for the GRU at lags 24-32; 0.11 to 0.26 for the plain RNN trained the same way, and
# at most 0.13 (or a crash) for the known-wrong loops of tests/mutants/labs_tasks.py (chance is
# 1/8). 0.9 sits far above both and below every honest run, the reference's and an alternative
# loop's drawing its own batches alike.
THRESHOLDS = {"accuracy": 0.9}
# What the held-out test ran on, in its failure message (each lab says its own).
HELDOUT_WORDS = f"{HELDOUT} fresh sequences at the same lag, from a seed your code never saw"

# The sizes the grader trains at (the costliest instance: the longest lag), as the student's
# public budget test trains at them (public_tests/_labs.py, GRADING) and as the lab's docstring
# states them (Lab.grading_note): tests/labs/test_lab_budgets.py holds all three to these.
GRADING_SIZES = {
    "kind": KIND, "symbols": K, "hidden": H, "steps": STEPS, "batch_size": BATCH, "lag": max(LAGS), "lr": LR,
}  # fmt: skip
GRADING_TEXT = (
    f"kind={KIND!r}, K={K} symbols, H={H}, {STEPS} steps of batch_size={BATCH} sequences, "
    f"a lag from {min(LAGS)} to {max(LAGS)} drawn per grading, lr={LR:g}"
)


# The first steps' replay (LabSession.check_first_steps): the batch the protocol draws, and the
# counts that a loss summed where the protocol averages is off by.
BATCH_CALL = "tokens = recall_batch(K, batch_size, lag, generator)"


def loss_counts(child_inputs: dict) -> dict[str, int]:
    return {"sequences in a batch (batch_size)": child_inputs["batch_size"]}


def _reference():
    from ..reference import load_reference

    return load_reference().lstm_gru


def initial_params(kind: str, gen: torch.Generator, dtype=torch.float32) -> dict[str, torch.Tensor]:
    """PyTorch's uniform(-1/sqrt(H), 1/sqrt(H)) for every weight, gate biases as above."""
    bound = 1 / math.sqrt(H)

    def uniform(*shape):
        return ((torch.rand(*shape, generator=gen, dtype=torch.float64) * 2 - 1) * bound).to(dtype)

    if kind == "rnn":
        params = {"W_xh": uniform(H, K), "W_hh": uniform(H, H), "b_h": uniform(H)}
    else:
        gates = {"lstm": 4, "gru": 3}[kind]
        params = {"W_ih": uniform(gates * H, K), "W_hh": uniform(gates * H, H)}
        params["b_ih"], params["b_hh"] = uniform(gates * H), uniform(gates * H)
        params["b_ih"][H : 2 * H] += GATE_BIAS[kind]  # forget (LSTM) / update (GRU) block
    params["W_y"], params["b_y"] = uniform(K, H), uniform(K)
    return params


def draw_task(seed: int) -> tuple[dict, dict]:
    gen = generator(seed, NAME, "instance")
    lag = LAGS[int(torch.randint(len(LAGS), (1,), generator=gen))]
    child_inputs = {
        "kind": KIND,
        "params": initial_params(KIND, gen),
        "steps": STEPS,
        "batch_size": BATCH,
        "lag": lag,
        "lr": LR,
        "generator": generator(seed, NAME, "train"),
    }
    heldout = {"tokens": _reference().recall_batch(K, HELDOUT, lag, generator(seed, NAME, "heldout"))}
    return child_inputs, heldout


def accuracy(kind: str, params: dict, tokens: torch.Tensor) -> float:
    """Share of ``tokens (N, lag + 1)`` whose first token the reference forward recalls."""
    x = F.one_hot(tokens, K).to(params["W_y"].dtype)
    with torch.no_grad():
        logits = _reference().recall_logits(kind, params, x)
    return float((logits.argmax(-1) == tokens[:, 0]).to(torch.float64).mean())


def evaluate(returned, child_inputs: dict, heldout: dict) -> dict[str, float]:
    chance = 1 / (K // 2)
    params = usable(returned, child_inputs["params"])
    if params is None:
        return {"accuracy": 0.0, "chance": chance}
    return {"accuracy": accuracy(child_inputs["kind"], params, heldout["tokens"]), "chance": chance}


# --- naming the slip behind a failed run (seqlab.labs.slips) --------------------------------------


@torch.no_grad()
def _heldout_ce(e: Evidence, readout: str = "h_T", target: int = 0) -> float:
    """The trained model's held-out loss with the reference GRU, read out from ``h_T`` or from
    ``h_1``, against the first token or another position's."""
    p, tokens = e.returned, e.heldout["tokens"]
    x = F.one_hot(tokens, K).to(p["W_y"].dtype)
    hs, h_T = _reference().gru_forward(x, x.new_zeros(x.shape[0], H), p["W_ih"], p["W_hh"], p["b_ih"], p["b_hh"])
    h = h_T if readout == "h_T" else hs[:, 0]
    return float(F.cross_entropy((h @ p["W_y"].T + p["b_y"]).double(), tokens[:, target]))


SLIPS = [
    Slip(
        "readout from h_1, not h_T",
        "W_hh never changed (at h_1 the state has seen only h_0 = 0) and your losses are those of a "
        "readout of the first state: read the logits out of the last state, h_T @ W_y.T + b_y.",
        lambda e: "W_hh" in e.unchanged and fits(e, _heldout_ce(e, readout="h_1"), _heldout_ce(e)),
        exact=True,
    ),
    Slip(
        "target is the last token, not the first",
        "your losses are those of a model that predicts the last token, which it has just read: "
        "the target is tokens[:, 0], the token to remember.",
        lambda e: fits(e, _heldout_ce(e, target=-1), _heldout_ce(e)),
    ),
    # "no gradient through time" is named by the differential replay (seqlab.labs.differential),
    # on exact evidence: its old behavioural rule (a trained model at chance, log(K/2)) also fired
    # on a model that returned probabilities to the loss (a double softmax), whose gradient
    # through time is whole.
]


def figures(train=None, lags=(2, 4, 8, 16, 24, 32), kinds=("rnn", "lstm", "gru"), seed=0) -> dict:
    """Accuracy against lag for each cell (the notebook's plot): ``train`` is a
    ``train_recall`` (the reference's by default), trained once per kind and lag on the task's
    sizes and scored on fresh sequences."""
    train = train or _reference().train_recall
    accuracies: dict[str, list[float]] = {}
    out = {"lags": list(lags), "chance": 1 / (K // 2), "accuracy": accuracies}
    for kind in kinds:
        row = []
        for lag in lags:
            gen = generator(seed, NAME, f"figure:{kind}:{lag}")
            params, _ = train(kind, initial_params(kind, gen), STEPS, BATCH, lag, LR, gen)
            tokens = _reference().recall_batch(K, HELDOUT, lag, generator(seed, NAME, f"figure-heldout:{lag}"))
            row.append(accuracy(kind, params, tokens) if usable(params, params) is not None else 0.0)
        accuracies[kind] = row
    return out
