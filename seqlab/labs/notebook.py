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


@contextlib.contextmanager
def progress(namespace: dict, name: str, total: int, label: str = "training"):
    """A text progress bar while ``namespace[name]`` (e.g. the notebook's own ``adam``) is
    called ``total`` times: the function is wrapped for the duration, then put back."""
    own = namespace[name]
    count = [0]

    def counted(*args, **kwargs):
        count[0] += 1
        if count[0] % max(1, total // 50) == 0 or count[0] == total:
            done = min(1.0, count[0] / total)
            sys.stdout.write(f"\r{label} [{'#' * int(40 * done):40s}] {100 * done:5.1f}%")
            sys.stdout.flush()
        return own(*args, **kwargs)

    namespace[name] = counted
    try:
        yield
    finally:
        namespace[name] = own
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
