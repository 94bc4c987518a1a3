"""The differential replay's catalogue: each lab's known slips, as switches of its protocol
(seqlab.labs.protocols), with the name the feedback gives and what to do instead.

Grown from the kinds the labs used to locate without naming, from the slips the known-wrong
loops of tests/mutants/ make, and from the blind bank of lab mistakes (tests/labs/blind_slips/):
every entry is a mistake a student makes, and has a loop written with it that its replay names
(tests/labs/test_differential.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from . import protocols
from .known import AFTER, CLASSES_MIXED, LOOP, Known, entry, lr_ignored

CATALOGUE: dict[str, tuple[Callable[..., Iterator[float]], list[Known]]] = {
    "lstm_gru.train_recall": (
        protocols.recall_losses,
        [
            entry(
                "readout from h_1, not h_T",
                "your losses are those of a readout of the first state: read the logits out of the last "
                "state, h_T @ W_y.T + b_y.",
                readout="first",
            ),
            entry(
                "readout pools the states instead of taking the last",
                "your losses are those of a readout of the mean of the states over time: the answer is read "
                "out of the last state alone, h_T @ W_y.T + b_y (recall_logits returns that).",
                readout="mean",
            ),
            entry(
                "target is the last token, not the first",
                "your losses are those of a model that predicts the last token, which it has just read: the "
                "target is tokens[:, 0], the token to remember.",
                target=-1,
            ),
            entry(
                "no gradient through time",
                "your losses are those of a GRU whose state is detached at every step: the first token's "
                "gradient never reaches the weights. Keep the state in the graph through all lag + 1 steps "
                "(no .detach() of h inside the sequence).",
                detach=True,
            ),
            entry(
                "probabilities given to the loss as logits (a double softmax)",
                "your losses are softmax_cross_entropy of softmax(logits): the model's output went through "
                "a softmax before the loss, which takes logits and applies its own. Give it the logits, "
                "h_T @ W_y.T + b_y, as recall_logits returns them.",
                probabilities=True,
            ),
            entry(
                "the token to remember cut from the input",
                "your losses are those of a GRU fed tokens[:, 1:], the distractors alone: the model reads "
                "the whole sequence, the token to remember first (x = one_hot(tokens)).",
                drop_first=True,
            ),
            entry(
                "one distractor too many (lag + 1)",
                "your losses are those of batches drawn with lag + 1: recall_batch(K, batch_size, lag, "
                "generator) already makes sequences of lag + 1 tokens.",
                lag_plus=True,
            ),
            entry(
                "the LSTM's cell state read out instead of h_T",
                "your losses are those of an LSTM read out from c_T, the second of (h_T, c_T): the "
                "readout takes the hidden state, h_T @ W_y.T + b_y.",
                cell_state=True,
            ),
            *LOOP,
            *lr_ignored(1e-3, 1e-2),
        ],
    ),
    "transformer.train_reverser": (
        protocols.reverser_losses,
        [
            entry(
                "causal mask missing in the decoder",
                "your losses are those of a decoder that sees the next target in its input: mask the "
                "decoder's self-attention (causal=True), or greedy decoding, which has no future, fails.",
                causal=False,
            ),
            entry(
                "no teacher-forcing shift",
                "your losses are those of a decoder fed the targets themselves: feed them shifted right, "
                "after the start token (tgt_in = [start, tgt[:, :-1]]), and predict tgt.",
                shift=False,
            ),
            entry(
                "no positional encoding",
                "your losses are those of a model without positions, which cannot tell which token comes "
                "first: add sinusoidal_encoding to the embeddings (embed_tokens(tokens, table, pe)).",
                positions=False,
            ),
            entry(
                "the decoder's two inputs swapped",
                "your losses are those of decoder_block(memory, y, ...): its first input is the decoder's own "
                "embedded targets, its second the encoder's output, decoder_block(y, memory, ...).",
                swap=True,
            ),
            entry("logits permuted before the reshape", CLASSES_MIXED, classes_mixed=True),
            entry(
                "targets shifted twice",
                "your losses are those of logits[:, :-1] against tgt[:, 1:]: reverser_batch already shifts "
                "the decoder's input (tgt_in starts with the start token), so logits[:, t] predicts tgt[:, t].",
                shift_twice=True,
            ),
            entry(
                "causal mask on the encoder",
                "your losses are those of an encoder under a causal mask: the encoder reads the whole "
                "source (the first output is the last source token); only the decoder's self-attention is causal.",
                encoder_causal=True,
            ),
            entry(
                "logits flattened time-major",
                "your losses are those of logits transposed to (T, B, vocab) before the reshape, against "
                "targets flattened batch first: logits.reshape(-1, vocab) and tgt.reshape(-1), in the same order.",
                time_major=True,
            ),
            entry(
                "source and decoder input swapped",
                "your losses are those of reverser_logits(params, tgt_in, src): the encoder reads the source, "
                "the decoder its shifted targets, reverser_logits(params, src, tgt_in).",
                inputs_swapped=True,
            ),
            *(
                entry(
                    "pre-LN blocks instead of post-LN",
                    "your losses are those of blocks run with norm_first=True (pre-LN): the lab's model is "
                    "post-LN in both blocks, the blocks' default (the grader evaluates that one).",
                    pre_ln=blocks,
                )
                for blocks in ("both", "encoder", "decoder")
            ),
            entry(
                "embeddings scaled by sqrt(d) twice",
                "your losses are those of a table multiplied by sqrt(d) before embed_tokens, which already "
                "scales by sqrt(d): give embed_tokens the table itself.",
                scaled_twice=True,
            ),
            entry(
                "trained against the source, not the reversed target",
                "your losses are those of logits scored against src: the targets are tgt (src reversed), "
                "softmax_cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1)).",
                against_src=True,
            ),
            entry(
                "the encoder reads the decoder's input",
                "your losses are those of an encoder run on tgt_in: the encoder reads the source, "
                "encoder_block(embed_tokens(src, ...)), and the decoder tgt_in.",
                encoder_reads_tgt=True,
            ),
            entry(
                "no teacher forcing (the decoder fed start tokens only)",
                "your losses are those of a decoder fed the start token at every position: in training it "
                "reads tgt_in, the true previous tokens behind the start token (teacher forcing).",
                start_only=True,
            ),
            *LOOP,
            *lr_ignored(1e-3),
        ],
    ),
    "selective_scan.train_selective_copy": (
        protocols.copy_losses,
        [
            entry(
                "state matrix with the wrong sign",
                "your losses are those of A = exp(A_log): A = -exp(A_log) keeps every eigenvalue negative, "
                "so the state decays; with the sign lost it grows at every step.",
                sign=True,
            ),
            entry(
                "readout at the wrong positions",
                "your losses are those of a readout of the first positions: the outputs are read at the "
                "markers, the last COPY_COUNT positions (y[:, -COPY_COUNT:]).",
                first=True,
            ),
            entry(
                "time-invariant model trained with selective=True",
                "your losses are those of the time-invariant model: with selective=True delta, B and C are "
                "u @ W.T + b at every position; only selective=False uses the constants.",
                invariant=True,
            ),
            entry("logits permuted before the reshape", CLASSES_MIXED, classes_mixed=True),
            entry(
                "B and C swapped",
                "your losses are those of selective_scan(u, delta, A, C, B, ...): B (from W_B) writes into "
                "the state, C (from W_C) reads it out.",
                bc_swapped=True,
            ),
            entry(
                "readout one position early",
                "your losses are those of y[:, -COPY_COUNT - 1:-1]: the outputs are read at the markers "
                "themselves, y[:, -COPY_COUNT:].",
                early=True,
            ),
            entry(
                "delta bias added twice",
                "your losses are those of b_delta added to delta again (delta_bias=b_delta): delta = "
                "u @ W_delta.T + b_delta already holds it.",
                bias_twice=True,
            ),
            entry(
                "A without its exponential",
                "your losses are those of A = -A_log: A = -exp(A_log).",
                no_exp=True,
            ),
            entry(
                "softplus left out of delta",
                "your losses are those of selective_scan without delta_softplus=True: the step size is "
                "softplus(delta), positive; the raw delta can be negative.",
                no_softplus=True,
            ),
            entry(
                "C built from B's parameters",
                "your losses are those of C equal to B (made from W_B, b_B): C is made from its own "
                "parameters, W_C and b_C (selective=False: b_C).",
                c_is_b=True,
            ),
            entry(
                "loss on the last output only",
                "your losses are those of the last position's logits against the last target: the loss is "
                "the mean over all COPY_COUNT outputs, logits.reshape(-1, M) against targets.reshape(-1).",
                last_only=True,
            ),
            *LOOP,
            *lr_ignored(1e-3),
        ],
    ),
    "rnn.train_char_rnn": (
        protocols.char_losses,
        [
            entry(
                "hidden state not carried across windows",
                "each window starts from the previous step's h_last (the stream goes on); only w == 0 "
                "starts from zeros.",
                carry=False,
            ),
            entry(
                "reset missing at w == 0",
                "when the window index wraps to 0 the streams start again: reset h to zeros there.",
                reset=False,
            ),
            entry(
                "clipping after the update (or not at all)",
                "clip the gradients first, then give the clipped ones to adam: clipping after the step changes nothing.",
                clipped=False,
            ),
            entry(
                "each gradient clipped on its own",
                "clip_grad_norm takes the list of all five gradients: one global norm, one common factor.",
                global_clip=False,
            ),
            entry(
                "Adam state not kept between steps",
                "keep each parameter's Adam state (m, v, step) from one step to the next; a fresh {} every "
                "step makes every update a first, bias-corrected step of size ~lr.",
                keep_adam=False,
            ),
            entry(
                "loss not divided by seq_len",
                "losses[s] = loss / seq_len: truncated_bptt sums over the window's steps; the lab reports "
                "nats per character.",
                per_char=False,
            ),
            entry(
                "state carried after the update instead of before",
                "your next window starts from the state of this window run again with the updated "
                "parameters: carry h_last as truncated_bptt returns it, computed before the update.",
                carried_after=True,
            ),
            entry(
                "streams cut the wrong way",
                "your streams take every batch_size-th token (tokens.reshape(L, batch_size).T): stream b is "
                "the contiguous slice tokens[b * L:(b + 1) * L], tokens[:batch_size * L].reshape(batch_size, L).",
                streams_across=True,
            ),
            entry(
                "targets not shifted",
                "your losses are those of a model trained to predict its own input: the targets are the next "
                "characters, window[:, 1:], the inputs window[:, :-1].",
                unshifted=True,
            ),
            entry(
                "inputs built from the targets",
                "your losses are those of a model that reads the character it must predict: the inputs are "
                "window[:, :-1], one-hot, and the targets window[:, 1:].",
                inputs_are_targets=True,
            ),
            entry(
                "truncation length 1 instead of seq_len",
                "your losses are those of truncated_bptt(..., 1): the gradient flows through the whole window, "
                "truncated_bptt(x, y, h, theta, seq_len).",
                chunk_one=True,
            ),
            entry(
                "streams cut the wrong way",
                "your streams overlap: stream b starts at token b (tokens[b:b + L]); it is the contiguous "
                "slice tokens[b * L:(b + 1) * L], L = len(tokens) // batch_size.",
                streams_overlap=True,
            ),
            entry(
                "one window too many (L // seq_len)",
                "your losses are those of W = L // seq_len windows: the last window needs one more token for "
                "its last target, so W = (L - 1) // seq_len (the two differ when L is a multiple of seq_len).",
                windows_plus=True,
            ),
            entry(
                "clip ignored",
                "your losses are those of gradients clipped at the default 5.0, not at the clip you are given: "
                "clip_grad_norm(grads, clip).",
                clip_used=5.0,
            ),
            AFTER,
            *lr_ignored(1e-3, 1e-2),
        ],
    ),
}
