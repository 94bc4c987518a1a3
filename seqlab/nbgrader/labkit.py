"""What a lab notebook's cells call, in the student's own kernel: shipped with the course.

`seqlab nbgrader` copies this file, unchanged, beside each lab notebook as ``seqlab_lab.py``,
with the numbers its lab needs (``seqlab_lab_data.pt``: the task instance, initial weights, the
reference's band, computed by seqlab when the course is written). It imports nothing but the
standard library, torch, and matplotlib when it draws: a student's kernel has no seqlab, and
this module must run there as it runs in the instructor's. It never reads the solutions; every
function it calls that a student writes is passed in, or found in the notebook's namespace.
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

import torch

DATA_FILE = "seqlab_lab_data.pt"
# How many lines a progress bar may print where it cannot redraw one in place (a plain
# terminal, a log): a quarter, a half, three quarters, done. A bar that printed every update
# filled 51 lines of a notebook's saved output.
PLAIN_UPDATES = 4


def data(folder: str | Path | None = None) -> dict:
    """The lab's numbers, shipped beside this file (a dict of tensors, numbers and text)."""
    path = Path(folder) if folder is not None else Path(__file__).resolve().parent
    return torch.load(path / DATA_FILE, weights_only=True)


def inputs_of(task: dict) -> dict:
    """The task's training inputs as the grader sends them: a generator state shipped as data
    becomes a ``torch.Generator`` again."""
    inputs = dict(task["inputs"])
    if isinstance(inputs.get("generator"), torch.Tensor):
        generator = torch.Generator()
        generator.set_state(inputs["generator"])
        inputs["generator"] = generator
    return inputs


def text_of(tokens, task: dict) -> str:
    """Token ids back to characters under the task's permutation (``task``: the char-RNN lab's)."""
    ids = torch.as_tensor(tokens, dtype=torch.int64).reshape(-1)
    ids = torch.argsort(task["permutation"])[ids]
    return "".join(task["alphabet"][int(i)] for i in ids)


@torch.no_grad()
def heldout_cross_entropy(params: dict, task: dict) -> float:
    """Mean next-character cross-entropy (nats) of the trained ``params`` on the task's held-out
    streams, from h = 0, with PyTorch's own tanh RNN and cross-entropy (not the student's)."""
    streams = task["heldout"]
    V = params["W_hy"].shape[0]
    x = torch.nn.functional.one_hot(streams[:, :-1], V).to(params["W_hy"].dtype)
    h = torch.zeros(streams.shape[0], params["W_hh"].shape[0], dtype=x.dtype)
    states = []
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ params["W_xh"].T + h @ params["W_hh"].T + params["b_h"])
        states.append(h)
    logits = torch.stack(states, 1) @ params["W_hy"].T + params["b_y"]
    return float(torch.nn.functional.cross_entropy(logits.reshape(-1, V), streams[:, 1:].reshape(-1)))


def _homes(namespace: dict, name: str) -> list[dict]:
    """Where the notebook's ``name`` is bound: its ``namespace`` (its globals), and the modules of
    its stand-in package (``__package__``), which a lab's own ``from .optimizers import adam``
    inside the function reads."""
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


class _Bar:
    """One progress line: redrawn in place in a notebook (an IPython display updated by id, so the
    saved notebook holds one line), else at most PLAIN_UPDATES printed lines."""

    def __init__(self, label: str, total: int):
        self.label, self.total, self.shown = label, max(1, total), 0
        self.handle = None
        try:
            from IPython import get_ipython
            from IPython.display import display

            if get_ipython() is not None and getattr(get_ipython(), "kernel", None) is not None:
                self.handle = display({"text/plain": self.line(0.0)}, raw=True, display_id=True)
        except ImportError:  # no IPython: a plain Python process
            self.handle = None

    def line(self, done: float) -> str:
        return f"{self.label} [{'#' * int(40 * done):40s}] {100 * done:5.1f}%"

    def update(self, count: int) -> None:
        done = min(1.0, count / self.total)
        if self.handle is not None:
            if count % max(1, self.total // 50) == 0:  # 50 redraws: smooth, and cheap
                self.handle.update({"text/plain": self.line(done)}, raw=True)
        elif int(done * PLAIN_UPDATES) > self.shown:
            self.shown = int(done * PLAIN_UPDATES)
            print(self.line(self.shown / PLAIN_UPDATES), flush=True)

    def finish(self) -> None:
        if self.handle is not None:
            self.handle.update({"text/plain": self.line(1.0)}, raw=True)
        elif self.shown < PLAIN_UPDATES:
            print(self.line(1.0), flush=True)


@contextlib.contextmanager
def progress(namespace: dict, name: str, total: int, label: str = "training"):
    """A progress bar while ``name`` (e.g. ``adam``) is called about ``total`` times: the function
    is wrapped for the duration, then put back, wherever the notebook has it (``_homes``). The
    bar is full when the training returns (a loop may call ``adam`` a little less often than
    estimated: a time-invariant model leaves three weights alone). Torch runs on one thread
    meanwhile: the lab's tensors are tiny, and intra-op threads only add barrier waits (a lab
    cell took five times as long with two threads on a busy 2-core machine)."""
    homes = _homes(namespace, name)
    bar = _Bar(label, total)
    count = [0]

    def counting(own):
        def counted(*args, **kwargs):
            count[0] += 1
            bar.update(count[0])
            return own(*args, **kwargs)

        return counted

    kept = [(home, home[name]) for home in homes]
    for home, own in kept:
        home[name] = counting(own)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
        bar.finish()
    finally:
        torch.set_num_threads(threads)
        for home, function in kept:
            home[name] = function


def plot_losses(losses, band: dict | None = None, ax=None, unit: str = "nats/char"):
    import matplotlib.pyplot as plt

    ax = ax or plt.figure(figsize=(7, 3)).add_subplot()
    if band:
        ax.fill_between(range(len(band["low"])), [float(v) for v in band["low"]], [float(v) for v in band["high"]],
                        color="#8a93a6", alpha=0.4, label="reference, 3 task instances")  # fmt: skip
    ax.plot(range(len(losses)), [float(v) for v in losses], color="#2f6fcf", label="your training")
    ax.set_xlabel("step")
    ax.set_ylabel(f"training loss ({unit})")
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


def recall_against_lag(train_recall, recall_logits, recall_batch, task: dict, namespace: dict) -> dict:
    """Held-out recall accuracy per cell and lag, with the student's functions throughout, from
    the initial weights and generator states of ``task`` (the data's ``recall``), under a
    progress bar over the notebook's ``adam`` calls (one per parameter and step)."""
    runs = task["runs"]  # kind -> lag -> {"params", "generator": state}
    total = task["steps"] * sum(len(run["params"]) for lags in runs.values() for run in lags.values())
    lags = sorted({lag for by_lag in runs.values() for lag in by_lag})
    out: dict[str, list[float]] = {}
    with progress(namespace, "adam", total, label=f"{sum(map(len, runs.values()))} trainings"):
        for kind, by_lag in runs.items():
            out[kind] = []
            for lag in lags:
                gen = torch.Generator()
                gen.set_state(by_lag[lag]["generator"])
                params, _ = train_recall(
                    kind, by_lag[lag]["params"], task["steps"], task["batch"], lag, task["lr"], gen
                )
                tokens = recall_batch(task["K"], 1000, lag, torch.Generator().manual_seed(7))
                with torch.no_grad():
                    one_hot = torch.nn.functional.one_hot(tokens, task["K"]).to(torch.float32)
                    logits = recall_logits(kind, params, one_hot)
                out[kind].append(float((logits.argmax(-1) == tokens[:, 0]).float().mean()))
    return {"lags": lags, "accuracy": out, "chance": 1 / (task["K"] // 2)}


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
    fn(*args, **kwargs)  # warm-up
    started = time.perf_counter()
    for _ in range(3):
        fn(*args, **kwargs)
    return (time.perf_counter() - started) / 3


@torch.no_grad()
def cross_attention(params: dict, src: torch.Tensor, ns: dict) -> torch.Tensor:
    """The reverser decoder's cross-attention weights ``(B, T, S)`` on the true shifted targets,
    replayed with the notebook's own functions (``ns``: its globals), as the grader replays them
    with the reference's."""
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
