"""The labs' figures, drawn by the grader from the numbers a lab run returned (never from an
image the student sent): SVG text for report.html and the class report, each with a sentence
that says what it shows (the text alternative), and the notebook's plots.

matplotlib is imported only here and only when a figure is drawn, so a grading without labs
never pays for it. Figures are made with ``matplotlib.figure.Figure`` (no pyplot, no GUI
backend) and written as SVG with text kept as text (``svg.fonttype: none``: no glyph
definitions) and ids salted per figure, so several inline figures in one page never share an id.
"""

from __future__ import annotations

import io
import math
import re
import sys
import threading
from dataclasses import dataclass

from . import LABS
from .figure_facts import facts_of

BLUE, GREY, ORANGE, GREEN = "#2f6fcf", "#8a93a6", "#b35c00", "#2e8b57"


@dataclass(frozen=True)
class Figure:
    title: str
    svg: str  # an inline <svg> element, role="img", labelled by its title
    alt: str  # what it shows, in words


def _svg(fig, salt: str, label: str) -> str:
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        fig.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # no XML declaration or doctype inside an HTML page
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    from ..escape import html

    return text.replace("<svg ", f'<svg role="img" aria-label="{html(label)}" class="lab-figure" ', 1)


_warming: threading.Thread | None = None


def warm_up() -> None:
    """Draw one throwaway run's figures of every lab in a background thread, once per process.

    The grader calls this as the first lab starts training, when the parent only waits for its
    child. matplotlib's import and its first drawing of each kind (fonts, legends, text layout)
    cost 1.4 s here, and a warm report draws all the labs' figures in 0.4 s. So this takes most of
    the labs' reporting off the wall clock without drawing anything the report then reuses. Every
    figure waits for it first: matplotlib's rcParams, which _svg sets, are shared by threads."""
    global _warming
    if _warming is None:
        _warming = threading.Thread(target=_draw_samples, name="seqlab-figure-warm-up", daemon=True)
        _warming.start()


def _draw_samples() -> None:
    try:
        for function, lab in LABS.items():
            sample = {"losses": [2.0, 1.0, 0.5], "reference_losses": [2.0, 0.9, 0.4]}
            run_figures(function, {**sample, "metrics": dict.fromkeys(lab.metric_names, 0.5)})
    except ImportError:  # no matplotlib: the report says so when it draws
        pass


def _settled() -> None:
    if _warming is not None and _warming is not threading.current_thread():
        _warming.join()


def _figure(width=5.0, height=2.6):
    _settled()
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(width, height))
    return fig, fig.add_subplot()


def _checked_steps(function: str, reference: list[float] | None) -> int:
    """How many of the first losses the grader compares with the reference's (figure_facts)."""
    if facts_of(function).checked == "every":
        return len(reference or [])
    from .replay import FIRST_STEPS

    return FIRST_STEPS


def loss_figure(function: str, losses: list[float], reference: list[float] | None) -> Figure:
    """The student's training loss over the reference's on the same inputs, in the lab's own
    unit, with the steps the grader compares with the reference's shaded (every step for the
    character lab, the first steps for the others: their band is the grader's own)."""
    facts = facts_of(function)
    fig, ax = _figure()
    checked = _checked_steps(function, reference) if reference else 0
    if checked and checked < len(reference or []):
        ax.axvspan(-0.5, checked - 0.5, color=ORANGE, alpha=0.18, linewidth=0,
                   label=f"graded: steps 0-{checked - 1} must match the reference")  # fmt: skip
    if reference:
        label = "reference, same inputs" + (" (graded: yours must follow it)" if checked == len(reference) else "")
        ax.plot(range(len(reference)), reference, color=GREY, linewidth=4, alpha=0.6, label=label)
    ax.plot(range(len(losses)), losses, color=BLUE, linewidth=1.2, label="your training")
    shown = [v for v in losses + (reference or []) if math.isfinite(v)]
    if facts.log_loss and shown and min(shown) > 0:
        ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel(f"training loss\n({facts.loss_unit})")
    ax.legend(frameon=False, fontsize="small")
    ax.spines[["top", "right"]].set_visible(False)
    first, last = losses[0] if losses else math.nan, _tail_mean(losses)
    alt = f"Your training loss went from {first:.3f} to {last:.3f} {facts.loss_unit} over {len(losses)} steps"
    if reference:
        alt += f"; the reference's, on the same inputs, from {reference[0]:.3f} to {_tail_mean(reference):.3f}"
        if checked == len(reference):
            alt += ". The grader compares every step with the reference's"
        elif checked:
            alt += f". The grader compares steps 0 to {checked - 1} with the reference's"
    else:
        alt += "; no reference curve was recorded for this run"
    label = f"training loss ({facts.loss_unit}) against step"
    return Figure("training loss", _svg(fig, f"{function}-losses", label), alt + ".")


def _accepted_band(ax, low: float, high: float, label: str, row: float | None = None) -> None:
    """The values the grader accepts, shaded (a row's own stretch on a bar chart)."""
    if row is None:
        ax.axvspan(low, high, color=GREEN, alpha=0.15, linewidth=0, label=label)
    else:
        ax.barh(row, high - low, left=low, height=0.9, color=GREEN, alpha=0.15, linewidth=0, label=label, zorder=0)


def _legend_outside(ax) -> None:
    """Beside the bars, never over them (a bar reaching the bound's band would hide it)."""
    ax.legend(frameon=False, fontsize="small", loc="center left", bbox_to_anchor=(1.0, 0.5))


def heldout_figure(function: str, metrics: dict[str, float], bounds: dict[str, float] | None = None) -> Figure:
    """The character lab's held-out cross-entropy beside the unigram model's and the reference's,
    with the stretch the grader accepts: progress >= its bound, that is a cross-entropy at most
    unigram - bound * (unigram - reference)."""
    lab, facts = LABS[function], facts_of(function)
    names = [k for k in ("unigram_ce", "heldout_ce", "reference_ce") if k in metrics]
    labels = {"unigram_ce": "unigram model", "heldout_ce": "your model", "reference_ce": "reference"}
    fig, ax = _figure(height=2.0)
    values = [metrics[k] for k in names]
    bound = lab.thresholds(bounds).get("progress")
    unigram, reference = metrics.get("unigram_ce", math.nan), metrics.get("reference_ce", math.nan)
    limit = None
    if bound is not None and math.isfinite(unigram) and math.isfinite(reference) and unigram > reference:
        limit = unigram - bound * (unigram - reference)
        _accepted_band(ax, 0, limit, f"accepted: progress >= {bound:g} (at most {limit:.3f})")
    ax.barh([labels[k] for k in names], values, color=[GREY, BLUE, ORANGE][: len(names)])
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.3f}", va="center")
    ax.set_xlabel(facts.metric_axis)
    if limit is not None:
        _legend_outside(ax)
    ax.spines[["top", "right"]].set_visible(False)
    alt = f"On {facts.heldout}: " + ", ".join(f"{labels[k]} {metrics[k]:.3f}" for k in names)
    alt += " nats per character"
    if "progress" in metrics:
        alt += f" ({lab.metric_names.get('progress', 'progress')}: {metrics['progress']:.2f})"
    if limit is not None:
        alt += f". The grader accepts at most {limit:.3f}, progress {bound:g} or more"
    return Figure("held-out cross-entropy", _svg(fig, f"{function}-heldout", "held-out cross-entropy"), alt + ".")


def metric_figure(function: str, metrics: dict[str, float], bounds: dict[str, float] | None = None) -> Figure:
    """A task lab's held-out results as shares on [0, 1], each bounded one with the stretch the
    grader accepts (at least its bound, as the grading recorded it: ``Lab.thresholds``)."""
    lab, facts = LABS[function], facts_of(function)
    bounds = lab.thresholds(bounds)
    names = list(metrics)
    fig, ax = _figure(height=0.7 + 0.45 * len(names))
    values = [metrics[k] for k in names]
    for i, k in enumerate(names):
        if k in bounds:
            _accepted_band(ax, bounds[k], 1.0, f"accepted: at least {bounds[k]:g}", row=i)
    ax.barh([lab.metric_names.get(k, k) for k in names], values, height=0.5,
            color=[BLUE if k in bounds else GREY for k in names])  # fmt: skip
    for i, (k, v) in enumerate(zip(names, values)):
        ax.text(v, i, f" {v:.3f}", va="center")
        if k in bounds:
            ax.plot([bounds[k]] * 2, [i - 0.45, i + 0.45], color=ORANGE, linestyle="--")
    ax.set_xlim(0, 1.18)  # shares; room for the value written after a full bar
    ax.set_xlabel(facts.metric_axis)
    if bounds:
        _legend_outside(ax)
    ax.spines[["top", "right"]].set_visible(False)
    parts = [f"{lab.metric_names.get(k, k)} {metrics[k]:.3f}" + (f" (accepted from {bounds[k]:g})" if k in bounds else "")
             for k in names]  # fmt: skip
    alt = f"On {facts.heldout}: " + ", ".join(parts)
    return Figure("held-out results", _svg(fig, f"{function}-metrics", "held-out results"), alt + ".")


def _tail_mean(values: list[float], n: int = 10) -> float:
    tail = values[-n:]
    return sum(tail) / len(tail) if tail else math.nan


def run_figures(function: str, run: dict) -> list[Figure]:
    """The figures of one lab run (``seqlab.labs.session.summary``), as its Lab declares them."""
    lab = LABS.get(function)
    if lab is None:
        return []
    figures = []
    if "losses" in lab.figures and run.get("losses"):
        figures.append(loss_figure(function, run["losses"], run.get("reference_losses")))
    if "heldout" in lab.figures and run.get("metrics"):
        figures.append(heldout_figure(function, run["metrics"], run.get("bounds")))
    if "metrics" in lab.figures and run.get("metrics"):
        figures.append(metric_figure(function, run["metrics"], run.get("bounds")))
    return figures


def report_figures(lab_runs: dict) -> dict[str, list[Figure]]:
    return {function: run_figures(function, run) for function, run in (lab_runs or {}).items()}


# Below this spread (relative to the values' size) a class's results are drawn as one value: two
# correct runs of a lab give 1.0 and 1.0000000000000002, a spread of one rounding step, and
# numpy cannot cut that into finite bins ("Too many bins for data range"), which once stopped the
# class report -- and `seqlab nbgrader autograde` with it -- for an ordinary class.
SAME_VALUE_SPREAD = 1e-9


def histogram_edges(values: list[float], bins: int) -> list[float]:
    """``bins + 1`` increasing bin edges that hold every one of ``values`` (finite numbers): over
    their range, or, when that range is zero or within rounding of zero, over a small window
    centred on them (width 1e-3 of their size, at least 1e-3), so every bin has a finite width."""
    if not values:
        return [float(i) / bins for i in range(bins + 1)]
    lo, hi = min(values), max(values)
    scale = max(abs(lo), abs(hi), 1.0)
    if hi / 2 - lo / 2 <= SAME_VALUE_SPREAD * scale / 2:  # halves: no overflow near the float limit
        middle, half = lo / 2 + hi / 2, 5e-4 * scale  # halves first: no overflow near the float limit
        lo, hi = max(middle - half, -sys.float_info.max), min(middle + half, sys.float_info.max)
    step = hi / bins - lo / bins
    edges = [lo + i * step for i in range(bins)] + [hi]
    if all(math.isfinite(e) for e in edges):
        return edges
    # near the float limit the step itself overflows: interpolate, each term within range
    return [lo * (1 - i / bins) + hi * (i / bins) for i in range(bins)] + [hi]


def distribution_figure(function: str, metric: str, values: list[float], bound: float | None) -> Figure:
    """The class's held-out results: one histogram, the pass bound marked."""
    lab = LABS[function]
    fig, ax = _figure(height=2.2)
    finite = [v for v in values if math.isfinite(v)]
    ax.hist(finite, bins=histogram_edges(finite, min(20, max(5, len(finite) // 3))), color=BLUE)
    if bound is not None:
        ax.axvline(bound, color=ORANGE, linestyle="--", label=f"bound {bound:g}")
        ax.legend(frameon=False)
    name = lab.metric_names.get(metric, metric)
    ax.set_xlabel(name)
    ax.set_ylabel("submissions")
    ax.spines[["top", "right"]].set_visible(False)
    passed = sum(1 for v in finite if bound is None or v >= bound)
    alt = f"{function}: {name} of {len(values)} submissions"
    if finite:
        ordered = sorted(finite)
        alt += f", median {ordered[len(ordered) // 2]:.3f}"
    if bound is not None:
        alt += f"; {passed} at or above the bound {bound:g}"
    return Figure(f"{function}: {name}", _svg(fig, f"class-{function}-{metric}", name), alt + ".")
