"""What a lab's public test adds to a failure: the earlier functions the lab runs that failed
their own public tests in this run. A lab trains with your own functions (not correct copies),
so a bug in one of them fails the lab too; the failure then names it first, as the grader does.
Needs no torch: conftest.py fills RESULTS as the tests run.
"""

from __future__ import annotations

import functools

import pytest

# The earlier functions each lab runs (yours, not correct copies): when a lab's test fails and
# one of these failed its own public tests in the same run, the failure names it first.
LAB_USES = {
    "rnn.train_char_rnn": (
        "rnn.truncated_bptt", "rnn.rnn_bptt", "rnn.rnn_forward", "rnn.rnn_cell", "rnn.softmax_cross_entropy",
        "optimizers.clip_grad_norm", "optimizers.adam",
    ),
    "lstm_gru.train_recall": ("lstm_gru.gru_forward", "lstm_gru.gru_cell", "rnn.softmax_cross_entropy", "optimizers.adam"),
    "transformer.train_reverser": (
        "transformer.encoder_block", "transformer.decoder_block", "attention.multi_head_attention",
        "attention.scaled_dot_product_attention", "transformer.layer_norm", "transformer.feed_forward",
        "attention.causal_mask", "positional.embed_tokens", "positional.sinusoidal_encoding", "optimizers.adam",
    ),
    "selective_scan.train_selective_copy": (
        "selective_scan.selective_scan", "selective_scan.discretize", "selective_scan.linear_scan",
        "rnn.softmax_cross_entropy", "optimizers.adam",
    ),
}  # fmt: skip

# function -> {"passed": n, "total": n, ...}, filled by conftest.py as the tests run (in
# teaching order, a lab's after the functions it runs).
RESULTS: dict = {}


def lab_test(qualname: str):
    """Marks a lab's test: a failure of it starts by naming the functions of LAB_USES[qualname]
    whose own public tests failed earlier in this run (the lab runs them: fix those first), or
    the ones that did not run at all (run every test file to know)."""

    def wrap(test):
        @functools.wraps(test)
        def run(*args, **kwargs):
            __tracebackhide__ = True
            try:
                return test(*args, **kwargs)
            except pytest.fail.Exception as exc:
                note = _culprits(qualname)
                if not note:
                    raise
                message = f"{note}\n{exc.msg}"
            except Exception as exc:  # your code raised: its traceback, with the note under it
                note = _culprits(qualname)
                if note:
                    exc.add_note(note)
                raise
            pytest.fail(message, pytrace=False)  # out of the except: no "during handling" chain

        return run

    return wrap


def _culprits(qualname: str) -> str:
    uses = LAB_USES.get(qualname, ())
    failed = [f for f in uses if f in RESULTS and RESULTS[f]["passed"] < RESULTS[f]["total"]]
    if failed:
        return (
            f"{qualname} runs your own {', '.join(failed)}, which failed public tests of their own: "
            f"fix {'it' if len(failed) == 1 else 'those'} first"
        )
    untested = [f for f in uses if f not in RESULTS]
    if untested:
        return f"{qualname} runs your own {', '.join(untested)}, not tested in this run (run all the tests)"
    return ""
