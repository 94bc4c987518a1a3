"""What a notebook's lab section calls: the course's task, a progress bar, and the plots.

Runs in the student's kernel on the student's own functions; it never reads the solutions. The
reference's band (its loss curves on a few task instances) is computed when the course is built
(``reference_band``) and written into the notebook as numbers.
"""

from __future__ import annotations

import contextlib
import sys
from functools import cache

import torch

from . import char_rnn, corpus

NOTEBOOK_SEED = 0  # the notebook's task instance; the grader draws its own per grading
BAND_SEEDS = range(3)


def char_rnn_task(seed: int = NOTEBOOK_SEED) -> tuple[dict, dict]:
    """``(child_inputs, decoding)``: the lab's inputs as the grader would send them, and what is
    needed to turn token ids back into text (the instance's permutation)."""
    inputs, heldout = char_rnn.draw_task(seed)
    return inputs, {"permutation": heldout["permutation"], "heldout": heldout}


def text_of(tokens, decoding: dict) -> str:
    return corpus.decode(tokens, decoding["permutation"])


def heldout_cross_entropy(params: dict, decoding: dict) -> float:
    return char_rnn.cross_entropy(params, decoding["heldout"]["tokens"])


def notebook_values(topic: str) -> dict:
    """The numbers a topic's lab cell is written with (trusted side, when the course is built)."""
    return {"band": reference_band()} if topic == "rnn" else {}


@cache
def reference_band() -> dict[str, list[float]]:
    """The reference's training losses on ``BAND_SEEDS``: per step the lowest and highest
    (trusted side: run when the course is built)."""
    runs = [char_rnn.reference_run(char_rnn.draw_task(seed)[0])[1] for seed in BAND_SEEDS]
    stacked = torch.stack(runs)
    return {
        "low": [round(float(v), 4) for v in stacked.min(0).values],
        "high": [round(float(v), 4) for v in stacked.max(0).values],
    }


def _homes(namespace: dict, name: str) -> list[dict]:
    """Where the notebook's ``name`` is bound: its ``namespace`` (its globals), and the modules of
    its stand-in package (``__package__``, seqlab.nbgrader.provided), which a lab's own
    ``from .optimizers import adam`` inside the function reads."""
    package = namespace.get("__package__")
    homes = [namespace] + [
        vars(module)
        for key, module in list(sys.modules.items())
        if package and key.startswith(f"{package}.") and module is not None
    ]
    found = [home for home in homes if name in home]
    if not found:
        raise KeyError(f"no {name} in the notebook")
    return found


@contextlib.contextmanager
def progress(namespace: dict, name: str, total: int, label: str = "training"):
    """A text progress bar while ``name`` (e.g. ``adam``) is called about ``total`` times: the
    function is wrapped for the duration, then put back, wherever the notebook has it
    (``_homes``). The bar is full when the training returns (a loop may call ``adam`` a little
    less often than estimated: a time-invariant model leaves three weights alone). Torch runs on
    one thread meanwhile: the lab's tensors are tiny, and intra-op threads only add barrier
    waits (a lab cell took five times as long with two threads on a busy 2-core machine)."""
    homes = _homes(namespace, name)
    count = [0]

    def counting(own):
        def counted(*args, **kwargs):
            count[0] += 1
            if count[0] % max(1, total // 50) == 0 or count[0] == total:
                done = min(1.0, count[0] / total)
                sys.stdout.write(f"\r{label} [{'#' * int(40 * done):40s}] {100 * done:5.1f}%")
                sys.stdout.flush()
            return own(*args, **kwargs)

        return counted

    kept = [(home, home[name]) for home in homes]
    for home, own in kept:
        home[name] = counting(own)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    finished = False
    try:
        yield
        finished = True
    finally:
        torch.set_num_threads(threads)
        for home, function in kept:
            home[name] = function
        if finished:
            sys.stdout.write(f"\r{label} [{'#' * 40}] 100.0%")
        sys.stdout.write("\n")


def plot_losses(losses, band: dict | None = None, ax=None):
    import matplotlib.pyplot as plt

    ax = ax or plt.figure(figsize=(7, 3)).add_subplot()
    steps = range(len(losses))
    if band:
        ax.fill_between(range(len(band["low"])), band["low"], band["high"], color="#8a93a6", alpha=0.4,
                        label="reference, 3 task instances")  # fmt: skip
    ax.plot(steps, [float(v) for v in losses], color="#2f6fcf", label="your training")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (nats/char)")
    ax.legend(frameon=False)
    ax.figure.tight_layout()
    return ax


def gradient_norm_inputs(T: int = 40, H: int = 32, D: int = 8, seed: int = 0) -> tuple:
    """``x, h0`` and a parameter dict per cell for the gradient-norm plot: the same input, weights
    of PyTorch's default scale (uniform in +-1/sqrt(H)), the LSTM's forget gate biased open."""
    g = torch.Generator().manual_seed(seed)

    def uniform(*shape):
        return (torch.rand(*shape, generator=g, dtype=torch.float64) * 2 - 1) / H**0.5

    x, h0 = torch.randn(1, T, D, generator=g, dtype=torch.float64), torch.zeros(1, H, dtype=torch.float64)
    params = {"rnn": {"W_xh": uniform(H, D), "W_hh": uniform(H, H), "b_h": uniform(H)}}
    for kind, gates in (("lstm", 4), ("gru", 3)):
        params[kind] = {"W_ih": uniform(gates * H, D), "W_hh": uniform(gates * H, H)}
        params[kind].update(b_ih=uniform(gates * H), b_hh=uniform(gates * H))
    params["lstm"]["b_ih"][H : 2 * H] += 1.0  # the forget gate's usual initial bias
    return x, h0, params


def plot_gradient_norms(norms: dict, ax=None):
    """``norms``: kind -> ``(T,)`` norms, on one log axis against the distance from the end."""
    import matplotlib.pyplot as plt

    ax = ax or plt.figure(figsize=(7, 3)).add_subplot()
    for kind, values in norms.items():
        ax.semilogy(range(len(values)), [max(float(v), 1e-30) for v in values], label=kind.upper())
    ax.set_xlabel("input time step t (T is the last)")
    ax.set_ylabel("||d sum(h_T) / d x_t||")
    ax.legend(frameon=False)
    ax.figure.tight_layout()
    return ax


# --- the other labs' cells: every function passed in is the notebook's (the student's) own ------


def recall_against_lag(
    train_recall, recall_logits, recall_batch, lags=(8, 24), kinds=("rnn", "lstm", "gru"), namespace=None
):
    """Held-out recall accuracy per cell and lag, with the student's functions throughout (the
    task's sizes and initial weights, seqlab.labs.recall). ``namespace``: the notebook's
    ``globals()``, for a progress bar over its ``adam`` calls (one per parameter and step)."""
    from . import recall

    K = recall.K
    out = {}
    if namespace is not None:
        g = torch.Generator()
        total = len(lags) * recall.STEPS * sum(len(recall.initial_params(kind, g)) for kind in kinds)
        with progress(namespace, "adam", total, label=f"{len(kinds) * len(lags)} trainings"):
            return recall_against_lag(train_recall, recall_logits, recall_batch, lags, kinds)
    for kind in kinds:
        out[kind] = []
        for lag in lags:
            gen = torch.Generator().manual_seed(1000 + lag)
            params, _ = train_recall(
                kind, recall.initial_params(kind, gen), recall.STEPS, recall.BATCH, lag, recall.LR, gen
            )
            tokens = recall_batch(K, 1000, lag, torch.Generator().manual_seed(7))
            with torch.no_grad():
                logits = recall_logits(kind, params, torch.nn.functional.one_hot(tokens, K).to(torch.float32))
            out[kind].append(float((logits.argmax(-1) == tokens[:, 0]).float().mean()))
    return {"lags": list(lags), "accuracy": out, "chance": 1 / (K // 2)}


def plot_against_lag(result: dict, ax=None):
    import matplotlib.pyplot as plt

    ax = ax or plt.figure(figsize=(7, 3)).add_subplot()
    for kind, values in result["accuracy"].items():
        ax.plot(result["lags"], values, marker="o", label=kind.upper())
    ax.axhline(result["chance"], color="#8a93a6", linestyle="--", label="chance")
    ax.set_xlabel("lag (distractors to remember across)")
    ax.set_ylabel("held-out recall accuracy")
    ax.legend(frameon=False)
    ax.figure.tight_layout()
    return ax


def plot_heatmaps(weights, ax_row=None):
    """Cross-attention weights ``(examples, T, S)`` as heatmaps: the anti-diagonal is reversal."""
    import matplotlib.pyplot as plt

    weights = torch.as_tensor(weights)
    fig, axes = plt.subplots(1, weights.shape[0], figsize=(2.2 * weights.shape[0], 2.4))
    for ax, w in zip(list(getattr(axes, "flat", [axes])), weights):
        ax.imshow(w, cmap="Blues", vmin=0, vmax=1)
        ax.set_xlabel("source position")
        ax.set_ylabel("output position")
    fig.tight_layout()
    return axes


def plot_selectivity(accuracy: dict, chance: float, lengths, seconds: dict):
    """Selective against time-invariant accuracy, and the scan's time against T next to attention's."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3))
    left.bar(list(accuracy), list(accuracy.values()), color=["#2f6fcf", "#8a93a6"])
    left.axhline(chance, color="#b35c00", linestyle="--", label="chance")
    left.set_ylabel("held-out copy accuracy")
    left.legend(frameon=False)
    for name, values in seconds.items():
        right.loglog(lengths, values, marker="o", label=name)
    right.set_xlabel("sequence length T")
    right.set_ylabel("seconds per call")
    right.legend(frameon=False)
    fig.tight_layout()
    return left, right


def timings(scan, attention, lengths=(64, 128, 256, 512, 1024), width: int = 16, state: int = 8) -> dict:
    """Seconds per call of ``scan`` (a selective_scan) and ``attention`` (q, k, v) against T."""
    out: dict[str, list[float]] = {"scan": [], "attention": []}
    A = -torch.arange(1, state + 1, dtype=torch.float32).repeat(width, 1)
    for T in lengths:
        x, bc = torch.randn(1, T, width), torch.randn(1, T, state)
        out["scan"].append(_seconds(scan, x, x, A, bc, bc, delta_softplus=True))
        out["attention"].append(_seconds(attention, x, x, x))
    return out


def _seconds(fn, *args, **kwargs) -> float:
    import time

    fn(*args, **kwargs)  # warm-up
    started = time.perf_counter()
    for _ in range(3):
        fn(*args, **kwargs)
    return (time.perf_counter() - started) / 3


@torch.no_grad()
def cross_attention(params: dict, src: torch.Tensor, ns: dict) -> torch.Tensor:
    """The reverser decoder's cross-attention weights ``(B, T, S)`` on the true shifted targets,
    replayed with the notebook's own functions (``ns``: its globals), as seqlab.labs.reverser
    replays them with the reference's."""
    vocab = params["W_out"].shape[0]
    tgt_in = torch.cat([torch.full((src.shape[0], 1), vocab, dtype=torch.long), src.flip(1)[:, :-1]], dim=1)
    table, block = params["embedding"], params["decoder"]

    def own(name):
        return _homes(ns, name)[0][name]

    pe = own("sinusoidal_encoding")(src.shape[1], table.shape[1], dtype=table.dtype)
    memory = own("encoder_block")(own("embed_tokens")(src, table, pe), params["encoder"], 1)
    x = own("embed_tokens")(tgt_in, table, pe)
    mha = own("multi_head_attention")
    x = x + mha(x, x, x, block["self_attn"], 1, own("causal_mask")(x.shape[1]))[0]
    x = own("layer_norm")(x, block["norm1"]["weight"], block["norm1"]["bias"])
    return mha(x, memory, memory, block["cross_attn"], 1)[1][:, 0]
