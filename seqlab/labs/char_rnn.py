"""The character-level lab's task: draw it, and judge the trained parameters on held-out text.

A task instance is a text from the course's grammar (``seqlab.labs.corpus``), its characters
mapped to token ids by a permutation drawn per grading, and initial parameters. Weights trained
elsewhere, under another permutation, predict the wrong ids: pasted in, they do worse than the
unigram model. The held-out text comes from another seed derived from the grading's and is
never sent to the student's process.

Sizes: ``H = 48``, 16 streams, windows of 24 characters, 200 Adam steps at ``lr = 0.02`` on
9 616 characters (25 windows per stream, 8 passes). The reference trains in about 0.6 s of CPU
in the parent and its held-out cross-entropy falls from ``log V = 3.33`` nats (the initial
model) past the unigram model's ~2.8 to ~0.75 nats per character.
"""

from __future__ import annotations

import torch

from ..seeds import derive_seed
from . import corpus
from .replay import inputs_digest

H, BATCH, SEQ_LEN, STEPS, LR, CLIP = 48, 16, 24, 200, 0.02, 5.0
WINDOWS = 25
TRAIN_CHARS = BATCH * (WINDOWS * SEQ_LEN + 1)
HELDOUT_STREAMS, HELDOUT_LEN = 8, 257

# progress = (unigram - student) / (unigram - reference): 1 is the reference, 0 the unigram
# model. 0.9 keeps nine tenths of what the reference learns over the baseline: every correct
# implementation lands at 1.0 (the same protocol on the same inputs), a pasted model under another
# permutation lands below 0, and a training loop with a slip in the protocol (no reset, a shared
# Adam state) still learns and is caught by the trajectory test instead, not twice here.
THRESHOLDS = {"progress": 0.9}
# What the held-out test ran on, in its failure message (each lab says its own).
HELDOUT_WORDS = "a fresh text from the same grammar, which the training never saw"

# The sizes the grader trains at, as the student's public budget test trains at them
# (public_tests/_labs.py, GRADING) and as the lab's docstring states them (Lab.grading_note):
# tests/labs/test_lab_budgets.py holds all three to these.
GRADING_SIZES = {
    "vocab": corpus.V, "hidden": H, "chars": TRAIN_CHARS, "steps": STEPS, "batch_size": BATCH,
    "seq_len": SEQ_LEN, "lr": LR, "clip": CLIP,
}  # fmt: skip
GRADING_TEXT = (
    f"a text of {TRAIN_CHARS} tokens over V={corpus.V} characters, H={H}, {STEPS} steps of "
    f"batch_size={BATCH} streams with seq_len={SEQ_LEN}, lr={LR:g}, clip={CLIP:g}"
)


def _seed(seed: int, part: str) -> int:
    return derive_seed(seed, "char_rnn", part, nbytes=8) & ((1 << 63) - 1)


def initial_params(generator: torch.Generator, dtype=torch.float64) -> dict[str, torch.Tensor]:
    """Small random weights: tanh starts in its linear range and the first loss is ~log V."""
    V = corpus.V

    def randn(*shape, scale):
        return (torch.randn(*shape, generator=generator, dtype=torch.float64) * scale).to(dtype)

    return {
        "W_xh": randn(H, V, scale=0.3),
        "W_hh": randn(H, H, scale=0.5 / H**0.5),
        "b_h": torch.zeros(H, dtype=dtype),
        "W_hy": randn(V, H, scale=0.1),
        "b_y": torch.zeros(V, dtype=dtype),
    }


def draw_task(seed: int) -> tuple[dict, dict]:
    generator = torch.Generator().manual_seed(_seed(seed, "instance"))
    permutation = torch.randperm(corpus.V, generator=generator)
    tokens = corpus.encode(corpus.text(_seed(seed, "train"), TRAIN_CHARS), permutation)
    child_inputs = {
        "tokens": tokens,
        "params": initial_params(generator),
        "steps": STEPS,
        "batch_size": BATCH,
        "seq_len": SEQ_LEN,
        "lr": LR,
        "clip": CLIP,
    }
    heldout_text = corpus.text(_seed(seed, "heldout"), HELDOUT_STREAMS * HELDOUT_LEN)
    heldout = {
        "tokens": corpus.encode(heldout_text, permutation).reshape(HELDOUT_STREAMS, HELDOUT_LEN),
        "permutation": permutation,  # to read the model's text back (reports, the notebook)
    }
    return child_inputs, heldout


def _reference():
    from ..reference import load_reference

    return load_reference()


def cross_entropy(params: dict, streams: torch.Tensor) -> float:
    """Mean next-character cross-entropy (nats) of ``params`` on ``streams (S, L)``, from h = 0,
    with the reference's forward."""
    ref = _reference()
    V = params["W_hy"].shape[0]
    x = torch.nn.functional.one_hot(streams[:, :-1], V).to(params["W_hy"].dtype)
    h0 = torch.zeros(streams.shape[0], params["W_hh"].shape[0], dtype=x.dtype)
    hs = ref("rnn.rnn_forward")(x, h0, params["W_xh"], params["W_hh"], params["b_h"])
    logits = hs @ params["W_hy"].T + params["b_y"]
    return float(ref("rnn.softmax_cross_entropy")(logits.reshape(-1, V), streams[:, 1:].reshape(-1)))


def unigram_cross_entropy(train: torch.Tensor, streams: torch.Tensor) -> float:
    """The trivial baseline: character frequencies of the training text (add-one smoothed)."""
    counts = torch.bincount(train, minlength=corpus.V).to(torch.float64) + 1
    log_p = (counts / counts.sum()).log()
    return float(-log_p[streams[:, 1:].reshape(-1)].mean())


_RUNS: dict[str, tuple[dict, torch.Tensor]] = {}


def reference_run(child_inputs: dict) -> tuple[dict, torch.Tensor]:
    """The reference's training on the same inputs (once per task instance in a process, keyed
    by every input, as the task labs' replay is: another lr or clip on the same text is another run)."""
    key = inputs_digest("rnn.train_char_rnn", child_inputs)
    if key not in _RUNS:
        _RUNS.clear()  # one task instance at a time: a grading's, never a class's worth
        with torch.no_grad():
            _RUNS[key] = _reference()("rnn.train_char_rnn")(**child_inputs)
    return _RUNS[key]


def evaluate(params: dict, child_inputs: dict, heldout: dict) -> dict[str, float]:
    reference_params, _ = reference_run(child_inputs)
    streams = heldout["tokens"]
    student = cross_entropy(params, streams)
    reference = cross_entropy(reference_params, streams)
    unigram = unigram_cross_entropy(child_inputs["tokens"], streams)
    progress = (unigram - student) / (unigram - reference) if unigram > reference else 0.0
    return {"heldout_ce": student, "reference_ce": reference, "unigram_ce": unigram, "progress": progress}
