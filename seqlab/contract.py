"""The student-facing contract as data: the functions (30 exercises and the labs), their modules
and signatures.

Graders, the stub builder, the release, the nbgrader course and the tests all read the list of
functions from here, so a function added to the course is added in one place. Each function's
full contract (the math, every argument's shape and dtype, the PyTorch built-in it must agree
with) is the docstring of its reference in ``solutions/<module>.py``, copied verbatim into the
stub students get. A signature here never changes once students have it.
"""

from __future__ import annotations

MODULES = (
    "optimizers",
    "rnn",
    "lstm_gru",
    "attention",
    "positional",
    "transformer",
    "selective_scan",
)

# qualified name -> the signature exactly as the contract states it (parameters only).
SIGNATURES: dict[str, str] = {
    "optimizers.sgd": "(w, dw, state, lr=0.01)",
    "optimizers.sgd_momentum": "(w, dw, state, lr=0.01, momentum=0.9)",
    "optimizers.adagrad": "(w, dw, state, lr=0.01, eps=1e-10)",
    "optimizers.rmsprop": "(w, dw, state, lr=0.01, alpha=0.99, eps=1e-08)",
    "optimizers.adam": "(w, dw, state, lr=0.001, betas=(0.9, 0.999), eps=1e-08)",
    "optimizers.clip_grad_norm": "(grads, max_norm)",
    "rnn.rnn_cell": "(x, h_prev, W_xh, W_hh, b_h)",
    "rnn.rnn_forward": "(x, h0, W_xh, W_hh, b_h)",
    "rnn.softmax_cross_entropy": "(logits, targets)",
    "rnn.rnn_bptt": "(x, targets, h0, params)",
    "rnn.truncated_bptt": "(x, targets, h0, params, chunk)",
    "rnn.birnn_forward": "(x, h0_fwd, h0_bwd, params_fwd, params_bwd)",
    "rnn.greedy_decode": "(params, embedding, h0, start_token, steps)",
    "rnn.train_char_rnn": "(tokens, params, steps, batch_size, seq_len, lr=0.01, clip=5.0)",
    "rnn.sample_chars": "(params, start_token, steps, temperature=1.0, generator=None)",
    "lstm_gru.lstm_cell": "(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh)",
    "lstm_gru.lstm_forward": "(x, h0, c0, W_ih, W_hh, b_ih, b_hh)",
    "lstm_gru.gru_cell": "(x, h_prev, W_ih, W_hh, b_ih, b_hh)",
    "lstm_gru.gru_forward": "(x, h0, W_ih, W_hh, b_ih, b_hh)",
    "lstm_gru.input_gradient_norms": "(kind, x, h0, params)",
    "lstm_gru.train_recall": "(kind, params, steps, batch_size, lag, lr=0.01, generator=None)",
    "attention.additive_attention": "(query, keys, W_q, W_k, v, mask=None)",
    "attention.scaled_dot_product_attention": "(q, k, v, mask=None)",
    "attention.causal_mask": "(T, device=None)",
    "attention.multi_head_attention": "(query, key, value, params, num_heads, mask=None)",
    "positional.sinusoidal_encoding": "(num_positions, d_model, device=None, dtype=torch.float32)",
    "positional.embed_tokens": "(tokens, embedding, pe)",
    "transformer.layer_norm": "(x, weight, bias, eps=1e-05)",
    "transformer.feed_forward": "(x, W1, b1, W2, b2)",
    "transformer.encoder_block": "(x, params, num_heads, mask=None, norm_first=False)",
    "transformer.decoder_block": (
        "(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False)"
    ),
    "transformer.train_reverser": "(params, steps, batch_size, seq_len, vocab, lr=0.001, generator=None)",
    "selective_scan.discretize": "(delta, A, B)",
    "selective_scan.linear_scan": "(a, b, h0=None)",
    "selective_scan.selective_scan": (
        "(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False)"
    ),
    "selective_scan.train_selective_copy": "(params, steps, batch_size, selective=True, lr=0.001, generator=None)",
}

FUNCTIONS: tuple[str, ...] = tuple(SIGNATURES)

# The functions of the curriculum's "Labs" section: a topic's functions put together. `seqlab
# grade --no-labs` leaves them out (the lab training costs seconds of CPU per submission), and
# so do the project's own tests unless they test a lab; EXERCISES are the rest.
LABS: tuple[str, ...] = (
    "rnn.train_char_rnn",
    "rnn.sample_chars",
    "lstm_gru.input_gradient_norms",
    "lstm_gru.train_recall",
    "transformer.train_reverser",
    "selective_scan.train_selective_copy",
)
EXERCISES: tuple[str, ...] = tuple(name for name in FUNCTIONS if name not in LABS)


def functions_of(module: str) -> list[str]:
    """Qualified names of the contract functions in ``module``, in contract order."""
    return [name for name in FUNCTIONS if split(name)[0] == module]


def split(qualname: str) -> tuple[str, str]:
    """``"attention.causal_mask"`` -> ``("attention", "causal_mask")``; KeyError for a name that is
    not a contract function, so a typo fails where it is made."""
    module, _, function = qualname.partition(".")
    if module not in MODULES or qualname not in SIGNATURES:
        raise KeyError(f"{qualname!r} is not a contract function")
    return module, function


# "Calls between functions" (shared/curriculum.md): the only calls from one contract function
# to another that get a correct callee during grading, and only where the student's call is one
# the reference itself makes on the test's own inputs (seqlab.student.recording). Any other call
# between contract functions runs the student's own code.
DECLARED_CALLEES: dict[str, tuple[str, ...]] = {
    "rnn.rnn_forward": ("rnn.rnn_cell",),
    "rnn.rnn_bptt": ("rnn.rnn_forward", "rnn.softmax_cross_entropy"),
    "rnn.truncated_bptt": ("rnn.rnn_forward", "rnn.rnn_bptt"),
    "rnn.birnn_forward": ("rnn.rnn_forward",),
    "rnn.greedy_decode": ("rnn.rnn_cell",),
    "lstm_gru.lstm_forward": ("lstm_gru.lstm_cell",),
    "lstm_gru.gru_forward": ("lstm_gru.gru_cell",),
    "attention.multi_head_attention": ("attention.scaled_dot_product_attention",),
    "transformer.encoder_block": (
        "attention.multi_head_attention",
        "transformer.layer_norm",
        "transformer.feed_forward",
    ),
    "transformer.decoder_block": (
        "attention.multi_head_attention",
        "transformer.layer_norm",
        "transformer.feed_forward",
        "attention.causal_mask",
    ),
    "selective_scan.selective_scan": ("selective_scan.discretize", "selective_scan.linear_scan"),
}


def declared_callees(qualname: str) -> tuple[str, ...]:
    """The contract functions ``qualname`` may call and get a correct callee for (maybe none)."""
    return DECLARED_CALLEES.get(qualname, ())
