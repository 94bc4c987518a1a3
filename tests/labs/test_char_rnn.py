"""The character-level lab: its task instances, the session's rules, and its graders judged by
known-wrong and alternative-correct training loops and by attacks.

The unit tests are cheap (no grading). Everything that grades a submission with the lab on
trains it (seconds of CPU each) and is in the bank (``make test-banks``).
"""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch

from seqlab.grading import grade_submission, grading_settings
from seqlab.grading.checks import Grade
from seqlab.labs import LABS, budget, char_rnn, clock, corpus, differential, slips
from seqlab.labs.session import LabSession, returned_problem
from seqlab.reference import load_reference
from seqlab.student.codec import decode, encode
from tests.mutants import ROOT, make_submission
from tests.mutants.derived import grader_module
from tests.mutants.labs import LAB_ALTERNATIVES, LAB_ATTACKS, LAB_MUTANTS

LAB = "rnn.train_char_rnn"


# --- the mistakes it names ------------------------------------------------------------------------


def test_a_lab_mistake_is_declared_once_and_each_wrong_loop_names_it():
    """Each known-wrong loop names (``hint``) a mistake the grader declares (its trajectory's and
    its sampler's tables) or a general slip, by that name, and each of the trajectory's mistakes
    has a wrong loop that shows it (the bank test below: named, and by no other name)."""
    grader = grader_module(ROOT / "graders" / "test_rnn.py")
    rows = {name for name, _, _ in grader.CHAR_RNN_MISTAKES}
    named = rows | {name for name, _, _ in grader.SAMPLE_MISTAKES}
    named |= {v.name for v in vars(slips).values() if isinstance(v, slips.Slip)}
    named |= {k.name for k in differential.CATALOGUE[LAB][1]}  # the replay's catalogue
    assert all(m.hint in named for m in LAB_MUTANTS), sorted(m.hint for m in LAB_MUTANTS if m.hint not in named)
    assert rows <= {m.hint for m in LAB_MUTANTS}, sorted(rows - {m.hint for m in LAB_MUTANTS})


# --- the task -------------------------------------------------------------------------------------


def test_corpus_is_reproducible_and_in_the_alphabet():
    text = corpus.text(7, 2000)
    assert text == corpus.text(7, 2000) != corpus.text(8, 2000) and len(text) == 2000
    assert set(text) <= set(corpus.ALPHABET) and text.count(".") > 20
    assert all(len(corpus.text(seed, 257)) == 257 for seed in range(300))  # never a character short
    assert " an a" not in text and " a o" not in text  # "an" before a vowel, "a" before a consonant
    permutation = torch.randperm(corpus.V, generator=torch.Generator().manual_seed(1))
    assert corpus.decode(corpus.encode(text, permutation), permutation) == text


def test_a_task_instance_per_seed_and_the_heldout_never_in_the_child_inputs():
    a_inputs, a_heldout = char_rnn.draw_task(1)
    b_inputs, _ = char_rnn.draw_task(2)
    assert not torch.equal(a_inputs["tokens"], b_inputs["tokens"])
    assert not torch.equal(a_inputs["params"]["W_xh"], b_inputs["params"]["W_xh"])
    # what travels to the child: no held-out stream inside it, as a run of tokens anywhere
    sent = a_inputs["tokens"].tolist()
    text = ",".join(map(str, sent))
    for row in a_heldout["tokens"]:
        assert ",".join(map(str, row[:40].tolist())) not in text
    assert set(a_inputs) == {"tokens", "params", "steps", "batch_size", "seq_len", "lr", "clip"}


def test_codec_carries_a_generator_as_its_state():
    g = torch.Generator().manual_seed(5)
    _, _, message = decode(encode({"g": g}, request=1, seq=0)[8:])
    assert torch.equal(torch.rand(4, generator=message["g"]), torch.rand(4, generator=g))


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda p: {**p, "W_hh": torch.full_like(p["W_hh"], float("nan"))}, "NaN"),
        (lambda p: {**p, "W_hy": p["W_hy"].T.clone()}, "shape"),
        (lambda p: {**p, "extra": torch.zeros(3)}, "params_out"),
        (lambda p: {**p, "b_y": p["b_y"].float()}, "dtype"),
    ],
    ids=["nan", "transposed", "extra key", "float32"],
)
def test_returned_parameters_must_keep_keys_shapes_dtype_and_be_finite(change, words):
    inputs = {"params": char_rnn.initial_params(torch.Generator().manual_seed(0)), "steps": 3}
    assert returned_problem(inputs["params"], torch.zeros(3, dtype=torch.float64), inputs) is None
    problem = returned_problem(change(inputs["params"]), torch.zeros(3, dtype=torch.float64), inputs)
    assert problem and words.lower() in problem.lower(), problem


class _Clocked:
    """A student whose training returns the right structure but whose CPU clock says 20 s."""

    def __init__(self, child_inputs):
        self.value = (child_inputs["params"], torch.zeros(child_inputs["steps"], dtype=torch.float64))
        self.readings = iter([("child", 1.0), ("child", 21.0)])

    def cpu_clock(self):
        return next(self.readings)

    def run(self, qualname, args, kwargs, *, kernels=False, timeout=None):
        assert timeout == LABS[LAB].wall_limit_s  # the lab's own wall limit, not the config's
        return SimpleNamespace(value=self.value, args=(), kwargs=kwargs, aliased=[], ops={}, updates={})


def _clocked_run(monkeypatch, slowdown):
    monkeypatch.setattr(clock, "slowdown", lambda: slowdown)
    student = _Clocked(char_rnn.draw_task(3)[0])
    grade = Grade(LAB, student, load_reference(), {}, lambda name: None)
    session = LabSession(LABS[LAB], grade, {}, 3, {})
    session.seed = 3
    return session.run()


def test_a_run_over_the_cpu_budget_is_not_scored(monkeypatch):
    run = _clocked_run(monkeypatch, 1.0)
    assert run.failure is not None and run.failure.rule == "budget" and "20.0 s of CPU" in run.failure.message
    assert "budget of 15.0 s (15 s on a standard core)" in run.failure.message, run.failure.message
    # the words are the ones the student's own budget test gives (seqlab.labs.budget, shipped)
    assert run.failure.message == budget.over_budget(LAB, 20.0, 15.0, 1.0)
    assert run.params is None


def test_a_slower_core_stretches_the_budget_and_says_so(monkeypatch):
    assert _clocked_run(monkeypatch, 2.0).failure is None  # 20 s of CPU against 30 s: scored
    run = _clocked_run(monkeypatch, 1.2)
    assert run.failure is not None and run.failure.rule == "budget"
    assert "budget of 18.0 s (15 s on a standard core, as this core is 1.2x slower" in run.failure.message


# --- graded with the lab on (the bank) ------------------------------------------------------------


def _grade(tmp_path, variant=None, *, seed=7, isolated=False, only=LAB):
    submission = make_submission(tmp_path / "submission", variant)
    return grade_submission(submission, grading_settings(isolated=isolated, seed=seed, only=only, labs=True))


def _lab_tests(result, function=LAB):
    return [t for t in result.tests if t.function == function]


@pytest.mark.bank
def test_the_reference_meets_the_bounds_on_twenty_seeds():
    ref = load_reference()
    for seed in range(20):
        inputs, heldout = char_rnn.draw_task(1000 + seed)
        params, losses = ref(LAB)(**inputs)
        metrics = char_rnn.evaluate(params, inputs, heldout)
        assert metrics["progress"] >= char_rnn.THRESHOLDS["progress"], (seed, metrics)
        assert metrics["heldout_ce"] < metrics["unigram_ce"] - 1.0, (seed, metrics)
        assert float(losses[-25:].mean()) < float(losses[:5].mean()) - 1.5


@pytest.mark.bank
def test_the_reference_scores_full_marks_isolated_within_budget(tmp_path):
    result = _grade(tmp_path, isolated=True, only="rnn.train_char_rnn,rnn.sample_chars")
    assert result.percent == 100.0, [(t.name, t.output[:300]) for t in result.tests if t.score < t.max_score]
    run = result.meta["lab_runs"][LAB]
    assert run["cpu_s"] is not None and run["cpu_s"] < run["budget_s"], (run["cpu_s"], run["budget_s"])
    assert len(run["losses"]) == len(run["reference_losses"]) == char_rnn.STEPS


@pytest.mark.bank
@pytest.mark.parametrize("variant", LAB_ALTERNATIVES, ids=lambda v: v.description)
def test_an_alternative_training_loop_scores_full_marks_on_twenty_seeds(tmp_path, variant):
    for seed in range(20):
        result = _grade(tmp_path / str(seed), variant, seed=seed)
        failed = [(t.name, t.output[:300]) for t in result.tests if t.score < t.max_score]
        assert not failed, (seed, failed)


@pytest.mark.bank
@pytest.mark.parametrize("variant", LAB_MUTANTS, ids=lambda v: v.id)
def test_a_wrong_loop_loses_points_with_the_mistake_named(tmp_path, variant):
    result = _grade(tmp_path, variant, only=variant.function)
    tests = _lab_tests(result, variant.function)
    assert sum(t.score for t in tests) < sum(t.max_score for t in tests), f"{variant.id}: full marks"
    hints = [t.hint for t in tests if t.hint]
    assert any(variant.hint.lower() in h.lower() for h in hints), (variant.id, hints, [t.output for t in tests])
    assert all(variant.hint.lower() in h.lower() for h in hints), (variant.id, hints)  # no test names another


def _pasted() -> str:
    params, _ = char_rnn.reference_run(char_rnn.draw_task(999)[0])
    return repr({k: v.tolist() for k, v in params.items()})


@pytest.mark.bank
@pytest.mark.parametrize("attack", LAB_ATTACKS, ids=lambda v: v.description)
def test_an_attack_on_the_lab_scores_nothing(tmp_path, attack):
    if "{pasted}" in attack.source:
        attack = type(attack)(attack.function, attack.description, attack.source.replace("{pasted}", _pasted()))
    result = _grade(tmp_path, attack, isolated=True)
    tests = _lab_tests(result)
    assert tests and all(t.score == 0 for t in tests), [(t.name, t.score, t.output[:200]) for t in tests]
    assert result.meta["lab_runs"][LAB].get("failure") or result.meta["lab_runs"][LAB]["metrics"]["progress"] < 0.9


@pytest.mark.bank  # matplotlib's first import is 1-2 s; the browser test draws them in every run
def test_report_figures_are_inline_svg_with_a_text_alternative():
    from seqlab.labs.figures import report_figures

    run = {
        "losses": [3.3 - 0.01 * s for s in range(50)],
        "reference_losses": [3.3 - 0.01 * s for s in range(50)],
        "metrics": {"heldout_ce": 0.7, "reference_ce": 0.69, "unigram_ce": 2.8, "progress": 0.99},
    }
    figures = report_figures({LAB: run})[LAB]
    assert [f.title for f in figures] == ["training loss", "held-out cross-entropy"]
    for figure in figures:
        assert figure.svg.startswith('<svg role="img" aria-label=') and "<?xml" not in figure.svg
        assert "<metadata>" not in figure.svg and "glyph" not in figure.svg  # text stays text
    assert "3.300 to 2.855" in figures[0].alt and "your model 0.700" in figures[1].alt


@pytest.mark.bank
def test_the_class_report_shows_the_distribution_of_heldout_results(tmp_path):
    from seqlab.gradebook import write_class_report
    from seqlab.results import GradingResult

    rows = []
    for i, progress in enumerate([1.0, 0.97, -0.4, 0.5]):
        run = {"metrics": {"progress": progress, "heldout_ce": 0.7 + i}}
        result = GradingResult(tests=[], submission=f"s{i}", seed=i, meta={"lab_runs": {LAB: run}})
        rows.append({"submission": f"s{i}", "status": "graded", "reason": "", "result": result})
    html, _ = write_class_report(tmp_path, rows)
    text = html.read_text()
    assert "Labs: held-out results" in text and text.count('<svg role="img"') == 1
    assert "of 4 submissions" in text and "2 at or above the bound 0.9" in text


@pytest.mark.bank
def test_the_class_report_draws_the_recorded_bounds_without_torch(tmp_path):
    """grade-all writes the class report last, after every worker is done: what it imports is
    serial time for the whole class. The bounds come from the results, so torch stays out."""
    script = f"""
import sys
from pathlib import Path
from seqlab.gradebook import write_class_report
from seqlab.results import GradingResult
rows = []
for i, progress in enumerate([1.0, 0.97, 0.5]):
    run = {{"metrics": {{"progress": progress}}, "bounds": {{"progress": 0.75}}}}
    result = GradingResult(tests=[], submission=f"s{{i}}", seed=i, meta={{"lab_runs": {{"{LAB}": run}}}})
    rows.append({{"submission": f"s{{i}}", "status": "graded", "reason": "", "result": result}})
html, _ = write_class_report(Path(sys.argv[1]), rows)
assert "torch" not in sys.modules, "the class report imported torch"
assert "2 at or above the bound 0.75" in html.read_text()
"""
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, cwd=ROOT)


@pytest.mark.bank
def test_a_bug_in_an_earlier_function_is_named_in_the_lab(tmp_path):
    from tests.mutants import all_variants

    adam_bug = next(m for m in all_variants("MUTANTS") if m.function == "optimizers.adam" and "in place" not in m.id)
    result = _grade(tmp_path, adam_bug, only="optimizers.adam,rnn.train_char_rnn")
    assert any(t.score < t.max_score for t in result.tests if t.function == "optimizers.adam")
    lab = _lab_tests(result)
    failed = [t for t in lab if t.score < t.max_score]
    assert failed and all("optimizers.adam" in t.output for t in failed), [t.output for t in lab]


@pytest.mark.bank
def test_every_lab_scores_full_marks_for_the_reference_within_its_budget(tmp_path):
    result = _grade(tmp_path, isolated=True, only=",".join(LABS))
    assert result.percent == 100.0, [(t.name, t.output[:300]) for t in result.tests if t.score < t.max_score]
    runs = result.meta["lab_runs"]
    assert set(runs) == set(LABS)
    assert all(runs[f]["cpu_s"] < runs[f]["budget_s"] for f in LABS), {
        f: (runs[f]["cpu_s"], runs[f]["budget_s"]) for f in LABS
    }
    slowdown = runs[LAB]["budget_s"] / LABS[LAB].cpu_budget_s  # this core against the standard one
    assert sum(runs[f]["cpu_s"] for f in LABS) / slowdown < 15.0  # the budget, in standard seconds
