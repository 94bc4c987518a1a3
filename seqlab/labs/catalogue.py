"""The differential replay's catalogue: each lab's known slips, as switches of its protocol
(seqlab.labs.protocols), with the name the feedback gives and what to do instead.

Grown from the kinds the labs used to locate without naming, from the slips the known-wrong
loops of tests/mutants/ make, and from the blind bank of lab mistakes (tests/labs/blind_slips/):
every entry is a mistake a student makes, and has a loop written with it that its replay names
(tests/labs/test_differential.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from . import protocols


@dataclass(frozen=True)
class Known:
    name: str  # as the feedback names it (the class report counts the name)
    switches: tuple[tuple[str, object], ...]
    explain: str


def _known(name: str, explain: str, **switches: object) -> Known:
    return Known(name, tuple(sorted(switches.items())), explain)


AFTER = _known(
    "losses recorded after the update",
    "each of your losses is the loss of the updated parameters on the step's batch: losses[s] is the "
    "loss before the update (the one the gradient was taken of), recorded before adam changes anything.",
    after=True,
)
ACCUMULATE = _known(
    "gradients accumulated across steps",
    "each step's gradient is the sum of every gradient so far: .grad is never reset. Set each "
    "parameter's .grad to None before backward(), or take fresh gradients with torch.autograd.grad.",
    accumulate=True,
)
FRESH_ADAM = _known(
    "Adam state not kept between steps",
    "keep each parameter's Adam state (m, v, step) from one step to the next; a fresh {} every step "
    "makes every update a first, bias-corrected step of size ~lr.",
    fresh_adam=True,
)
ASCENT = _known(
    "gradient ascent (the gradient's sign flipped)",
    "your losses are those of adam given minus the gradient: adam already steps against the gradient "
    "it is given (w - lr * m_hat / ...), so give it the gradient itself.",
    ascent=True,
)
ONE_BATCH = _known(
    "one batch reused at every step",
    "your losses are those of a loop that draws its batch once, before the loop: every step draws a "
    "fresh batch with the generator, inside the loop.",
    one_batch=True,
)
RUNNING_MEAN = _known(
    "losses recorded as a running mean",
    "each of your losses is the mean of the losses so far: losses[s] is step s's own loss, before its update.",
    running_mean=True,
)
LOOP = [AFTER, ACCUMULATE, FRESH_ADAM, ASCENT, ONE_BATCH, RUNNING_MEAN]  # every task lab's loop
CLASSES_MIXED = (
    "the logits were permuted to (batch, classes, positions) before the reshape to (-1, classes), so "
    "each row mixes classes and positions: softmax_cross_entropy takes logits.reshape(-1, classes), "
    "rows of classes, against targets.reshape(-1) in the same (batch, position) order."
)

CATALOGUE: dict[str, tuple[Callable[..., Iterator[float]], list[Known]]] = {
    "lstm_gru.train_recall": (
        protocols.recall_losses,
        [
            _known(
                "readout from h_1, not h_T",
                "your losses are those of a readout of the first state: read the logits out of the last "
                "state, h_T @ W_y.T + b_y.",
                readout="first",
            ),
            _known(
                "readout pools the states instead of taking the last",
                "your losses are those of a readout of the mean of the states over time: the answer is read "
                "out of the last state alone, h_T @ W_y.T + b_y (recall_logits returns that).",
                readout="mean",
            ),
            _known(
                "target is the last token, not the first",
                "your losses are those of a model that predicts the last token, which it has just read: the "
                "target is tokens[:, 0], the token to remember.",
                target=-1,
            ),
            _known(
                "no gradient through time",
                "your losses are those of a GRU whose state is detached at every step: the first token's "
                "gradient never reaches the weights. Keep the state in the graph through all lag + 1 steps "
                "(no .detach() of h inside the sequence).",
                detach=True,
            ),
            _known(
                "probabilities given to the loss as logits (a double softmax)",
                "your losses are softmax_cross_entropy of softmax(logits): the model's output went through "
                "a softmax before the loss, which takes logits and applies its own. Give it the logits, "
                "h_T @ W_y.T + b_y, as recall_logits returns them.",
                probabilities=True,
            ),
            _known(
                "the token to remember cut from the input",
                "your losses are those of a GRU fed tokens[:, 1:], the distractors alone: the model reads "
                "the whole sequence, the token to remember first (x = one_hot(tokens)).",
                drop_first=True,
            ),
            _known(
                "one distractor too many (lag + 1)",
                "your losses are those of batches drawn with lag + 1: recall_batch(K, batch_size, lag, "
                "generator) already makes sequences of lag + 1 tokens.",
                lag_plus=True,
            ),
            *LOOP,
        ],
    ),
    "transformer.train_reverser": (
        protocols.reverser_losses,
        [
            _known(
                "causal mask missing in the decoder",
                "your losses are those of a decoder that sees the next target in its input: mask the "
                "decoder's self-attention (causal=True), or greedy decoding, which has no future, fails.",
                causal=False,
            ),
            _known(
                "no teacher-forcing shift",
                "your losses are those of a decoder fed the targets themselves: feed them shifted right, "
                "after the start token (tgt_in = [start, tgt[:, :-1]]), and predict tgt.",
                shift=False,
            ),
            _known(
                "no positional encoding",
                "your losses are those of a model without positions, which cannot tell which token comes "
                "first: add sinusoidal_encoding to the embeddings (embed_tokens(tokens, table, pe)).",
                positions=False,
            ),
            _known(
                "the decoder's two inputs swapped",
                "your losses are those of decoder_block(memory, y, ...): its first input is the decoder's own "
                "embedded targets, its second the encoder's output, decoder_block(y, memory, ...).",
                swap=True,
            ),
            _known("logits permuted before the reshape", CLASSES_MIXED, classes_mixed=True),
            _known(
                "targets shifted twice",
                "your losses are those of logits[:, :-1] against tgt[:, 1:]: reverser_batch already shifts "
                "the decoder's input (tgt_in starts with the start token), so logits[:, t] predicts tgt[:, t].",
                shift_twice=True,
            ),
            _known(
                "causal mask on the encoder",
                "your losses are those of an encoder under a causal mask: the encoder reads the whole "
                "source (the first output is the last source token); only the decoder's self-attention is causal.",
                encoder_causal=True,
            ),
            _known(
                "logits flattened time-major",
                "your losses are those of logits transposed to (T, B, vocab) before the reshape, against "
                "targets flattened batch first: logits.reshape(-1, vocab) and tgt.reshape(-1), in the same order.",
                time_major=True,
            ),
            _known(
                "source and decoder input swapped",
                "your losses are those of reverser_logits(params, tgt_in, src): the encoder reads the source, "
                "the decoder its shifted targets, reverser_logits(params, src, tgt_in).",
                inputs_swapped=True,
            ),
            _known(
                "pre-LN blocks instead of post-LN",
                "your losses are those of blocks run with norm_first=True: the lab's model is post-LN, the "
                "blocks' default (the grader evaluates that one).",
                pre_ln=True,
            ),
            *LOOP,
        ],
    ),
    "selective_scan.train_selective_copy": (
        protocols.copy_losses,
        [
            _known(
                "state matrix with the wrong sign",
                "your losses are those of A = exp(A_log): A = -exp(A_log) keeps every eigenvalue negative, "
                "so the state decays; with the sign lost it grows at every step.",
                sign=True,
            ),
            _known(
                "readout at the wrong positions",
                "your losses are those of a readout of the first positions: the outputs are read at the "
                "markers, the last COPY_COUNT positions (y[:, -COPY_COUNT:]).",
                first=True,
            ),
            _known(
                "time-invariant model trained with selective=True",
                "your losses are those of the time-invariant model: with selective=True delta, B and C are "
                "u @ W.T + b at every position; only selective=False uses the constants.",
                invariant=True,
            ),
            _known("logits permuted before the reshape", CLASSES_MIXED, classes_mixed=True),
            _known(
                "B and C swapped",
                "your losses are those of selective_scan(u, delta, A, C, B, ...): B (from W_B) writes into "
                "the state, C (from W_C) reads it out.",
                bc_swapped=True,
            ),
            _known(
                "readout one position early",
                "your losses are those of y[:, -COPY_COUNT - 1:-1]: the outputs are read at the markers "
                "themselves, y[:, -COPY_COUNT:].",
                early=True,
            ),
            _known(
                "delta bias added twice",
                "your losses are those of b_delta added to delta again (delta_bias=b_delta): delta = "
                "u @ W_delta.T + b_delta already holds it.",
                bias_twice=True,
            ),
            _known(
                "A without its exponential",
                "your losses are those of A = -A_log: A = -exp(A_log).",
                no_exp=True,
            ),
            *LOOP,
        ],
    ),
    "rnn.train_char_rnn": (
        protocols.char_losses,
        [
            _known(
                "hidden state not carried across windows",
                "each window starts from the previous step's h_last (the stream goes on); only w == 0 "
                "starts from zeros.",
                carry=False,
            ),
            _known(
                "reset missing at w == 0",
                "when the window index wraps to 0 the streams start again: reset h to zeros there.",
                reset=False,
            ),
            _known(
                "clipping after the update (or not at all)",
                "clip the gradients first, then give the clipped ones to adam: clipping after the step changes nothing.",
                clipped=False,
            ),
            _known(
                "each gradient clipped on its own",
                "clip_grad_norm takes the list of all five gradients: one global norm, one common factor.",
                global_clip=False,
            ),
            _known(
                "Adam state not kept between steps",
                "keep each parameter's Adam state (m, v, step) from one step to the next; a fresh {} every "
                "step makes every update a first, bias-corrected step of size ~lr.",
                keep_adam=False,
            ),
            _known(
                "loss not divided by seq_len",
                "losses[s] = loss / seq_len: truncated_bptt sums over the window's steps; the lab reports "
                "nats per character.",
                per_char=False,
            ),
            _known(
                "state carried after the update instead of before",
                "your next window starts from the state of this window run again with the updated "
                "parameters: carry h_last as truncated_bptt returns it, computed before the update.",
                carried_after=True,
            ),
            _known(
                "streams cut the wrong way",
                "your streams take every batch_size-th token (tokens.reshape(L, batch_size).T): stream b is "
                "the contiguous slice tokens[b * L:(b + 1) * L], tokens[:batch_size * L].reshape(batch_size, L).",
                streams_across=True,
            ),
            _known(
                "targets not shifted",
                "your losses are those of a model trained to predict its own input: the targets are the next "
                "characters, window[:, 1:], the inputs window[:, :-1].",
                unshifted=True,
            ),
            _known(
                "inputs built from the targets",
                "your losses are those of a model that reads the character it must predict: the inputs are "
                "window[:, :-1], one-hot, and the targets window[:, 1:].",
                inputs_are_targets=True,
            ),
            _known(
                "truncation length 1 instead of seq_len",
                "your losses are those of truncated_bptt(..., 1): the gradient flows through the whole window, "
                "truncated_bptt(x, y, h, theta, seq_len).",
                chunk_one=True,
            ),
            AFTER,
        ],
    ),
}
