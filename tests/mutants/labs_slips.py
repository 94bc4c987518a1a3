"""More known-wrong training loops for the recall, reverser and selective-copy labs: the slips a
student makes in the loop itself (the learning rate, the update, what is trained), each cut from
the correct loops of tests/mutants/labs_tasks.py and each naming the slip its failed run must be
named by (``hint``: the slip's name, as tests/mutants/labs_tasks.py's mutants do)."""

from __future__ import annotations

from tests.mutants import Mutant
from tests.mutants.labs_tasks import TASK_ALTERNATIVES, TASK_MUTANTS, _mutant

RECALL, REVERSER, COPY = "lstm_gru.train_recall", "transformer.train_reverser", "selective_scan.train_selective_copy"


def _cut(source: str, function: str, description: str, slip: str, *replacements: tuple[str, str]) -> Mutant:
    for old, new in replacements:
        assert old in source, old
        source = source.replace(old, new)
    return Mutant(function, description, source, hint=slip)


_RECALL_BACKWARD = next(a.source for a in TASK_ALTERNATIVES if a.function == RECALL)

SLIP_MUTANTS = [
    _mutant(
        RECALL,
        "learning rate not passed to adam",
        "learning rate ignored",
        ("adam(w.detach(), dw, states[name], lr=lr)", "adam(w.detach(), dw, states[name])"),
    ),
    _mutant(
        RECALL,
        "the updated parameters never written back",
        "the parameters never changed",
        ("params[name], states[name] = adam(", "_, states[name] = adam("),
    ),
    _cut(
        _RECALL_BACKWARD,
        RECALL,
        "gradients accumulated across steps (never zeroed)",
        "gradients accumulated across steps",  # its replay alone follows its losses
        ("        for w in theta:\n            w.grad = None\n", ""),
    ),
    _mutant(
        REVERSER,
        "the updated parameters never written back",
        "the parameters never changed",
        ("flat[path], states[path] = adam(", "_, states[path] = adam("),
    ),
    _mutant(
        REVERSER,
        "cross-attention to the decoder's own input, the crash silenced with allow_unused",
        "the encoder never trained",  # and the loss never reads it: its output reaches nothing
        ('memory, p["decoder"]', 'embed_tokens(tgt_in, table, pe), p["decoder"]'),
        ("list(flat.values()))", "list(flat.values()), allow_unused=True)"),
        (
            "        for (path, w), dw in zip(list(flat.items()), grads):\n",
            "        for (path, w), dw in zip(list(flat.items()), grads):\n            if dw is None:\n                continue\n",
        ),
    ),
    _mutant(
        REVERSER,
        "each update taken from the initial weights",
        "each update taken from the initial weights",
        (
            "    states = {path: {} for path in flat}\n",
            "    states = {path: {} for path in flat}\n    first = dict(flat)\n",
        ),
        ("flat[path], states[path] = adam(w.detach(),", "flat[path], states[path] = adam(first[path].detach(),"),
    ),
    _mutant(
        REVERSER,
        "only the top-level tensors updated (the nested blocks left as sent)",
        "the nested parameters never trained",
        (
            "            flat[path], states[path] = adam(w.detach(), dw, states[path], lr=lr)\n",
            "            if len(path) == 1:\n"
            "                flat[path], states[path] = adam(w.detach(), dw, states[path], lr=lr)\n"
            "            else:\n"
            "                flat[path] = w.detach()\n",
        ),
    ),
    # A loop that leaves only the encoder out of the update is no mutant: it passes the bounds
    # (exact match 0.984 on seed 0, the embedding and the decoder reverse through a random
    # encoder), so no grading names it; the slip's explanation for it is shown on evidence
    # alone (tests/labs/test_lab_slips.py, the frozen encoder the loss reads).
    _mutant(
        COPY,
        "learning rate not passed to adam",
        "learning rate ignored",
        ("adam(params[name], dw, states[name], lr=lr)", "adam(params[name], dw, states[name])"),
    ),
    _mutant(
        COPY,
        "each update taken from the initial weights",
        "each update taken from the initial weights",
        (
            "    states = {name: {} for name in trained}\n",
            "    states = {name: {} for name in trained}\n    first = dict(params)\n",
        ),
        ("adam(params[name], dw,", "adam(first[name].detach(), dw,"),
    ),
    _mutant(
        COPY,
        "delta a learned constant (time-invariant step size) in the selective model",
        "the loss never uses a parameter",  # autograd.grad stops at the unused W_delta
        ('delta, B, C = u @ p["W_delta"].T + p["b_delta"],', 'delta, B, C = p["b_delta"].expand(*u.shape[:2], -1),'),
    ),
    _mutant(
        COPY,
        "delta a learned constant in the selective model, the crash silenced with allow_unused",
        "time-invariant delta in the selective model",
        ('delta, B, C = u @ p["W_delta"].T + p["b_delta"],', 'delta, B, C = p["b_delta"].expand(*u.shape[:2], -1),'),
        ("[p[name] for name in trained])", "[p[name] for name in trained], allow_unused=True)"),
        (
            "        for name, dw in zip(trained, grads):\n",
            "        for name, dw in zip(trained, grads):\n            if dw is None:\n                continue\n",
        ),
    ),
]

_COPY_BACKWARD = next(a.source for a in TASK_ALTERNATIVES if a.function == COPY)
_REVERSER_BACKWARD = next(a.source for a in TASK_ALTERNATIVES if a.function == REVERSER)

# The slips of the differential replay's catalogue (seqlab/labs/differential.py), each written
# as a student would make it, in the base loops and in the alternative loops' other styles.
REPLAYED_MUTANTS = [
    _mutant(
        RECALL,
        "the readout averages the states over time",
        "readout pools the states instead of taking the last",
        ("logits = h_T @", "logits = hs.mean(dim=1) @"),
    ),
    _mutant(
        RECALL,
        "the model's softmax probabilities given to the loss (a double softmax)",
        "probabilities given to the loss as logits (a double softmax)",
        ("loss = softmax_cross_entropy(logits,", "loss = softmax_cross_entropy(torch.softmax(logits, dim=-1),"),
    ),
    _cut(
        _RECALL_BACKWARD,
        RECALL,
        "the loss recomputed after the update and recorded",
        "losses recorded after the update",
        ("        history[s] = loss.detach()\n", "        history[s] = F.cross_entropy(h_after(x), first).detach()\n"),
        (
            "    for s in range(steps):\n",
            "    def h_after(x):\n"
            "        with torch.no_grad():\n"
            "            p = dict(zip(names, theta))\n"
            '            h = torch.zeros(batch_size, p["W_hh"].shape[1], dtype=x.dtype)\n'
            "            for t in range(lag + 1):\n"
            '                h = gru_cell(x[:, t], h, p["W_ih"], p["W_hh"], p["b_ih"], p["b_hh"])\n'
            '            return h @ p["W_y"].T + p["b_y"]\n'
            "    for s in range(steps):\n",
        ),
    ),
    _mutant(
        RECALL,
        "the batch drawn without the generator",
        "generator not passed on",
        ("tokens = recall_batch(K, batch_size, lag, generator)", "tokens = recall_batch(K, batch_size, lag)"),
    ),
    _mutant(
        REVERSER,
        "the decoder called with its two inputs swapped",
        "the decoder's two inputs swapped",
        (
            "decoder_block(embed_tokens(tgt_in, table, pe), memory,",
            "decoder_block(memory, embed_tokens(tgt_in, table, pe),",
        ),
    ),
    _mutant(
        REVERSER,
        "the logits permuted to (B, vocab, T) before the reshape",
        "logits permuted before the reshape",
        (
            "softmax_cross_entropy(logits.reshape(-1, vocab),",
            "softmax_cross_entropy(logits.permute(0, 2, 1).reshape(-1, vocab),",
        ),
    ),
    _cut(
        _REVERSER_BACKWARD,
        REVERSER,
        "gradients accumulated across steps (never zeroed)",
        "gradients accumulated across steps",
        ("        for w in flat.values():\n            w.grad = None\n", ""),
    ),
    _cut(
        _REVERSER_BACKWARD,
        REVERSER,
        "the source drawn from torch's global generator",
        "generator not passed on",
        (
            "src = torch.randint(0, vocab, (batch_size, seq_len), generator=generator)",
            "src = torch.randint(0, vocab, (batch_size, seq_len))",
        ),
    ),
    _cut(
        _COPY_BACKWARD,
        COPY,
        "the logits permuted to (B, M, COPY_COUNT) before the reshape",
        "logits permuted before the reshape",
        (
            "copy_logits(w, tokens, selective).reshape(-1, M)",
            "copy_logits(w, tokens, selective).permute(0, 2, 1).reshape(-1, M)",
        ),
    ),
    _mutant(
        COPY,
        "the skip term D left out of the scan, the crash silenced with allow_unused",
        "some parameters never changed",  # D, which the loss never reads: named exactly, first
        ('B, C, p["D"], delta_softplus=True)', "B, C, delta_softplus=True)"),
        ("[p[name] for name in trained])", "[p[name] for name in trained], allow_unused=True)"),
        (
            "        for name, dw in zip(trained, grads):\n",
            "        for name, dw in zip(trained, grads):\n            if dw is None:\n                continue\n",
        ),
    ),
    _cut(
        _COPY_BACKWARD,
        COPY,
        "the loss of the updated weights recorded",
        "losses recorded after the update",
        (
            "        out.append(float(loss.detach()))\n",
            "        with torch.no_grad():\n"
            "            loss = F.cross_entropy(copy_logits(w, tokens, selective).reshape(-1, M), (data - 1).reshape(-1))\n"
            "        out.append(float(loss))\n",
        ),
    ),
]

# The catalogue's entries grown from the blind bank of lab mistakes (tests/labs/blind_slips/),
# each written again here in the base loops, by hand, not copied from the bank's entries.
GROWN_MUTANTS = [
    _mutant(
        RECALL,
        "a fresh Adam state at every step",
        "Adam state not kept between steps",
        ("adam(w.detach(), dw, states[name], lr=lr)", "adam(w.detach(), dw, {}, lr=lr)"),
    ),
    _mutant(
        RECALL,
        "the token to remember left out of the input",
        "the token to remember cut from the input",
        ("x = F.one_hot(tokens, K)", "x = F.one_hot(tokens[:, 1:], K)"),
    ),
    _mutant(
        RECALL,
        "sequences of lag + 2 tokens drawn",
        "one distractor too many (lag + 1)",
        ("recall_batch(K, batch_size, lag, generator)", "recall_batch(K, batch_size, lag + 1, generator)"),
    ),
    _mutant(
        REVERSER,
        "one batch drawn before the loop",
        "one batch reused at every step",
        (
            "    for _ in range(steps):\n        src, tgt_in, tgt = reverser_batch(batch_size, seq_len, vocab, generator)\n",
            "    src, tgt_in, tgt = reverser_batch(batch_size, seq_len, vocab, generator)\n    for _ in range(steps):\n",
        ),
    ),
    _mutant(
        REVERSER,
        "logits[:, :-1] against tgt[:, 1:]",
        "targets shifted twice",
        (
            "softmax_cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1))",
            "softmax_cross_entropy(logits[:, :-1].reshape(-1, vocab), tgt[:, 1:].reshape(-1))",
        ),
    ),
    _mutant(
        REVERSER,
        "the encoder under a causal mask",
        "causal mask on the encoder",
        ('p["encoder"], REVERSER_HEADS)', 'p["encoder"], REVERSER_HEADS, causal_mask(seq_len))'),
    ),
    _mutant(
        REVERSER,
        "the logits transposed to (T, B, vocab) before flattening",
        "logits flattened time-major",
        (
            "softmax_cross_entropy(logits.reshape(-1, vocab),",
            "softmax_cross_entropy(logits.transpose(0, 1).reshape(-1, vocab),",
        ),
    ),
    _mutant(
        REVERSER,
        "the encoder reads tgt_in and the decoder the source",
        "source and decoder input swapped",
        ("encoder_block(embed_tokens(src, table, pe)", "encoder_block(embed_tokens(tgt_in, table, pe)"),
        ("decoder_block(embed_tokens(tgt_in, table, pe)", "decoder_block(embed_tokens(src, table, pe)"),
    ),
    _mutant(
        REVERSER,
        "both blocks pre-LN",
        "pre-LN blocks instead of post-LN",
        ('p["encoder"], REVERSER_HEADS)', 'p["encoder"], REVERSER_HEADS, norm_first=True)'),
        ("REVERSER_HEADS, causal=True)", "REVERSER_HEADS, causal=True, norm_first=True)"),
    ),
    _mutant(
        COPY,
        "the gradient negated before adam",
        "gradient ascent (the gradient's sign flipped)",
        ("adam(params[name], dw, states[name], lr=lr)", "adam(params[name], -dw, states[name], lr=lr)"),
    ),
    _mutant(
        COPY,
        "the mean of the losses so far recorded",
        "losses recorded as a running mean",
        ("    losses = []\n", "    losses, raw = [], []\n"),
        (
            "        losses.append(loss.detach())\n",
            "        raw.append(loss.detach())\n        losses.append(torch.stack(raw).mean())\n",
        ),
    ),
    _mutant(
        COPY,
        "B and C passed to the scan swapped",
        "B and C swapped",
        ('-torch.exp(p["A_log"]), B, C,', '-torch.exp(p["A_log"]), C, B,'),
    ),
    _mutant(
        COPY,
        "the readout one position before the markers",
        "readout one position early",
        ("y[:, -COPY_COUNT:]", "y[:, -COPY_COUNT - 1 : -1]"),
    ),
    _mutant(
        COPY,
        "b_delta passed again as delta_bias",
        "delta bias added twice",
        ('p["D"], delta_softplus=True)', 'p["D"], delta_bias=p["b_delta"], delta_softplus=True)'),
    ),
    _mutant(
        COPY,
        "A = -A_log, the exponential forgotten",
        "A without its exponential",
        ('-torch.exp(p["A_log"])', '-p["A_log"]'),
    ),
]

# Every known-wrong loop of the three labs, with the slip it must be named by.
NAMED_MUTANTS = TASK_MUTANTS + SLIP_MUTANTS + REPLAYED_MUTANTS + GROWN_MUTANTS
