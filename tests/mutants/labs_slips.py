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
        "",  # it learns worse, on batches the parent never sees: nothing specific to name it by
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

# Every known-wrong loop of the three labs, with the slip it must be named by.
NAMED_MUTANTS = TASK_MUTANTS + SLIP_MUTANTS
