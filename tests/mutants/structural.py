"""Wrong functions that no grader's table lists, one per class of mistake the feedback names by
its structure (seqlab.grading.diagnose): written from the classes, not from any grader's
variants, each as the reference's own code with one edit. ``hint`` is a phrase the feedback of
that function must contain; ``where`` says whether it is in the hint ("hint") or the message
("output", a located but unnamed error)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tests.mutants import ROOT, Variant


@dataclass(frozen=True)
class Structural(Variant):
    where: str = "hint"


def _reference_def(function: str) -> str:
    module, name = function.split(".")
    source = (ROOT / "solutions" / f"{module}.py").read_text()
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return "\n".join(source.splitlines()[node.lineno - 1 : node.end_lineno]) + "\n"


def edited(function: str, description: str, old, new, hint: str, where: str = "hint") -> Structural:
    """The reference's ``function`` with ``old`` replaced by ``new`` (or each of a tuple of edits)."""
    source = _reference_def(function)
    for before, after in zip(*((old, new) if isinstance(old, tuple) else ((old,), (new,)))):
        assert source.count(before) == 1, f"{function}: {before!r} is not in the reference exactly once"
        source = source.replace(before, after)
    return Structural(function, description, source, hint, where=where)


STRUCTURAL = [
    edited("rnn.rnn_cell", "input term dropped", "x @ W_xh.T + h_prev", "h_prev", "computed with x = 0"),
    edited(
        "rnn.rnn_forward",
        "states returned in reverse time order",
        "stack(hs, dim=1)",
        "stack(hs[::-1], dim=1)",
        "reversed along axis 1",
    ),
    edited(
        "rnn.softmax_cross_entropy",
        "sum over rows divided by C",
        "(log_z - target_logit).mean()",
        "(log_z - target_logit).sum() / logits.shape[1]",
        "N/C",
    ),
    edited(
        "rnn.rnn_bptt",
        "W_hy gradient built transposed",
        '"btc,bth->ch", d_logits',
        '"btc,bth->hc", d_logits',
        "permuted to dims (1, 0)",
    ),
    edited(
        "rnn.birnn_forward",
        "forward RNN started from h0_bwd",
        "fwd = rnn_forward(x, h0_fwd",
        "fwd = rnn_forward(x, h0_bwd",
        "axis 2 (size",
        where="output",
    ),
    edited(
        "rnn.greedy_decode",
        "the start token fed back at every step",
        "embedding[token]",
        "embedding[start_token]",
        "axis 1 (size",
        where="output",
    ),
    edited("lstm_gru.gru_cell", "input bias b_ih dropped", "x @ W_ih.T + b_ih", "x @ W_ih.T", "b_ih = 0"),
    edited(
        "lstm_gru.lstm_forward",
        "hs stacked in reverse time order",
        "stack(hs, dim=1)",
        "stack(hs[::-1], dim=1)",
        "reversed along axis 1",
    ),
    edited(
        "attention.additive_attention",
        "weights returned transposed (S, B)",
        "return context, weights",
        "return context, weights.T",
        "permuted to dims (1, 0)",
    ),
    edited(
        "attention.multi_head_attention",
        "heads split by a reshape",
        ".view(B, n, num_heads, dh).transpose(1, 2)",
        ".reshape(B, num_heads, n, dh)",
        "without the transpose",
    ),
    edited("positional.embed_tokens", "positional encoding not added", " + pe[:T]", "", "pe = 0"),
    edited("transformer.layer_norm", "shift beta left out", "* weight + bias", "* weight", "bias = 0"),
    edited("transformer.feed_forward", "first bias left out", "x @ W1.T + b1", "x @ W1.T", "b1 = 0"),
    edited(
        "selective_scan.selective_scan",
        "delta_bias ignored",
        "delta = delta + delta_bias",
        "delta = delta",
        "delta_bias = 0",
    ),
    edited(
        "optimizers.adam",
        "step counter stored one ahead (values right)",
        ('t = state.get("step", 0) + 1', '{"step": t, "m": m,'),
        ('t = state.get("step", 1)', '{"step": t + 1, "m": m,'),
        "off by +1",
        where="output",
    ),
]
STRUCTURAL.append(
    edited(
        "optimizers.sgd_momentum",
        "velocity stored scaled by lr (every w right)",
        ('v = momentum * state["velocity"] + dw', "v = dw.clone()", 'return w - lr * v, {"velocity": v}'),
        ('v = momentum * state["velocity"] + lr * dw', "v = lr * dw", 'return w - v, {"velocity": v}'),
        "only state_next is not: half the points",
        where="output",
    )
)

# One per class seqlab.grading.rewrite names by the reference's own structure (each a function of
# its own: they are graded together in one submission, apart from STRUCTURAL).
REWRITTEN = [
    edited(
        "lstm_gru.lstm_cell",
        "forget gate used without its sigmoid",
        "torch.sigmoid(f) * c_prev",
        "f * c_prev",
        "sigmoid is left out",
    ),
    edited(
        "lstm_gru.gru_cell",
        "input term added after the tanh",
        "n = torch.tanh(i_n + r * h_n)",
        "n = torch.tanh(r * h_n) + i_n",
        "a term is added after tanh instead of inside it",
    ),
    edited(
        "optimizers.adam",
        "first moment not bias-corrected",
        "m_hat = m / (1 - beta1**t)",
        "m_hat = m",
        "a factor is left out: the division by",
    ),
    edited(
        "optimizers.sgd",
        "learning rate applied twice",
        "w - lr * dw",
        "w - lr * lr * dw",
        "the same factor is applied twice: the multiplication by",
    ),
    # the class "a number doubled or halved" (seqlab.grading.edits.factor_two): not a scale of the
    # whole output (pe is added after it), so only the rewrite can say which number it is
    edited(
        "positional.embed_tokens",
        "embedding scaled by 2 * sqrt(d)",
        "embedding[tokens] * math.sqrt(d)",
        "embedding[tokens] * (2 * math.sqrt(d))",
        "twice the",
    ),
    # the class "a transpose done as a reshape" (seqlab.grading.edits.as_reshape), at one place
    edited(
        "attention.scaled_dot_product_attention",
        "keys transposed by a reshape",
        "q @ k.transpose(-2, -1)",
        "q @ k.reshape(*k.shape[:-2], k.shape[-1], k.shape[-2])",
        "a reshape where a transpose belongs",
    ),
    edited(
        "transformer.decoder_block",
        "post-LN cross-attention residual taken from the block input",
        ('x = norm(x + sa(x), "norm1")\n    x = norm(x + ca(x), "norm2")',),
        ('y = norm(x + sa(x), "norm1")\n    x = norm(x + ca(y), "norm2")',),
        "x is used where the result of layer_norm belongs",
    ),
]
