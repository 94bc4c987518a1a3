"""End-to-end grading: references score 100% whatever the seed, stubs score 0 with "not
implemented" everywhere, scores are reproducible, and a broken module costs only its own part.
Both runners are exercised. The reports of a grading are tested in tests/reports/."""

from __future__ import annotations

import json
import shutil

import pytest

from seqlab import contract
from seqlab.cli import main
from seqlab.config import course_figures, load_config
from seqlab.grading import grade_submission, grading_settings
from tests._helpers import make_buggy_submission
from tests.mutants import ROOT, make_submission


# Function-scoped: a submission is a few copied files, and tests that share no module-scoped
# fixture are spread over the workers one by one (tests/conftest.py).
@pytest.fixture
def reference_submission(tmp_path):
    return make_submission(tmp_path / "reference")


@pytest.fixture
def stub_submission(tmp_path):
    shutil.copytree(ROOT / "exercises", tmp_path / "stubs" / "exercises")
    return tmp_path / "stubs"


@pytest.fixture
def buggy_submission(tmp_path):
    """Three wrong functions in three modules."""
    return make_buggy_submission(tmp_path / "buggy")


@pytest.mark.slow
@pytest.mark.bank  # twenty sandboxed gradings: make test-banks
def test_reference_scores_full_marks_with_twenty_fresh_seeds(reference_submission):
    """Fresh seeds (none given): 20 runs, always 100%; seeds differ between runs."""
    seeds = set()
    config = load_config()  # read once for the 20 gradings (frozen): each would re-read the same YAML
    for _ in range(20):
        result = grade_submission(reference_submission, grading_settings(isolated=False, config=config))
        failed = [(t.name, t.output[:200]) for t in result.tests if t.status != "passed"]
        assert not failed and result.percent == 100.0, (result.seed, failed[:3])
        seeds.add(result.seed)
    assert len(seeds) >= 19


def test_reference_full_marks_isolated(reference_submission):
    result = grade_submission(reference_submission, grading_settings(isolated=True, seed=123))
    assert result.percent == 100.0, [(t.name, t.output[:200]) for t in result.tests if t.status != "passed"][:5]
    assert set(result.by_function()) == set(contract.EXERCISES)  # the tests grade without the labs


@pytest.mark.parametrize("isolated", [False, True], ids=["in-process", "isolated"])
def test_stubs_score_zero_with_not_implemented_everywhere(stub_submission, isolated):
    result = grade_submission(stub_submission, grading_settings(isolated=isolated, seed=3))
    assert result.score == 0 and result.max_score == pytest.approx(course_figures().exercise_points)
    for test in result.tests:
        assert "not implemented" in test.output, (test.name, test.output)
    assert set(result.by_function()) == set(contract.EXERCISES)  # the tests grade without the labs


# Two gradings in `make test` catch state one grading leaves to the next; the twenty of the
# original acceptance (0.9 s each) run with the banks, where repetitions belong.
@pytest.mark.slow
@pytest.mark.parametrize("gradings", [2, pytest.param(20, marks=pytest.mark.bank)])
def test_buggy_submission_scores_are_reproducible(buggy_submission, gradings):
    """Gradings with one seed give identical per-test scores; the bugs cost their functions only."""
    config = load_config()  # read once for all the gradings (frozen): each would re-read the same YAML
    first = grade_submission(buggy_submission, grading_settings(isolated=False, seed=99, config=config))
    scores = [t.score for t in first.tests]
    for _ in range(gradings - 1):
        again = grade_submission(buggy_submission, grading_settings(isolated=False, seed=99, config=config))
        assert [t.score for t in again.tests] == scores
    bugs = set(buggy_submission.joinpath("bugs.txt").read_text().split())
    lost = {f for f, (s, m) in first.by_function().items() if s < m}
    assert lost == bugs


def test_broken_and_missing_modules_cost_only_their_part(tmp_path):
    submission = make_submission(tmp_path / "sub")
    (submission / "exercises" / "rnn.py").write_text("def rnn_cell(:\n")  # SyntaxError
    (submission / "exercises" / "positional.py").unlink()  # missing module
    (submission / "exercises" / "lstm_gru.py").write_text("import no_such_package\n")
    text = (submission / "exercises" / "optimizers.py").read_text()
    (submission / "exercises" / "optimizers.py").write_text(text.replace("def adagrad(", "def adagrad_renamed("))
    (submission / "exercises" / "attention.py").write_text(  # transformer imports from it
        (submission / "exercises" / "attention.py").read_text() + "\nraise RuntimeError('oops at import')\n"
    )
    result = grade_submission(submission, grading_settings(isolated=True, seed=4))
    scores = result.by_function()
    for qualname, (score, max_score) in scores.items():
        module = qualname.split(".")[0]
        broken = module in ("rnn", "positional", "lstm_gru", "attention") or qualname == "optimizers.adagrad"
        assert (score == 0) if broken else (score == max_score), (qualname, score, max_score)
    outputs = {t.function: t.output for t in result.tests}
    assert "SyntaxError" in outputs["rnn.rnn_cell"] and "line 1" in outputs["rnn.rnn_cell"]
    assert "exercises/positional.py is missing" in outputs["positional.embed_tokens"]
    # outside the language subset: said once, at the top of the report, and pointed at per test
    assert "the report's first lines say where" in outputs["lstm_gru.gru_cell"]
    assert any("no_such_package" in e and "line 1" in e for e in result.errors), result.errors
    assert "no function adagrad()" in outputs["optimizers.adagrad"]
    assert "oops at import" in outputs["attention.causal_mask"]
    assert any("rnn" in e for e in result.errors)


def _seqlab(capsys, *args) -> tuple[int, str, str]:
    """``seqlab ARGS`` as a user runs it, in this process (the console script is ``sys.exit(main())``):
    the exit code and the text are the contract."""
    code = main([str(a) for a in args])
    output = capsys.readouterr()
    return code, output.out, output.err


@pytest.mark.slow
def test_grade_command_writes_reports_and_exits_zero(buggy_submission, tmp_path, capsys):
    out = tmp_path / "out"
    common = ("grade", buggy_submission, "--out", out, "--seed", "1", "--in-process")
    code, stdout, stderr = _seqlab(capsys, *common, "--only", "optimizers,positional")
    assert code == 0, stderr
    assert {"results.json", "junit.xml", "summary.md", "report.html"} <= {p.name for p in out.iterdir()}
    assert "report.html" in stdout
    code, _, stderr = _seqlab(capsys, *common, "--only", "optimizers", "--fail-under", "99.9")
    assert code == 1 and "fail-under" in stderr
    code, _, stderr = _seqlab(capsys, "grade", tmp_path / "nope")
    assert code == 2 and "nope: does not exist" in stderr and "Traceback" not in stderr


def test_grade_command_carries_the_sandbox_it_resolved_and_its_reason(reference_submission, tmp_path, capsys):
    """The sandbox is resolved once, by the command: the reason there is none reaches the reports
    as it was found (never as "--sandbox none was asked for"), as a notice, never as an error."""
    from unittest import mock

    with mock.patch("seqlab.student.sandbox.probe", return_value="bwrap is missing in this test"):
        code, stdout, stderr = _seqlab(
            capsys, "grade", reference_submission, "--out", tmp_path / "out", "--only", "attention.causal_mask"
        )
    assert code == 0, stderr
    assert "WARNING: not sandboxed: bwrap is missing in this test" in stderr
    assert "notice: not sandboxed: bwrap is missing in this test" in stdout and "error:" not in stdout
    saved = json.loads((tmp_path / "out" / "seqlab_result.json").read_text())
    assert saved["notices"][0].startswith("not sandboxed: bwrap is missing in this test") and not saved["errors"]
    output = json.loads((tmp_path / "out" / "results.json").read_text())["output"]
    assert "notice: not sandboxed: bwrap is missing" in output and "error:" not in output
    assert "--sandbox none" not in output
