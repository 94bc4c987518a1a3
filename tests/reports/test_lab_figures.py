"""Each lab's figures in report.html: its own axes and units, the reference's curve on the
student's own inputs, and the stretch the grader accepts; and where that curve comes from (the
reference replayed to the last step, seqlab.labs.curves, for the labs whose grader replays only
the first steps).

The table and the curve's source are checked fast; drawing needs matplotlib (1-2 s to import)
and the real gradings train labs, so those are in the bank."""

from __future__ import annotations

import math

import pytest
import torch

from seqlab.labs import LABS
from seqlab.labs.curves import ReferenceCurve, start
from seqlab.labs.figure_facts import FACTS
from seqlab.labs.replay import FIRST_STEPS, replay

TEXT_LAB = "rnn.train_char_rnn"
TASK_LABS = [f for f in LABS if f != TEXT_LAB]


def test_every_lab_has_its_figure_facts_and_they_say_what_its_grader_checks():
    assert set(FACTS) == set(LABS)
    for function, facts in FACTS.items():
        task = LABS[function].module()
        # every lab's grader compares every returned loss: the character lab's trajectory test
        # (the task's reference_run), the task labs' protocol test against the float64 replay of
        # the whole run (seqlab.labs.session.task_lab_tests); a figure that shaded only the first
        # steps would tell the student the later ones are free
        assert hasattr(task, "reference_run") or function in TASK_LABS, function
        assert facts.checked == "every", function
    for function in TASK_LABS:  # three of the four labs are not text
        words = f"{FACTS[function].loss_unit} {FACTS[function].heldout} {FACTS[function].metric_axis}"
        assert "character" not in words and "text" not in words, function


# the recall lab's GRU over 24-32 steps makes its short replay 0.7 s on a loaded machine: bank
CURVE_CASES = [pytest.param(f, marks=pytest.mark.bank) if f == "lstm_gru.train_recall" else f for f in TASK_LABS]


@pytest.mark.parametrize("function", CURVE_CASES)
def test_the_reference_curve_of_a_task_lab_is_the_protocols_replay_to_the_last_step(function):
    child_inputs, _ = LABS[function].module().draw_task(11)
    short = {**child_inputs, "steps": FIRST_STEPS + 1}  # the whole curve of a short training
    curve = start(function, LABS[function].module(), short)
    assert isinstance(curve, ReferenceCurve)
    losses = curve.losses()
    assert losses is not None and len(losses) == FIRST_STEPS + 1 and all(math.isfinite(v) for v in losses)
    # its first steps are exactly the replay the grader checks the student's first losses with
    assert losses[:FIRST_STEPS] == replay(function, child_inputs, FIRST_STEPS).tolist()
    assert curve.cpu_s > 0


def test_the_character_lab_keeps_the_curve_its_own_grader_computes():
    task = LABS[TEXT_LAB].module()
    assert start(TEXT_LAB, task, {"steps": 3}) is None  # its trajectory test records the reference's


def test_a_reference_that_fails_leaves_the_figure_without_a_curve_and_the_grading_going():
    function = TASK_LABS[0]
    child_inputs, _ = LABS[function].module().draw_task(11)
    broken = {**child_inputs, "steps": 2, "params": {}}  # the reference cannot run without weights
    assert ReferenceCurve(function, broken).losses() is None


def _run(function: str, steps: int = 40) -> dict:
    """A lab run's summary as the reports get it: the student's curve a little above the
    reference's, held-out results above the bounds."""
    reference = [2.7 * math.exp(-s / 8) + 0.01 for s in range(steps)]
    metrics = {
        TEXT_LAB: {"heldout_ce": 0.70, "reference_ce": 0.66, "unigram_ce": 2.81, "progress": 0.98},
        "lstm_gru.train_recall": {"accuracy": 0.97, "chance": 0.125},
        "transformer.train_reverser": {"exact_match": 0.81, "token_accuracy": 0.95},
        "selective_scan.train_selective_copy": {"accuracy": 0.84, "chance": 0.125},
    }[function]
    return {
        "losses": [v * 1.05 for v in reference],
        "reference_losses": reference,
        "metrics": metrics,
        "bounds": dict(LABS[function].module().THRESHOLDS),
    }


@pytest.mark.bank  # matplotlib's import and first drawings: 1-2 s
@pytest.mark.parametrize("function", list(LABS))
def test_each_lab_draws_its_own_units_its_reference_and_what_the_grader_accepts(function):
    from seqlab.labs.figures import report_figures

    run = _run(function)
    loss, heldout = report_figures({function: run})[function]
    facts = FACTS[function]
    assert "training loss" in loss.svg and f"({facts.loss_unit})" in loss.svg  # the y axis, two lines
    assert "reference, same inputs" in loss.svg and "the reference's, on the same inputs" in loss.alt
    assert facts.loss_unit in loss.alt and facts.metric_axis in heldout.svg
    assert heldout.alt.startswith(f"On {facts.heldout}: ")
    if facts.checked == "first":
        assert f"graded: steps 0-{FIRST_STEPS - 1} must match the reference" in loss.svg
    else:
        assert "graded: yours must follow it" in loss.svg and "compares every step" in loss.alt
    if function != TEXT_LAB:
        bound = next(iter(run["bounds"].values()))
        assert f"accepted: at least {bound:g}" in heldout.svg and f"(accepted from {bound:g})" in heldout.alt
    else:
        m = run["metrics"]
        limit = m["unigram_ce"] - run["bounds"]["progress"] * (m["unigram_ce"] - m["reference_ce"])
        assert f"accepted: progress &gt;= 0.9 (at most {limit:.3f})" in heldout.svg
        assert f"The grader accepts at most {limit:.3f}" in heldout.alt
    if function != TEXT_LAB:
        assert "nats/char" not in loss.svg + heldout.svg and "character" not in loss.alt + heldout.alt


@pytest.mark.bank
def test_a_loss_curve_without_a_reference_says_so():
    from seqlab.labs.figures import loss_figure

    figure = loss_figure(TASK_LABS[0], [2.0, 1.5, 1.0], None)
    assert "reference, same inputs" not in figure.svg and "no reference curve was recorded" in figure.alt


@pytest.mark.bank  # trains the three task labs (the reference, in-process): ~15 s
def test_every_graded_lab_run_carries_the_reference_curve_and_the_report_draws_it(tmp_path):
    import shutil

    from seqlab.grading import grade_submission, grading_settings
    from seqlab.paths import COURSE_ROOT
    from seqlab.reports import write_all

    shutil.copytree(COURSE_ROOT / "solutions", tmp_path / "reference" / "exercises")
    settings = grading_settings(isolated=False, seed=5, only=",".join(TASK_LABS), labs=True)
    result = grade_submission(tmp_path / "reference", settings)
    runs = result.meta["lab_runs"]
    assert set(runs) == set(TASK_LABS)
    for function, run in runs.items():
        child_inputs, _ = LABS[function].module().draw_task(run["seed"])
        assert len(run["reference_losses"]) == len(run["losses"]) == child_inputs["steps"], function
        first = replay(function, child_inputs, FIRST_STEPS)
        assert torch.tensor(run["reference_losses"][:FIRST_STEPS], dtype=torch.float64).equal(first), function
        assert run["reference_curve_cpu_s"] > 0
    html = write_all(result, tmp_path / "out")["report.html"].read_text()
    assert html.count("reference, same inputs") == len(TASK_LABS)
