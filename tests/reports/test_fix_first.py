"""The "Fix first" summary at the top of a student's reports: the failing functions that other
functions of the student's run (the contract's declared callees, the labs' used functions), in
the order to fix them, one line each with why; none for a clean submission; a cap for a
submission that fails everything. Built from results in memory: no grading, no torch, fast."""

from __future__ import annotations

import io
import re

from seqlab import contract, results
from seqlab.labs import LABS
from seqlab.reports.fixfirst import SHOWN, dependencies, fix_first
from seqlab.reports.gradescope import to_gradescope
from seqlab.reports.markdown import to_markdown
from seqlab.reports.table import print_table
from seqlab.results import GradingResult

SDPA, MHA = "attention.scaled_dot_product_attention", "attention.multi_head_attention"
REVERSER = "transformer.train_reverser"


def _result(failing: set[str], functions=None) -> GradingResult:
    """Two tests per function; a failing function loses both (0 of 4 points)."""
    tests = [
        results.TestResult(
            f"{f}: case {i}", 0.0 if f in failing else 2.0, 2.0, output="wrong values" if f in failing else ""
        )
        for f in functions or contract.FUNCTIONS
        for i in range(2)
    ]
    return GradingResult(tests=tests, seed=3)


def _html(result: GradingResult, tmp_path) -> str:
    from seqlab.reports.html import write

    return write(result, tmp_path / "report.html").read_text()


def _fix_first_items(html: str) -> list[str]:
    """The functions the HTML's "Fix first" list names, in order (empty without the section)."""
    if 'id="fix-first-title"' not in html:
        return []
    section = html.split('id="fix-first-title"', 1)[1].split("</section>", 1)[0]
    return re.findall(r'<li><a href="#([^"]+)">', section)


def test_a_broken_dependency_is_named_first_above_everything_else(tmp_path):
    # sgd fails too, but nothing runs it: it is not a "fix first"; the caller mha failed with its
    # callee, so the callee comes first; the reverser lab trains with both
    result = _result({"optimizers.sgd", MHA, SDPA, REVERSER})
    view = fix_first(result)
    assert [e.function for e in view.entries] == [SDPA, MHA] and view.more == 0
    first = view.entries[0]
    assert first.score == 0 and first.max_score == 4
    assert first.why == "multi_head_attention calls it; the train_reverser lab trains with it (all lost points too)"
    html = _html(result, tmp_path)
    assert _fix_first_items(html) == [SDPA, MHA]
    assert html.index("Fix first") < html.index("Per function")  # at the top, before the table
    summary = to_markdown(result)
    # not a heading: the score's is the summary's only one, which no student text can forge
    assert summary.index("**Fix first.**") < summary.index("| module | function |")
    assert [line for line in summary.splitlines() if line.startswith("#")] == [summary.splitlines()[0]]
    assert re.search(r"^1\. `attention\.scaled_dot_product_attention` \(0 / 4\): ", summary, re.M)
    output = to_gradescope(result)["output"]
    assert "Fix first" in output and output.index("attention.scaled") < output.index("attention.multi")
    terminal = io.StringIO()
    print_table(result, file=terminal)
    assert f"fix first: {SDPA}, {MHA} (other functions of yours run them" in terminal.getvalue()


def test_a_clean_submission_has_no_fix_first_section(tmp_path):
    result = _result(set())
    assert not fix_first(result)
    assert _fix_first_items(_html(result, tmp_path)) == [] and "Fix first" not in _html(result, tmp_path)
    assert "Fix first" not in to_markdown(result) and "Fix first" not in to_gradescope(result)["output"]
    terminal = io.StringIO()
    print_table(result, file=terminal)
    assert "fix first" not in terminal.getvalue()


def test_failures_that_nothing_depends_on_make_no_section(tmp_path):
    leaves = {"optimizers.sgd", "rnn.birnn_forward", "lstm_gru.lstm_forward"}  # nothing calls them
    assert not any(leaf in used for used in dependencies().values() for leaf in leaves)
    result = _result(leaves)
    assert not fix_first(result) and "Fix first" not in _html(result, tmp_path)


def test_an_all_stub_submission_lists_the_deepest_dependencies_up_to_the_cap(tmp_path):
    result = _result(set(contract.FUNCTIONS))
    view = fix_first(result)
    depended_on = {name for used in dependencies().values() for name in used}
    assert len(view.entries) == SHOWN and view.more == len(depended_on) - SHOWN > 0
    # each shown one depends on no other failing function that is depended on: the roots first
    for entry in view.entries:
        assert not set(dependencies().get(entry.function, ())) & depended_on, entry.function
    # the root more functions run (directly or through others) first: rnn_cell (rnn_forward,
    # greedy_decode, rnn_bptt, truncated_bptt, birnn_forward and the character lab); adam, which
    # every lab trains with, is among the shown
    names = [e.function for e in view.entries]
    assert names[0] == "rnn.rnn_cell" and "optimizers.adam" in names
    adam = view.entries[names.index("optimizers.adam")]
    assert adam.why == "every lab trains with it (all lost points too)"
    html = _html(result, tmp_path)
    assert len(_fix_first_items(html)) == SHOWN
    assert f"and {view.more} more failing functions that others run" in html
    summary = to_markdown(result)
    assert len(re.findall(r"^\d+\. `", summary, re.M)) == SHOWN and f"and {view.more} more" in summary


def test_one_more_than_the_cap_is_shown_rather_than_counted():
    # SHOWN + 1 roots, none depending on another
    roots = [
        "optimizers.adam",
        "rnn.rnn_cell",
        "rnn.softmax_cross_entropy",
        "lstm_gru.gru_cell",
        SDPA,
        "transformer.layer_norm",
    ]
    assert len(roots) == SHOWN + 1
    view = fix_first(_result(set(roots)))
    assert len(view.entries) == SHOWN + 1 and view.more == 0


def test_a_callee_that_only_its_callers_run_says_why_their_points_do_not_show_it():
    # graded without the labs: lstm_cell's only dependent, lstm_forward, passes (its tests get
    # the reference's lstm_cell), so the line says why the caller's points look fine
    functions = [f for f in contract.FUNCTIONS if f not in LABS]
    view = fix_first(_result({"lstm_gru.lstm_cell"}, functions))
    assert [e.function for e in view.entries] == ["lstm_gru.lstm_cell"]
    assert view.entries[0].why.startswith("lstm_forward calls it (their tests here get the reference's")


def test_the_labs_used_functions_are_dependencies():
    for function, lab in LABS.items():
        assert set(lab.uses) <= set(dependencies()[function]), function
    for caller, callees in contract.DECLARED_CALLEES.items():
        assert set(callees) <= set(dependencies()[caller]), caller
