"""The graders' vocabulary on its own: ``grade.check`` in every form, ``Case``, ``Mistake``,
the ``@grades`` marker's metadata and how it reaches the reports.

The student side is a stand-in that returns what the test says (no child process, no
references): what is under test is how a value is compared and what the feedback says.
"""

from __future__ import annotations

import copy

import pytest
import torch

from seqlab.config import ConfigError, check_test_patterns, load_config, parse_config
from seqlab.grading import plugin
from seqlab.grading.checks import Case, Grade, GradeFailure, Make, Mistake, from_table
from seqlab.grading.scoring import score_records
from seqlab.student import Outcome
from seqlab.tolerance import Tolerance

TOLERANCES = {"float64": Tolerance(1e-7, 1e-9, "test"), "float32": Tolerance(1e-4, 1e-5, "test")}


class Answers:
    """A student whose function returns ``answer(*args)`` and leaves its arguments alone."""

    def __init__(self, answer):
        self.answer = answer

    def run(self, function, args, kwargs, kernels=False, timeout=None):
        return Outcome(self.answer(*args, **kwargs), args, kwargs)


def make_grade(answer, reference=lambda *a, **k: None) -> Grade:
    return Grade(
        function="rnn.rnn_bptt",
        student=Answers(answer),
        reference=lambda name: reference,
        tolerances=TOLERANCES,
        forbidden_match=lambda op: None,
    )


def x() -> torch.Tensor:
    return torch.arange(6, dtype=torch.float64).reshape(2, 3)


# --- one call, one value --------------------------------------------------------------------------


def test_a_right_answer_passes_and_never_builds_the_mistakes():
    built = []
    grade = make_grade(lambda t: t * 2, reference=lambda t: t * 2)
    value = grade.check(x(), case="B=2", mistakes=lambda t: built.append(t) or [])
    assert torch.equal(value, x() * 2) and built == []


def test_a_wrong_value_says_the_case_the_place_and_how_far_off_and_names_the_mistake():
    grade = make_grade(lambda t: t * 3, reference=lambda t: t * 2)
    with pytest.raises(GradeFailure) as info:
        grade.check(x(), case=Case(None, B=2, T=3), mistakes=from_table([("tripled", lambda t: t * 3, "double it.")]))
    failure = info.value
    assert failure.message.startswith("rnn.rnn_bptt, case B=2, T=3: output: 5 of 6 values out of tolerance")
    assert "max abs error 5" in failure.message and "index (1, 2)" in failure.message
    assert failure.hint == "tripled: double it." and failure.rule == ""
    assert failure.details["case"] == "B=2, T=3" and failure.details["out_of_tolerance"] == "5/6"


def test_a_mistake_that_changes_the_shape_is_named_by_the_shape_gate_too():
    grade = make_grade(lambda t: t.T.clone(), reference=lambda t: t)
    mistakes = from_table([("transposed", lambda t: t.T, "keep the layout."), ("never", lambda t: t + 1, "")])
    with pytest.raises(GradeFailure) as info:
        grade.check(x(), case="c", mistakes=mistakes)
    assert info.value.rule == "shape/dtype/device" and "has shape (3, 2), expected (2, 3)" in info.value.message
    assert info.value.hint == "transposed: keep the layout."


def test_a_variant_that_cannot_run_names_nothing_and_a_broken_source_is_kept_for_the_instructor():
    # an answer with no structure to name either (t + 1 would be named: a constant offset)
    grade = make_grade(lambda t: t.sin() + t, reference=lambda t: t)
    with pytest.raises(GradeFailure) as info:
        grade.check(x(), case="c", mistakes=from_table([("impossible", lambda t: t @ t, "")]))
    assert info.value.hint == ""
    with pytest.raises(GradeFailure) as info:
        grade.check(x(), case="c", mistakes=lambda t: 1 / 0)
    assert info.value.hint == "" and "ZeroDivisionError" in info.value.details["mistakes_error"]


def test_a_mistake_with_its_own_tolerance():
    """'Right to float32 accuracy only' is the right answer matched within float32's tolerance."""
    grade = make_grade(lambda t: t * (1 + 1e-6), reference=lambda t: t)
    f32 = Mistake("computed in float32", x(), "compute in float64.", tol=TOLERANCES["float32"])
    with pytest.raises(GradeFailure) as info:
        grade.check(x(), case="c", mistakes=[Mistake("other", x() * 2, ""), f32])
    assert info.value.hint.startswith("computed in float32")


# --- values the grader built, tuple parts, partial credit ----------------------------------------------


def test_values_the_grader_built_from_several_calls():
    grade = make_grade(lambda t: t)
    built = [1.0, x()]
    assert grade.check(value=built, expected=[1.0, x()], case="chain") is built
    with pytest.raises(GradeFailure, match=r"case chain, after step 2: steps\[1\]: 6 of 6 values"):
        grade.check(value=[x(), x() + 1], expected=[x(), x()], case="chain, after step 2", what="steps")
    with pytest.raises(TypeError):
        grade.check(x(), value=x(), expected=x(), case="c")  # a built value takes no call arguments


def _bptt(loss_offset=0.0, w_hh_offset=0.0, keys=("W_hh", "b_h")):
    grads = {"W_hh": x() + w_hh_offset, "b_h": torch.ones(3, dtype=torch.float64)}
    return torch.tensor(2.0, dtype=torch.float64) + loss_offset, {k: grads[k] for k in keys}


def test_named_parts_earn_partial_credit_and_the_feedback_names_the_part():
    grade = make_grade(lambda: _bptt(w_hh_offset=1.0), reference=lambda: _bptt())
    with pytest.raises(GradeFailure) as info:
        grade.check(case="c", returns=("loss", "grads"), partial=True)
    assert "grads['W_hh']: 6 of 6 values" in info.value.message
    assert "(2 of 3 parts right: partial credit)" in info.value.message
    assert grade.fraction == pytest.approx(2 / 3)
    only_loss = make_grade(lambda: _bptt(w_hh_offset=1.0), reference=lambda: _bptt())
    only_loss.check(case="c", returns=("loss", "grads"), partial=True, only=("loss",))
    assert only_loss.fraction is None


def test_a_gate_in_any_part_fails_the_whole_test_and_a_missing_key_names_its_mistake():
    grade = make_grade(lambda: _bptt(loss_offset=1.0, keys=("W_hh",)), reference=lambda: _bptt())
    no_bias = Mistake("bias gradient missing", _bptt(keys=("W_hh",)), "b_h has a gradient too.")
    with pytest.raises(GradeFailure) as info:
        grade.check(case="c", returns=("loss", "grads"), partial=True, mistakes=[no_bias])
    assert info.value.rule == "shape/dtype/device" and "grads keys differ: missing ['b_h']" in info.value.message
    assert info.value.hint.startswith("bias gradient missing") and grade.fraction is None


def test_the_arity_gate_reads_nested_names():
    grade = make_grade(lambda: (x(), x()), reference=lambda: (x(), (x(), x())))
    with pytest.raises(GradeFailure) as info:
        grade.check(case="c", returns=("hs", ("h_T", "c_T")))
    assert info.value.message == (
        "rnn.rnn_bptt should return a tuple (hs, (h_T, c_T)); its item 1 should be the tuple (h_T, c_T), got a Tensor"
    )
    grade = make_grade(lambda: (x(), (x(), x() + 1)), reference=lambda: (x(), (x(), x())))
    with pytest.raises(GradeFailure, match=r"case c: c_T: 6 of 6 values out of tolerance"):
        grade.check(case="c", returns=("hs", ("h_T", "c_T")))


# --- Case -------------------------------------------------------------------------------------------


def test_a_case_draws_its_inputs_from_its_sizes_and_names_itself():
    case = Case(
        Make(torch.Generator().manual_seed(0), torch.device("cpu")), B=3, T=5, shape=(2, 4), dtype=torch.float32
    )
    same = Make(torch.Generator().manual_seed(0), torch.device("cpu"))
    h = case.randn("B", "T", 7)
    assert h.shape == (3, 5, 7) and h.dtype == torch.float32
    assert torch.equal(h, same.randn(3, 5, 7, dtype=torch.float32))  # the same draws as make's, in order
    assert case.randn("shape", dtype=torch.float64).shape == (2, 4)
    assert case.randint("T", "B").shape == (3,) and int(case.randint("T", "B").max()) < 5
    assert str(case.note("one row fully masked")) == "B=3, T=5, shape=(2, 4), float32, one row fully masked"
    assert case.B == 3
    with pytest.raises(AttributeError, match="no size or option 'H'"):
        case.H  # noqa: B018


# --- the marker's metadata -----------------------------------------------------------------------


class Marker:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


@pytest.mark.parametrize(
    "marker, problem",
    [
        (Marker("rnn.rnn_cell", weight=2), "needs title="),
        (Marker("rnn.rnn_cell", title="t", weight=0), "weight must be a positive number"),
        (Marker("rnn.rnn_cell", title="t", visibility="soon"), "visibility must be one of"),
        (Marker("rnn.rnn_cell", title="t", points=2), "unknown keyword(s) points"),
        (Marker(title="t"), "one positional argument"),
        (Marker("rnn.rnn_magic", title="t"), "'rnn.rnn_magic' is not a contract function"),
    ],
)
def test_a_bad_marker_is_refused_with_the_reason(marker, problem):
    assert problem in plugin.marker_problem(marker)
    assert plugin.marker_problem(Marker("rnn.rnn_cell", title="t", weight=0.5, visibility="hidden")) is None


def test_a_markers_visibility_reaches_the_report_and_a_config_pattern_overrides_it():
    config = load_config()
    records = [
        plugin.TestRecord("a", "optimizers.sgd", "shown", 1.0, False, passed=True),
        plugin.TestRecord("b", "optimizers.sgd", "held back", 1.0, False, visibility="after_due_date", passed=True),
    ]
    shown = {t.name: t.visibility for t in score_records(records, config)}
    assert shown == {"optimizers.sgd: shown": "visible", "optimizers.sgd: held back": "after_due_date"}
    raw = copy.deepcopy(config.raw)
    raw["functions"]["optimizers.sgd"] = {"points": 2, "test_visibility": {"held*": "hidden"}}
    overridden = {t.name: t.visibility for t in score_records(records, parse_config(raw))}
    assert overridden["optimizers.sgd: held back"] == "hidden"


def test_a_visibility_pattern_that_matches_no_test_is_refused():
    raw = copy.deepcopy(load_config().raw)
    raw["functions"]["optimizers.sgd"] = {"points": 2, "test_visibility": {"*lr=0.5*": "hidden"}}
    with pytest.raises(ConfigError, match=r"optimizers\.sgd\.test_visibility\['\*lr=0\.5\*'\]: matches no grader test"):
        check_test_patterns(parse_config(raw), {"optimizers.sgd": ["matches torch.optim.SGD, 5 steps, lr=0.3"]})


def test_two_tests_of_one_function_with_one_title_stop_the_collection(tmp_path):
    from seqlab.grader_index import GraderCollectionError, collect_grader_tests

    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    grades: the function graded\n")
    (tmp_path / "test_twice.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.grades('rnn.rnn_cell', title='same')\ndef test_a(): pass\n\n"
        "@pytest.mark.grades('rnn.rnn_cell', title='same')\ndef test_b(): pass\n"
    )
    with pytest.raises(GraderCollectionError, match=r"another test of rnn\.rnn_cell is titled 'same'"):
        collect_grader_tests(tmp_path)
