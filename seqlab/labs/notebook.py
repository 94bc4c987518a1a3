"""The numbers a notebook's lab cells are written with, computed on the trusted side.

The cells themselves run in the student's kernel with ``seqlab_lab.py`` (the file
``seqlab/nbgrader/labkit.py``, shipped beside the notebook) and no seqlab: everything they need
from the course's tasks is computed here when the course is written and shipped as data
(``seqlab_lab_data.pt``): the task instance, the initial weights and generator states, and the
reference's band (its loss curves on a few task instances). Nothing here is a solution: the
reference only trains the band's runs, as the grader would.
"""

from __future__ import annotations

from functools import cache

import torch

from . import char_rnn, corpus, recall, reverser, selective_copy

NOTEBOOK_SEED = 0  # the notebook's task instance; the grader draws its own per grading
BAND_SEEDS = range(3)
RECALL_LAGS = (8, 24)  # one lag every cell learns, one past the plain RNN's reach (L5 §6)
RECALL_KINDS = ("rnn", "lstm", "gru")
LAB_TOPICS = ("rnn", "lstm_gru", "transformer", "selective_scan")


def notebook_values(topic: str) -> dict:
    """The numbers a topic's lab cell is written with (trusted side, when the course is built)."""
    return {}


def lab_data(topic: str) -> dict | None:
    """What the topic's lab cells and quick checks read from ``seqlab_lab_data.pt``; None for a
    topic without a lab. Plain containers of tensors, numbers and text: ``torch.load`` reads it
    back with ``weights_only=True`` (no code is unpickled in the student's kernel)."""
    if topic == "rnn":
        inputs, heldout = char_rnn.draw_task(NOTEBOOK_SEED)
        task = {"permutation": heldout["permutation"], "heldout": heldout["tokens"], "alphabet": corpus.ALPHABET}
        return {"char_rnn": {"inputs": inputs, **task}, "band": reference_band()}
    if topic == "lstm_gru":
        runs: dict[str, dict[int, dict]] = {}
        for kind in RECALL_KINDS:
            for lag in RECALL_LAGS:
                gen = torch.Generator().manual_seed(1000 + lag)
                params = recall.initial_params(kind, gen)
                runs.setdefault(kind, {})[lag] = {"params": params, "generator": gen.get_state()}
        task = {"K": recall.K, "steps": recall.STEPS, "batch": recall.BATCH, "lr": recall.LR, "runs": runs}
        return {"recall": task}
    if topic == "transformer":
        inputs, _ = reverser.draw_task(NOTEBOOK_SEED)
        inputs["generator"] = inputs["generator"].get_state()  # labkit.inputs_of makes it a Generator again
        check = reverser.initial_params(5, torch.Generator().manual_seed(0))  # the quick check's weights
        return {"reverser": {"inputs": inputs, "check_params": check}}
    if topic == "selective_scan":
        task = {"M": selective_copy.M, "steps": selective_copy.STEPS, "batch": selective_copy.BATCH}
        task.update(lr=selective_copy.LR, params=selective_copy.initial_params(torch.Generator().manual_seed(0)))
        return {"selective_copy": task}
    return None


@cache
def reference_band() -> dict[str, list[float]]:
    """The reference's training losses on ``BAND_SEEDS``: per step the lowest and highest
    (trusted side: run when the course is built). One torch thread: the runs are small, and
    intra-op threads only wait on each other on a busy 2-core machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        runs = [char_rnn.reference_run(char_rnn.draw_task(seed)[0])[1] for seed in BAND_SEEDS]
    finally:
        torch.set_num_threads(threads)
    stacked = torch.stack(runs)
    return {
        "low": [round(float(v), 4) for v in stacked.min(0).values],
        "high": [round(float(v), 4) for v in stacked.max(0).values],
    }
