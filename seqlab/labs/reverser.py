"""The reversal lab (``transformer.train_reverser``): attention finds the alignment.

A task instance is a vocabulary size (8 to 12), a length (6 to 8), both drawn per grading, and
initial weights. The parent decodes 1 000 fresh sources greedily with the reference's
``reverser_logits`` (the decoder fed its own previous outputs, not the truth) and counts the
outputs that are exactly the reversed source.

Sizes: ``E = 32``, one head, ``F = 64``, one encoder and one decoder block, 160 Adam steps of 32
sequences at ``lr = 3e-3``: about 1.2 s of CPU on one standard core for the reference. 200 steps
gave the same worst held-out score over 100 seeds for a quarter more of the class's time; 130
did too, but then the loops without positions or without the causal mask had not yet drifted far
enough from the reference for their slips to be named (seqlab.labs.slips.fits).
"""

from __future__ import annotations

import math

import torch

from . import tasktools
from .slips import Evidence, Slip, fits
from .tasktools import generator, usable

NAME = "reverser"
E, FFN, BATCH, STEPS, LR = 32, 64, 32, 160, 3e-3
VOCABS, LENGTHS = range(8, 13), range(6, 9)
HELDOUT = 1000

# The bound lies halfway between the trivial baseline and the worst correct loop measured.
# Near zero loss Adam at a constant lr oscillates, and exact match multiplies every position's
# error, so a correct loop's score varies with where its last steps land: at 200 steps the
# reference and the alternative loop of tests/mutants/labs_tasks.py scored 0.95 to 1.00 on most
# task instances and 0.78 at worst over seeds 0-99 each (0.9 failed 7 of those 200 runs); at
# 160 steps the reference scores a median of 0.97 over seeds 0-99 and 0.84 at worst, and the
# alternative loop passes on the bank's seeds. A model that learned
# nothing scores the chance V**-T (below 1e-5); the known-wrong loops that cannot find the
# alignment score at most 0.02 (no shift, no positions) or crash (Adam state shared, cross-attention to
# the decoder's own input). So 0.5, "half of the fresh sequences reversed exactly", is out of
# reach of a model that has not learned the reversal and leaves a correct loop's worst instance
# a wide margin. 64 sequences a step steady the end (worst 0.86) but widen the first steps'
# float32 spread past the replay's tolerance (seqlab/labs/replay.py), so the batch stays 32.
# A loop without the causal mask can still learn the cross-attention path that greedy decoding
# needs (0.00 to 0.99 by instance): the held-out bound does not take its points, the replay of
# its first losses does (its first loss is not the protocol's), and its slip is named there.
THRESHOLDS = {"exact_match": 0.5}
# What the held-out test ran on, in its failure message (each lab says its own).
HELDOUT_WORDS = f"{HELDOUT} fresh source sequences decoded greedily, from a seed your code never saw"

# The sizes the grader trains at (the costliest instance: the largest vocabulary and length), as
# the student's public budget test trains at them (public_tests/_labs.py, GRADING) and as the
# lab's docstring states them (Lab.grading_note): tests/labs/test_lab_budgets.py holds all three
# to these.
GRADING_SIZES = {
    "vocab": max(VOCABS), "seq_len": max(LENGTHS), "embed": E, "ffn": FFN, "steps": STEPS, "batch_size": BATCH,
    "lr": LR,
}  # fmt: skip
GRADING_TEXT = (
    f"vocab from {min(VOCABS)} to {max(VOCABS)} and seq_len from {min(LENGTHS)} to {max(LENGTHS)} "
    f"drawn per grading, E={E}, F={FFN}, {STEPS} steps of batch_size={BATCH} sequences, lr={LR:g}"
)


# The first steps' replay (LabSession.check_first_steps): the batch the protocol draws, and the
# counts that a loss summed where the protocol averages is off by.
BATCH_CALL = "src, tgt_in, tgt = reverser_batch(batch_size, seq_len, vocab, generator)"


def loss_counts(child_inputs: dict) -> dict[str, int]:
    return tasktools.loss_counts(child_inputs["batch_size"], child_inputs["seq_len"], "targets", "seq_len")


def initial_params(vocab: int, gen: torch.Generator, dtype=torch.float32) -> dict:
    def normal(rows, cols):
        return (torch.randn(rows, cols, generator=gen, dtype=torch.float64) / math.sqrt(cols)).to(dtype)

    def zeros(n):
        return torch.zeros(n, dtype=dtype)

    def attention():
        out = {name: normal(E, E) for name in ("W_q", "W_k", "W_v", "W_o")}
        return out | {name: zeros(E) for name in ("b_q", "b_k", "b_v", "b_o")}

    def ffn():
        return {"W1": normal(FFN, E), "b1": zeros(FFN), "W2": normal(E, FFN), "b2": zeros(E)}

    def norm():
        return {"weight": torch.ones(E, dtype=dtype), "bias": zeros(E)}

    return {
        "embedding": normal(vocab + 1, E),
        "encoder": {"self_attn": attention(), "ffn": ffn(), "norm1": norm(), "norm2": norm()},
        "decoder": {
            "self_attn": attention(),
            "cross_attn": attention(),
            "ffn": ffn(),
            "norm1": norm(),
            "norm2": norm(),
            "norm3": norm(),
        },
        "W_out": normal(vocab, E),
        "b_out": zeros(vocab),
    }


def draw_task(seed: int) -> tuple[dict, dict]:
    gen = generator(seed, NAME, "instance")
    vocab = VOCABS[int(torch.randint(len(VOCABS), (1,), generator=gen))]
    seq_len = LENGTHS[int(torch.randint(len(LENGTHS), (1,), generator=gen))]
    child_inputs = {
        "params": initial_params(vocab, gen),
        "steps": STEPS,
        "batch_size": BATCH,
        "seq_len": seq_len,
        "vocab": vocab,
        "lr": LR,
        "generator": generator(seed, NAME, "train"),
    }
    src = torch.randint(vocab, (HELDOUT, seq_len), generator=generator(seed, NAME, "heldout"))
    return child_inputs, {"src": src}


@torch.no_grad()
def greedy(params: dict, src: torch.Tensor, vocab: int) -> torch.Tensor:
    """Decode with the reference forward, each output fed back as the next input."""
    out = torch.full((src.shape[0], 1), vocab, dtype=torch.long)
    for _ in range(src.shape[1]):
        logits = tasktools.reference().transformer.reverser_logits(params, src, out)
        out = torch.cat([out, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return out[:, 1:]


def evaluate(returned, child_inputs: dict, heldout: dict) -> dict[str, float]:
    params = usable(returned, child_inputs["params"])
    if params is None:
        return {"exact_match": 0.0, "token_accuracy": 0.0}
    src = heldout["src"]
    right = greedy(params, src, child_inputs["vocab"]) == src.flip(1)
    return {"exact_match": float(right.all(1).double().mean()), "token_accuracy": float(right.double().mean())}


@torch.no_grad()
def cross_attention(params: dict, src: torch.Tensor) -> torch.Tensor:
    """The decoder's cross-attention weights ``(B, T, S)`` on the true shifted targets.

    ``decoder_block`` returns only its output, so its first two steps are replayed here with
    the reference's pieces (post-LN, as ``reverser_logits`` runs it): self-attention and norm1,
    then the cross-attention whose weights are the alignment."""
    ref = tasktools.reference()
    vocab = params["W_out"].shape[0]
    start = torch.full((src.shape[0], 1), vocab, dtype=torch.long)
    tgt_in = torch.cat([start, src.flip(1)[:, :-1]], dim=1)
    table, block = params["embedding"], params["decoder"]
    pe = ref.positional.sinusoidal_encoding(src.shape[1], table.shape[1], dtype=table.dtype)
    memory = ref.transformer.encoder_block(ref.positional.embed_tokens(src, table, pe), params["encoder"], 1)
    x = ref.positional.embed_tokens(tgt_in, table, pe)
    mha = ref.attention.multi_head_attention
    x = x + mha(x, x, x, block["self_attn"], 1, ref.attention.causal_mask(x.shape[1]))[0]
    x = ref.transformer.layer_norm(x, block["norm1"]["weight"], block["norm1"]["bias"])
    return mha(x, memory, memory, block["cross_attn"], 1)[1][:, 0]


def figures(params: dict, child_inputs: dict, examples: int = 4, seed: int = 0) -> dict:
    """The notebook's heatmaps: cross-attention weights (``examples`` lists of T rows of S) on
    fresh sources, and the mean weight on the anti-diagonal (1 is a perfect alignment)."""
    src = torch.randint(
        child_inputs["vocab"], (examples, child_inputs["seq_len"]), generator=generator(seed, NAME, "figure")
    )
    weights = cross_attention(params, src)
    anti = weights.flip(-1).diagonal(dim1=-2, dim2=-1).mean()
    return {"src": src.tolist(), "weights": weights.tolist(), "anti_diagonal": float(anti)}


# --- naming the slip behind a failed run (seqlab.labs.slips) --------------------------------------


@torch.no_grad()
def _heldout_ce(e: Evidence, causal: bool = True, shift: bool = True, positions: bool = True) -> float:
    """The trained model's teacher-forced held-out loss with the reference blocks, as trained
    correctly or with a known slip: no causal mask, the targets fed unshifted, no positions."""
    ref, p = tasktools.reference(), _tree(e)
    src = e.heldout["src"][:500]
    vocab, tgt = p["W_out"].shape[0], src.flip(1)
    fed = torch.cat([torch.full((src.shape[0], 1), vocab, dtype=torch.long), tgt[:, :-1]], dim=1) if shift else tgt
    table = p["embedding"]
    pe = ref.positional.sinusoidal_encoding(src.shape[1], table.shape[1], dtype=table.dtype)
    pe = pe if positions else torch.zeros_like(pe)
    memory = ref.transformer.encoder_block(ref.positional.embed_tokens(src, table, pe), p["encoder"], 1)
    x = ref.positional.embed_tokens(fed, table, pe)
    y = ref.transformer.decoder_block(x, memory, p["decoder"], 1, causal=causal)
    logits = y @ p["W_out"].T + p["b_out"]
    return float(torch.nn.functional.cross_entropy(logits.reshape(-1, vocab).double(), tgt.reshape(-1)))


def _tree(e: Evidence) -> dict:
    out: dict = {}
    for path, t in e.returned.items():
        *parents, leaf = path.split("/")
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = t
    return out


def _encoder(e: Evidence) -> set[str]:
    return {p for p in e.initial if p.startswith("encoder/")}


def _encoder_frozen(e: Evidence) -> bool:
    """Every encoder tensor came back as sent while some decoder tensor changed (all nested
    tensors unchanged is the general slip of nested dicts never trained, not this)."""
    decoder = {p for p in e.initial if p.startswith("decoder/")}
    return bool(_encoder(e)) and _encoder(e) <= e.unchanged and bool(decoder - e.unchanged)


def _encoder_untrained(e: Evidence) -> str:
    why = (
        "though your loss reads the encoder (moving its weights moves your first loss): the encoder's "
        "tensors were left out of the update, or params_out holds them as sent. Every tensor of params "
        "takes an adam step."
        if e.reads(_encoder(e))
        # Two loops show this evidence: an encoder whose output never reaches the decoder, and an
        # encoder run with other weights than params["encoder"] (its output still reaches it).
        # The loss alone cannot tell them apart, so the words name both and claim neither.
        else "and your loss does not move when the encoder's weights do: params['encoder'] never "
        "reaches your loss. Either the encoder block runs with other weights than params['encoder'], "
        "or its output (memory) never reaches the decoder, whose cross-attention takes its keys and "
        "values from it: decoder_block(y, memory, ...)."
    )
    return f"no encoder weight changed while the decoder's did, {why}"


SLIPS = [
    Slip(
        "the encoder never trained",
        _encoder_untrained,
        lambda e: _encoder_frozen(e) and e.reads(_encoder(e)) is not None,
        exact=True,
    ),
    Slip(
        "causal mask missing in the decoder",
        "your losses are those of a decoder that sees the next target in its input: mask the "
        "decoder's self-attention (causal=True), or greedy decoding, which has no future, fails.",
        lambda e: fits(e, _heldout_ce(e, causal=False), _heldout_ce(e)),
    ),
    Slip(
        "no teacher-forcing shift",
        "your losses are those of a decoder fed the targets themselves: feed them shifted right, "
        "after the start token (tgt_in = [start, tgt[:, :-1]]), and predict tgt.",
        lambda e: fits(e, _heldout_ce(e, shift=False), _heldout_ce(e)),
    ),
    Slip(
        "no positional encoding",
        "your losses are those of a model without positions, which cannot tell which token comes "
        "first: add sinusoidal_encoding to the embeddings (embed_tokens(tokens, table, pe)).",
        lambda e: fits(e, _heldout_ce(e, positions=False), _heldout_ce(e)),
    ),
]
